// Chapter 10's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include <string>

#include "10_single_pass/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch10 {

// The longest chain of additions an element goes through on a grid of `blocks` (07's loads).
template <class Op>
std::size_t sum_depth(std::size_t n, unsigned blocks) {
  using Source = SourceOf<Op>;
  return single_pass_depth(n, blocks, ch07::unroll_of<ch07::Tuning, Source, Op>(), Source::kCount);
}

// What one of the chapter's single-pass kernels does, as bench.json reports it: the lesson's
// settings, which a variant changes one or two of.
struct Settings {
  bool atomic_ref = true;  // false: the classic ticket, __threadfence() around a relaxed atomicAdd
  bool grid_sync = false;
  bool cooperative_groups = false;
  bool programmatic_launch = false;
  bool flagged_partials = true;
  std::size_t single_block_tiles = kSingleBlockTiles;
};

// The chapter with one of its single-pass kernels, named `kernel`: launcher_of(op) gives the
// kernel's launchers for an operator, blocks_of(op, n) its grid for n elements (which sets the
// error bound's depth). The deepest plan of any float type sets the bound: 16-bit inputs pack 8
// elements per vector, so they get the fewest blocks and the longest per-thread chains for a given n.
template <class LauncherOf, class BlocksOf>
red::Chapter single_pass_chapter(const std::string& kernel, const std::string& summary, LauncherOf launcher_of,
                                 BlocksOf blocks_of, Settings s) {
  const auto deepest_sum_depth = [blocks_of](std::size_t n) {
    return std::max(sum_depth<red::Sum<float>>(n, blocks_of(red::Sum<float>{}, n)),
                    sum_depth<red::Sum<__half>>(n, blocks_of(red::Sum<__half>{}, n)));
  };
  return red::with_bench_info(
      red::make_chapter<red::AllOps, red::AllTypes>("10_single_pass", summary, launcher_of, deepest_sum_depth, kernel),
      {kernel == "reduce_single_pass" ? "" : "reduce_single_pass",
       {{"atomic_ref", s.atomic_ref},
        {"grid_sync", s.grid_sync},
        {"cooperative_groups", s.cooperative_groups},
        {"programmatic_launch", s.programmatic_launch},
        {"flagged_partials", s.flagged_partials},
        {"single_block_tiles", s.single_block_tiles}}});
}

inline const red::Chapter& chapter() {
  static const red::Chapter ch = single_pass_chapter(
      "reduce_single_pass",
      "07's pass 1 in one launch: the last block to take a ticket combines the partials (acquire/release)",
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&scratch_bytes<Op>, &launch<Op>, &zeroed_scratch_bytes<Op>};
      },
      [](auto op, std::size_t n) {
        using Op = decltype(op);
        return grid_blocks<Op>(n, limits<Op>().max_blocks);
      },
      {});
  return ch;
}

}  // namespace ch10
