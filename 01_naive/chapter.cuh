// Chapter 01's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include "01_naive/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch01 {

inline const red::Chapter& chapter() {
  static const red::Chapter ch = red::make_chapter<red::AllOps, red::AllTypes>(
      "01_naive", "naive tree reduction (stride doubling, tid % stride == 0), in place on a copy in global memory",
      [](auto op) {
        return red::Launcher{&scratch_bytes<decltype(op)>, &launch<decltype(op)>};
      },
      [](std::size_t n) { return red::multipass_depth(n, kTile); }, "reduce_naive");
  return ch;
}

}  // namespace ch01
