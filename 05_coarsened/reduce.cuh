// Chapter 05 - thread coarsening: each thread accumulates many elements in registers first.
//
// Idea: chapter 04's kernel, but a thread adds 2 x kCoarsen elements (kBlock apart, so a warp's
// loads stay coalesced) into a register before the block tree starts. One block now covers
// kCoarsen times more input, so there are kCoarsen times fewer blocks, barriers and atomics, and
// every thread has several independent loads in flight to hide DRAM latency.
// Cost: the input read once, ceil(n / (512 kCoarsen)) atomics, 8 barriers per block as before.
#pragma once

#include "04_multiblock_atomic/reduce.cuh"  // ch04::atomic_combine, the same atomic step
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch05 {

constexpr unsigned kBlock = 256;  // threads per block
// Elements per thread = 2 x kCoarsen. The README's sweep over the factor on the H200 shows
// why this value (scripts/run_benchmarks.sh measures 1, 2, 4, 8, 16, 32 and 64).
constexpr unsigned kCoarsen = 16;

template <class Op, unsigned Coarsen>
__global__ void reduce_coarsened(const float* in, std::size_t n, float* result) {
  constexpr unsigned kTile = 2 * Coarsen * kBlock;
  __shared__ float tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t first = blockIdx.x * std::size_t{kTile} + tid;

  // The new step: a register accumulator over 2 x Coarsen elements. The loop is unrolled, so
  // the loads are independent and issue back to back; elements past n are simply skipped.
  float acc = Op::identity();
#pragma unroll
  for (unsigned k = 0; k < 2 * Coarsen; ++k) {
    const std::size_t i = first + std::size_t{k} * kBlock;
    if (i < n) acc = Op::combine(acc, in[i]);
  }
  tree[tid] = acc;

  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
  }
  if (tid == 0) ch04::atomic_combine<Op>(result, tree[0]);
}

template <unsigned Coarsen>
constexpr unsigned tile_of() {
  return 2 * Coarsen * kBlock;
}

template <class Op, unsigned Coarsen = kCoarsen>
void launch(const red::ReduceCall& c) {
  red::launch_store_identity<Op>(c.output, c.stream);  // before any block's atomic, same stream
  if (c.n == 0) return;
  reduce_coarsened<Op, Coarsen><<<red::ceil_div(c.n, tile_of<Coarsen>()), kBlock, 0, c.stream>>>(
      static_cast<const float*>(c.input), c.n, static_cast<float*>(c.output));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch05
