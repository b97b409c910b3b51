// Chapter 10's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh.
#pragma once

#include <string>
#include <type_traits>

#include "10_single_pass/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch10 {

template <class Policy, class Op>
std::size_t sum_depth(std::size_t n) {
  using Source = SourceOf<Op, Policy>;
  return single_pass_depth(n, grid_blocks<Op, Policy>(n, limits<Op, Policy>().max_blocks),
                           ch07::unroll_of<Policy, Source>(), Source::kCount);
}

// The deepest plan of any float type: 16-bit inputs pack 8 elements per vector, so they get the
// fewest blocks and the longest per-thread chains for a given n.
template <class Policy>
std::size_t deepest_sum_depth(std::size_t n) {
  return std::max(sum_depth<Policy, red::Sum<float>>(n), sum_depth<Policy, red::Sum<__half>>(n));
}

template <class Policy>
std::string kernel_name() {
  if constexpr (std::is_same_v<Policy, Tuning>)
    return "reduce_single_pass";
  else
    return "reduce_single_pass_" + Policy::name();
}

// The chapter under a policy: chapter() is the lesson's (Tuning); the others (variants.cuh) each
// change one choice.
template <class Policy>
const red::Chapter& chapter_with() {
  constexpr bool kLesson = std::is_same_v<Policy, Tuning>;
  static const red::Chapter ch = [] {
    red::Chapter c = red::with_bench_info(
        red::make_chapter<red::AllOps, red::AllTypes>(
            "10_single_pass",
            "07's pass 1 in one launch: the last block to take a ticket combines the partials (acquire/release), "
            "cooperative groups, programmatic dependent launch",
            [](auto op) {
              using Op = decltype(op);
              return red::Launcher{&scratch_bytes<Op, Policy>, &launch<Op, Policy>, &zeroed_scratch_bytes<Op, Policy>};
            },
            deepest_sum_depth<Policy>, kernel_name<Policy>()),
        {kLesson ? "" : "reduce_single_pass",
         {{"atomic_ref", Policy::kAtomicRef},
          {"grid_sync", 0},
          {"cooperative_groups", Policy::kCooperativeGroups},
          {"programmatic_launch", Policy::kProgrammaticLaunch},
          {"flagged_partials", Policy::kFlaggedPartials},
          {"single_block_tiles", Policy::kSingleBlockTiles}}});
    return c;
  }();
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with<Tuning>(); }

}  // namespace ch10
