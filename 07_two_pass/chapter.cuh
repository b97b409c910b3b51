// Chapter 07's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include <type_traits>

#include "07_two_pass/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch07 {

template <class Op, unsigned Unroll = unroll_for<typename Op::In>()>
std::size_t sum_depth(std::size_t n) {
  return n == 0 ? 0 : two_pass_depth(n, pass1_blocks<Op, Unroll>(n), Unroll, Vector<typename Op::In>::kCount);
}

// The deepest plan of any float type: 16-bit inputs pack 8 elements per vector, so they get the
// fewest blocks and the longest per-thread chains for a given n.
// Unroll = 0: each type's own (unroll_for).
template <unsigned Unroll>
std::size_t deepest_sum_depth(std::size_t n) {
  return std::max(sum_depth<red::Sum<float>, (Unroll ? Unroll : unroll_for<float>())>(n),
                  sum_depth<red::Sum<__half>, (Unroll ? Unroll : unroll_for<__half>())>(n));
}

using SupportedOps = red::Ops<red::Sum, red::Max, red::Min, red::ArgMax>;
using SupportedTypes = red::Types<float, double, __half, __nv_bfloat16, std::int32_t, long long, std::uint8_t>;

// The benchmark's name suffix of a Load policy: none for the lesson's (variants.cuh names its own).
template <class Load>
inline const char* load_suffix = "";

// chapter() is the lesson's; the other variants (variants.cuh) exist for the benchmark (early
// launch off, other unroll depths, another Load) and for the tests that hold them to the same
// answers. Unroll = 0 is the lesson's per-type choice (unroll_for); a number forces it for every
// type.
template <bool kEarlyLaunch, unsigned Unroll = 0, class Load = VectorLoad>
const red::Chapter& chapter_with() {
  constexpr bool kLesson = kEarlyLaunch && Unroll == 0 && std::is_same_v<Load, VectorLoad>;
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<SupportedOps, SupportedTypes>(
          "07_two_pass",
          "fixed grid of resident blocks, 16-byte vector loads, partials in scratch, one-block second pass; "
          "deterministic; every op and dtype",
          [](auto op) {
            using Op = decltype(op);
            constexpr unsigned U = Unroll ? Unroll : unroll_for<typename Op::In>();
            return red::Launcher{&scratch_bytes<Op, kEarlyLaunch, U, Load>, &launch<Op, kEarlyLaunch, U, Load>};
          },
          deepest_sum_depth<Unroll>,
          std::string(kEarlyLaunch ? "reduce_two_pass" : "reduce_two_pass_plain_launch") +
              (Unroll == 0 ? "" : "_unroll" + std::to_string(Unroll)) + load_suffix<Load>),
      // unroll 0: each input type's own (unroll_for)
      {kLesson ? "" : "reduce_two_pass",
       {{"early_launch", kEarlyLaunch}, {"unroll", Unroll}, {"l2_prefetch", !std::is_same_v<Load, VectorLoad>}}});
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with<true>(); }

}  // namespace ch07
