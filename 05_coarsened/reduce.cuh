// Chapter 05 - thread coarsening: each thread accumulates many elements in registers first.
//
// Idea: chapter 04's kernel, but a thread adds 2 x kCoarsen elements (kBlock apart, so a warp's
// loads stay coalesced) into a register before the block tree starts. One block now covers
// kCoarsen times more input, so there are kCoarsen times fewer blocks, barriers and atomics, and
// every thread has several independent loads in flight to hide DRAM latency.
// Cost: the input read once, ceil(n / (512 kCoarsen)) atomics, 8 barriers per block as before.
#pragma once

#include "04_multiblock_atomic/reduce.cuh"  // ch04::atomic_combine and its launcher, the same atomic step
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "reduce_ops.cuh"

namespace ch05 {

constexpr unsigned kBlock = 256;  // threads per block
// Elements per thread = 2 x kCoarsen. The README's sweep over the factor on the H200 shows
// why this value (scripts/run_benchmarks.sh measures 1, 2, 4, 8, 16, 32 and 64).
constexpr unsigned kCoarsen = 16;

template <class Op, unsigned Coarsen>
__global__ void reduce_coarsened(const typename Op::In* in, std::size_t n, ch04::Target<Op> target) {
  using Acc = typename Op::Acc;
  constexpr unsigned kTile = 2 * Coarsen * kBlock;
  __shared__ Acc tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t first = blockIdx.x * std::size_t{kTile} + tid;

  // The new step: a register accumulator over 2 x Coarsen elements. The loop is unrolled, so
  // the loads are independent and issue back to back; elements past n are simply skipped. A
  // thread's indices only grow, which lets an argmax skip the index compare (append).
  // [excerpt: load]
  Acc acc = Op::identity();
#pragma unroll
  for (unsigned k = 0; k < 2 * Coarsen; ++k) {
    const std::size_t i = first + std::size_t{k} * kBlock;
    if (i < n) acc = Op::append(acc, in[i], i);
  }
  tree[tid] = acc;
  // [end: load]

  // [excerpt: block]
  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
  }
  if (tid == 0) ch04::atomic_combine<Op>(target, tree[0]);
  // [end: block]
}

template <unsigned Coarsen>
constexpr unsigned tile_of() {
  return 2 * Coarsen * kBlock;
}

// Chapter 04's launcher (identity, the blocks' atomics, the store where needed) with this kernel.
template <class Op, unsigned Coarsen = kCoarsen>
void launch(const red::ReduceCall& c) {
  ch04::launch_with_atomics<Op>(c, [&](ch04::Target<Op> t) {
    reduce_coarsened<Op, Coarsen><<<red::ceil_div(c.n, tile_of<Coarsen>()), kBlock, 0, c.stream>>>(
        static_cast<const typename Op::In*>(c.input), c.n, t);
  });
}

template <class Op>
std::size_t scratch_bytes(std::size_t n) {
  return ch04::scratch_bytes<Op>(n);
}

}  // namespace ch05
