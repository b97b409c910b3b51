// Chapter 01 - naive tree reduction.
//
// Idea: a block reduces its tile of 512 elements in a binary tree whose stride doubles each
// step (1, 2, 4, ... 256); the threads that work at stride s are those with tid % s == 0.
// Cost: the tree runs in global memory, in place, so the input is first copied into scratch
// (one extra read and write of all n elements) and every level reads and writes global memory.
// From stride 2 on, the working threads are spread over every warp: divergent warps.
// Larger inputs take several passes: each pass reduces tiles into per-block partials.
#pragma once

#include "chapter_builder.cuh"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch01 {

constexpr unsigned kBlock = 256;        // threads per block
constexpr unsigned kTile = 2 * kBlock;  // elements per block: each thread starts with two

template <class Op>
__global__ void reduce_naive(typename Op::Acc* data, std::size_t len, typename Op::Acc* partials, void* result) {
  const std::size_t base = blockIdx.x * std::size_t{kTile};
  typename Op::Acc* tile = data + base;
  const unsigned tile_len = static_cast<unsigned>(min(std::size_t{kTile}, len - base));
  const unsigned i = 2 * threadIdx.x;  // the element this thread accumulates into

  for (unsigned stride = 1; stride < kTile; stride *= 2) {
    // tid % stride == 0 picks every stride-th thread: at stride 2 half of each warp idles,
    // at stride 32 one thread per warp works, yet every warp still steps through the branch.
    // The bound check replaces the missing elements of a short last tile by "nothing to add".
    if (threadIdx.x % stride == 0 && i + stride < tile_len) tile[i] = Op::combine(tile[i], tile[i + stride]);
    __syncthreads();  // the next level reads what this level wrote
  }
  if (threadIdx.x == 0) {
    if (result)
      Op::store(result, tile[0]);  // last pass: one block, one value
    else
      partials[blockIdx.x] = tile[0];
  }
}

// The launcher: copy the input into scratch (common/multipass.cuh), then one reduce_naive pass per
// level of kTile-element tiles until one value is left.
template <class Op>
void launch(const red::ReduceCall& c) {
  using T = typename Op::Acc;
  red::reduce_copy_in_place<Op>(c, kTile, [&](T* src, std::size_t len, T* partials, void* result, std::size_t blocks) {
    reduce_naive<Op><<<blocks, kBlock, 0, c.stream>>>(src, len, partials, result);
    CUDA_CHECK_LAUNCH();
  });
}

inline const red::Chapter& chapter() {
  static const red::Chapter ch = red::make_chapter<red::Ops<red::Sum, red::Max, red::Min>, red::Types<float>>(
      "01_naive", "naive tree reduction (stride doubling, tid % stride == 0), in place on a copy in global memory",
      [](auto op, std::size_t n) {
        return red::InPlaceScratch<typename red::op_t<decltype(op)>::Acc>(nullptr, n, kTile).bytes;
      },
      [](auto op, const red::ReduceCall& c) { launch<red::op_t<decltype(op)>>(c); },
      [](std::size_t n) { return red::multipass_depth(n, kTile); }, "reduce_naive");
  return ch;
}

}  // namespace ch01
