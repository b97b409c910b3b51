// Chapter 07's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "07_two_pass/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch07 {

// The longest chain of additions for n elements on a grid of `blocks` pass-1 blocks.
template <class Policy, class Op>
std::size_t sum_depth_on(std::size_t n, unsigned blocks) {
  using Source = Array<typename Op::In, typename Policy::Load>;
  return two_pass_depth(n, blocks, unroll_of<Policy, Source, Op>(), Source::kCount);
}
template <class Policy, class Op>
std::size_t sum_depth(std::size_t n) {
  return sum_depth_on<Policy, Op>(n, pass1_blocks<Op, Policy, Array<typename Op::In, typename Policy::Load>>(n));
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

// What one of the chapter's kernels does, as bench.json reports it beside its loads: the lesson's
// grid and launch, which a variant changes.
struct Settings {
  bool fixed_grid = true;    // as many blocks as the GPU holds at once, no more
  bool early_launch = true;  // pass 2 launched before pass 1 ends (sm_90+)
};

// The chapter with one of its kernels, named `kernel`, reading with a loads policy: launcher_of(op)
// gives its launchers for an operator, sum_depth(n) its deepest chain of additions.
template <class Policy, class LauncherOf>
red::Chapter two_pass_chapter(const std::string& kernel, LauncherOf launcher_of,
                              std::function<std::size_t(std::size_t)> sum_depth, Settings s) {
  using F32 = Array<float, typename Policy::Load>;
  return red::with_bench_info(
      red::make_chapter<red::AllOps, red::AllTypes>(
          "07_two_pass",
          "fixed grid of resident blocks, partials in scratch, one-block second pass: deterministic; 16-byte "
          "vector loads",
          launcher_of, std::move(sum_depth), kernel),
      {kernel == "reduce_two_pass" ? "" : "reduce_two_pass",
       {{"fixed_grid", s.fixed_grid},
        {"vector_bytes", sizeof(typename F32::Loaded)},
        {"unroll", unroll_of<Policy, F32>()},  // the f32 input's: vectors in flight per thread
        {"early_launch", s.early_launch},
        {"l2_prefetch", prefetches_l2<typename Policy::Load>}}});
}

// The chapter reading with a loads policy: chapter() is the lesson's (Tuning); the others
// (variants.cuh, each with a name()) exist for the benchmark, each changing how pass 1 reads, and
// for the tests that hold them to the same answers.
template <class Policy>
std::string kernel_name() {
  if constexpr (std::is_same_v<Policy, Tuning>)
    return "reduce_two_pass";
  else
    return "reduce_two_pass_" + Policy::name();
}

template <class Policy>
const red::Chapter& chapter_with() {
  static const red::Chapter ch = two_pass_chapter<Policy>(
      kernel_name<Policy>(),
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&scratch_bytes<Op, Policy>, &launch<Op, Policy>};
      },
      deepest_sum_depth<Policy>, {});
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with<Tuning>(); }

}  // namespace ch07
