// Chapter 07's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include <string>
#include <type_traits>

#include "07_two_pass/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch07 {

template <class Policy, class Op>
std::size_t sum_depth(std::size_t n) {
  using Source = Array<typename Op::In, typename Policy::Load>;
  return two_pass_depth(n, pass1_blocks<Op, Policy, Source>(n), unroll_of<Policy, Source, Op>(), Source::kCount);
}

// The deepest plan of any float type: 16-bit inputs pack 8 elements per vector, so they get the
// fewest blocks and the longest per-thread chains for a given n.
template <class Policy>
std::size_t deepest_sum_depth(std::size_t n) {
  return std::max(sum_depth<Policy, red::Sum<float>>(n), sum_depth<Policy, red::Sum<__half>>(n));
}

// Whether a policy's loads carry an L2 prefetch hint (variants.cuh has the one that does).
template <class Load>
inline constexpr bool prefetches_l2 = false;

// The chapter under a policy: chapter() is the lesson's (Tuning); the others (variants.cuh, each
// with a name()) exist for the benchmark, each taking out or changing one choice, and for the
// tests that hold them to the same answers.
template <class Policy>
std::string kernel_name() {
  if constexpr (std::is_same_v<Policy, Tuning>)
    return "reduce_two_pass";
  else
    return "reduce_two_pass_" + Policy::name();
}

template <class Policy>
const red::Chapter& chapter_with() {
  constexpr bool kLesson = std::is_same_v<Policy, Tuning>;
  using F32 = Array<float, typename Policy::Load>;
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<red::AllOps, red::AllTypes>(
          "07_two_pass",
          "fixed grid of resident blocks, partials in scratch, one-block second pass: deterministic; 16-byte "
          "vector loads",
          [](auto op) {
            using Op = decltype(op);
            return red::Launcher{&scratch_bytes<Op, Policy>, &launch<Op, Policy>};
          },
          deepest_sum_depth<Policy>, kernel_name<Policy>()),
      {kLesson ? "" : "reduce_two_pass",
       {{"fixed_grid", Policy::kFixedGrid},
        {"vector_bytes", sizeof(typename F32::Loaded)},
        {"unroll", unroll_of<Policy, F32>()},  // the f32 input's: vectors in flight per thread
        {"early_launch", Policy::kEarlyLaunch},
        {"l2_prefetch", prefetches_l2<typename Policy::Load>}}});
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with<Tuning>(); }

}  // namespace ch07
