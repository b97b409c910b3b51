// Chapter 05's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include "05_coarsened/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch05 {

// The chapter with coarsening factor Coarsen; chapter() is the one the lesson settles on, the
// others exist for the benchmark's sweep of the factor.
template <unsigned Coarsen>
const red::Chapter& chapter_with_factor() {
  static const red::Chapter ch = red::with_bench_info(
      red::with_global_float_atomics(
          red::make_chapter<red::AllOps, red::AllTypes>(
              "05_coarsened",
              "each thread accumulates 2 x " + std::to_string(Coarsen) +
                  " elements in a register, then the block tree and one atomic",
              [](auto op) {
                return red::Launcher{&scratch_bytes<decltype(op)>, &launch<decltype(op), Coarsen>};
              },
              // a serial chain of 2 x Coarsen per thread, the 8-level tree, and the atomic chain
              [](std::size_t n) { return 2 * Coarsen + 8 + red::ceil_div(n, tile_of<Coarsen>()); },
              Coarsen == kCoarsen ? "reduce_coarsened" : "reduce_coarsened_x" + std::to_string(Coarsen)),
          [](std::size_t n) { return red::ceil_div(n, tile_of<Coarsen>()); }),  // one atomicAdd per block
      {Coarsen == kCoarsen ? "" : "reduce_coarsened", {{"coarsening", Coarsen}}});
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with_factor<kCoarsen>(); }

}  // namespace ch05
