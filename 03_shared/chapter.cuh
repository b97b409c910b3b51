// Chapter 03's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include "03_shared/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch03 {

inline const red::Chapter& chapter() {
  // elements_per_thread: the loads a thread has in flight at once (tools/littles_law.py, bytes in flight).
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<red::AllOps, red::AllTypes>(
          "03_shared", "first add while loading, convergent tree in shared memory; the input is read once",
          [](auto op) {
            return red::Launcher{&scratch_bytes<decltype(op)>, &launch<decltype(op)>};
          },
          [](std::size_t n) { return red::multipass_depth(n, kTile); }, "reduce_shared"),
      {"", {{"elements_per_thread", kTile / kBlock}}});
  return ch;
}

}  // namespace ch03
