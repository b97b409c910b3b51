// Chapter 04's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include "04_multiblock_atomic/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch04 {

inline const red::Chapter& chapter() {
  static const red::Chapter ch = red::with_global_float_atomics(
      red::make_chapter<red::AllOps, red::AllTypes>(
          "04_multiblock_atomic",
          "shared-memory block tree, blocks combined with one atomic each: one launch for any n",
          [](auto op) {
            return red::Launcher{&scratch_bytes<decltype(op)>, &launch<decltype(op)>};
          },
          // The atomic sum is a chain through the result: up to one addition per block, in any order.
          [](std::size_t n) { return red::ceil_log2(std::min<std::size_t>(n, kTile)) + red::ceil_div(n, kTile); },
          "reduce_atomic"),
      [](std::size_t n) { return red::ceil_div(n, kTile); });  // one atomicAdd per block
  return ch;
}

}  // namespace ch04
