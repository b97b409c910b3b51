// Chapter 04 - one launch for any n: every block combines its result into the output atomically.
//
// Idea: the block reduction of chapter 03, but instead of writing a partial for another pass,
// thread 0 of each block folds its value into the single result with an atomic operation. The
// launcher first sets the result to the operator's identity, in the same stream.
// Cost: one launch (plus the identity store) instead of ceil(log_512 n) passes, no scratch, the
// input read once; in exchange ceil(n / 512) atomics on one address. A float sum with atomics
// is not deterministic: the blocks arrive in a different order on every run.
#pragma once

#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch04 {

constexpr unsigned kBlock = 256;        // threads per block
constexpr unsigned kTile = 2 * kBlock;  // elements per block: each thread loads two

// The new step: fold v into *out atomically. Sum has a native float atomicAdd; max and min do
// not, so they retry a compare-and-swap on the bits until no other block changed the value in
// between. Chapter 05 reuses it as ch04::atomic_combine.
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

template <class Op>
__global__ void reduce_atomic(const float* in, std::size_t n, float* result) {
  __shared__ float tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * std::size_t{kTile} + tid;

  float v = i < n ? in[i] : Op::identity();
  if (i + kBlock < n) v = Op::combine(v, in[i + kBlock]);
  tree[tid] = v;

  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
  }
  if (tid == 0) atomic_combine<Op>(result, tree[0]);  // the only inter-block step
}

template <class Op>
void launch(const red::ReduceCall& c) {
  // The identity must be in place before the first block's atomic: same stream, launched first.
  red::launch_store_identity<Op>(c.output, c.stream);
  if (c.n == 0) return;
  reduce_atomic<Op><<<red::ceil_div(c.n, kTile), kBlock, 0, c.stream>>>(static_cast<const float*>(c.input), c.n,
                                                                        static_cast<float*>(c.output));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch04
