// Chapter 04's inter-block step, kept in its own header because chapter 05 reuses it unchanged.
#pragma once

#include "reduce_ops.cuh"

namespace ch04 {

// Folds v into *out atomically. Sum has a native float atomicAdd; max and min do not, so they
// retry a compare-and-swap on the bits until no other block changed the value in between.
template <class Op>
__device__ void atomic_combine(float* out, float v) {
  if constexpr (Op::op == red::Op::sum) {
    atomicAdd(out, v);
  } else {
    unsigned* bits = reinterpret_cast<unsigned*>(out);
    unsigned seen = *bits;
    while (true) {
      const unsigned wanted = __float_as_uint(Op::combine(__uint_as_float(seen), v));
      if (wanted == seen) return;  // v does not change the result: no write needed
      const unsigned before = atomicCAS(bits, seen, wanted);
      if (before == seen) return;  // our value went in
      seen = before;               // another block got there first: combine with its value
    }
  }
}

}  // namespace ch04
