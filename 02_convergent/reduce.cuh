// Chapter 02 - convergent tree reduction.
//
// Idea: the same in-place tree as chapter 01, but the stride halves (256, 128, ... 1) and the
// threads that work at stride s are tid < s: the active threads stay packed in the lowest warps,
// so a warp is either fully busy or fully idle until fewer than 32 threads remain.
// Cost: global traffic and barriers as in 01 (the tree still runs in place on a copy in global
// memory); what changes is divergence: 5 divergent warp-steps per block instead of 47.
#pragma once

#include "01_naive/reduce.cuh"  // ch01::launch_passes, the multi-pass launcher
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch02 {

constexpr unsigned kBlock = 256;        // threads per block
constexpr unsigned kTile = 2 * kBlock;  // elements per block: each thread starts with two

template <class Op>
__global__ void reduce_convergent(typename Op::Acc* data, std::size_t len, typename Op::Acc* partials, void* result) {
  const std::size_t base = blockIdx.x * std::size_t{kTile};
  typename Op::Acc* tile = data + base;
  const unsigned tile_len = static_cast<unsigned>(min(std::size_t{kTile}, len - base));
  const unsigned i = threadIdx.x;  // the element this thread accumulates into

  // [excerpt: tree]
  for (unsigned stride = kBlock; stride >= 1; stride /= 2) {
    // tid < stride: threads 0..stride-1 work, whole warps at a time while stride >= 32.
    // The bound check replaces the missing elements of a short last tile by "nothing to add".
    if (i < stride && i + stride < tile_len) tile[i] = Op::combine(tile[i], tile[i + stride]);
    __syncthreads();  // the next level reads what this level wrote
  }
  // [end: tree]
  if (threadIdx.x == 0) {
    if (result)
      Op::store(result, tile[0]);  // last pass: one block, one value
    else
      partials[blockIdx.x] = tile[0];
  }
}

// The launcher is chapter 01's (a copy of the input, then one pass per level of tiles), with this
// chapter's kernel; the tiles are the same size.
static_assert(kTile == ch01::kTile && kBlock == ch01::kBlock);

template <class Op>
void launch(const red::ReduceCall& c) {
  ch01::launch_passes<Op>(c, reduce_convergent<Op>);
}

template <class Op>
std::size_t scratch_bytes(std::size_t n) {
  return ch01::scratch_bytes<Op>(n);
}

}  // namespace ch02
