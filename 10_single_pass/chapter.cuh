// Chapter 10's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include <string>
#include <type_traits>

#include "10_single_pass/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch10 {

template <class Policy, class Op>
std::size_t sum_depth(std::size_t n, unsigned max_blocks) {
  using Source = SourceOf<Op, Policy>;
  return single_pass_depth(n, grid_blocks<Op, Policy>(n, max_blocks), ch07::unroll_of<Policy, Source, Op>(),
                           Source::kCount);
}

template <class Policy>
std::string kernel_name() {
  if constexpr (std::is_same_v<Policy, Tuning>)
    return "reduce_single_pass";
  else
    return "reduce_single_pass_" + Policy::name();
}

// Whether a policy's ticket is the classic pair of fences (variants.cuh names the one that is).
template <class Policy>
inline constexpr bool fenced_ticket = false;

// What one of the chapter's ticket kernels does differently, as bench.json reports it.
struct Extras {
  bool cooperative_groups = false;
  bool programmatic_launch = false;
};

// The chapter with one of its ticket kernels, named `kernel`, under a policy: launcher_of(op) gives
// the kernel's launchers for an operator, max_blocks_of(op) its grid's limit (which sets the error
// bound's depth). The deepest plan of any float type sets the bound: 16-bit inputs pack 8 elements
// per vector, so they get the fewest blocks and the longest per-thread chains for a given n.
template <class Policy, class LauncherOf, class MaxBlocksOf>
red::Chapter ticket_chapter(const std::string& kernel, LauncherOf launcher_of, MaxBlocksOf max_blocks_of,
                            Extras extras) {
  const bool lesson = kernel == kernel_name<Tuning>();
  const auto deepest_sum_depth = [max_blocks_of](std::size_t n) {
    return std::max(sum_depth<Policy, red::Sum<float>>(n, max_blocks_of(red::Sum<float>{})),
                    sum_depth<Policy, red::Sum<__half>>(n, max_blocks_of(red::Sum<__half>{})));
  };
  std::string summary =
      "07's pass 1 in one launch: the last block to take a ticket combines the partials (acquire/release)";
  if (extras.cooperative_groups) summary += "; the block's tree with cooperative groups";
  if (extras.programmatic_launch) summary += "; programmatic dependent launch";
  return red::with_bench_info(
      red::make_chapter<red::AllOps, red::AllTypes>("10_single_pass", summary, launcher_of, deepest_sum_depth, kernel),
      {lesson ? "" : kernel_name<Tuning>(),
       {{"atomic_ref", !fenced_ticket<Policy>},
        {"grid_sync", 0},
        {"cooperative_groups", extras.cooperative_groups},
        {"programmatic_launch", extras.programmatic_launch},
        {"flagged_partials", Policy::kFlaggedPartials},
        {"single_block_tiles", Policy::kSingleBlockTiles}}});
}

// The lesson's kernel under a policy: chapter() is the lesson's (Tuning); the others (variants.cuh)
// each change one choice.
template <class Policy>
const red::Chapter& chapter_with() {
  static const red::Chapter ch = ticket_chapter<Policy>(
      kernel_name<Policy>(),
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&scratch_bytes<Op, Policy>, &launch<Op, Policy>, &zeroed_scratch_bytes<Op, Policy>};
      },
      [](auto op) { return limits<decltype(op), Policy>().max_blocks; }, {});
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with<Tuning>(); }

}  // namespace ch10
