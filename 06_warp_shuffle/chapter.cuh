// Chapter 06's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include "06_warp_shuffle/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch06 {

// Longest chain of additions: 2 x kCoarsen in a thread's register, 5 shuffle levels in a warp,
// ceil(log2(warps)) across the warps, and the atomic chain through the result.
template <unsigned Block>
std::size_t sum_depth(std::size_t n) {
  return 2 * kCoarsen + 5 + red::ceil_log2(red::ceil_div(Block, kWarp)) + red::ceil_div(n, tile_of<Block>());
}

// The chapter with Block threads per block; chapter() is the lesson's, the others exist for the
// tests of block sizes that are not multiples of 32.
template <unsigned Block>
const red::Chapter& chapter_with_block() {
  static const red::Chapter ch = red::with_bench_info(
      red::with_global_float_atomics(
          red::make_chapter<red::AllOps, red::AllTypes>(
              "06_warp_shuffle",
              "05's coarsened loads and one atomic per block; warp shuffles and one value per warp in shared memory (" +
                  std::to_string(Block) + " threads, 2 barriers per block)",
              [](auto op) {
                return red::Launcher{&scratch_bytes<decltype(op)>, &launch<decltype(op), Block>};
              },
              sum_depth<Block>,
              Block == kBlock ? "reduce_warp_shuffle" : "reduce_warp_shuffle_b" + std::to_string(Block)),
          [](std::size_t n) { return red::ceil_div(n, tile_of<Block>()); }),  // one atomicAdd per block
      {Block == kBlock ? "" : "reduce_warp_shuffle", {{"block", Block}}});
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with_block<kBlock>(); }

}  // namespace ch06
