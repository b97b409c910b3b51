// Chapter 03 - tree reduction in shared memory.
//
// Idea: each thread loads two elements and adds them on the way into shared memory; the
// convergent tree of chapter 02 then runs in shared memory, and only the block's result goes
// back to global memory.
// Cost: the input is read exactly once and nothing is written but one partial per block: no copy
// of the input, no global traffic inside the tree. Barriers and divergence as in 02.
#pragma once

#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch03 {

constexpr unsigned kBlock = 256;        // threads per block
constexpr unsigned kTile = 2 * kBlock;  // elements per block: each thread loads two

// Src: the input on the first pass, the previous pass's partials (accumulators) on later ones;
// red::read turns either into an accumulator.
template <class Op, class Src>
__global__ void reduce_shared(const Src* in, std::size_t len, typename Op::Acc* partials, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * std::size_t{kTile} + tid;

  // [excerpt: load-and-tree]
  // The first level of the tree happens during the load; missing elements are the identity.
  Acc v = i < len ? red::read<Op>(in, i) : Op::identity();
  if (i + kBlock < len) v = Op::combine(v, red::read<Op>(in, i + kBlock));
  tree[tid] = v;

  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();  // the writes of the previous level are visible to the whole block
    if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
  }
  // [end: load-and-tree]
  if (tid == 0) {
    if (result)
      Op::store(result, tree[0]);  // last pass: one block, one value
    else
      partials[blockIdx.x] = tree[0];
  }
}

// Scratch: the partials of the first two passes (later passes ping-pong between them).
template <class Op>
struct Scratch {
  typename Op::Acc* partials_a;
  typename Op::Acc* partials_b;
  Scratch(void* base, std::size_t n) {
    red::ScratchCarver carve(base);
    partials_a = carve.take<typename Op::Acc>(red::ceil_div(n, kTile));
    partials_b = carve.take<typename Op::Acc>(red::ceil_div(n, std::size_t{kTile} * kTile));
    bytes = carve.bytes();
  }
  std::size_t bytes;
};

template <class Op>
void launch(const red::ReduceCall& c) {
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  Scratch<Op> s(c.scratch, c.n);
  const auto pass = [&](const auto* src, std::size_t len, typename Op::Acc* partials, void* result, std::size_t blocks) {
    reduce_shared<Op><<<blocks, kBlock, 0, c.stream>>>(src, len, partials, result);
    CUDA_CHECK_LAUNCH();
  };
  // The same pass over the input (pass 1) and over the partials (the later passes).
  red::run_multipass(static_cast<const typename Op::In*>(c.input), c.n, kTile, s.partials_a, s.partials_b, c.output,
                     pass, pass);
}

template <class Op>
std::size_t scratch_bytes(std::size_t n) {
  return Scratch<Op>(nullptr, n).bytes;
}

}  // namespace ch03
