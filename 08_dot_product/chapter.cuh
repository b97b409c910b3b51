// Chapter 08's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include "08_dot_product/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch08 {

using SupportedOps = red::Ops<red::Dot>;
using SupportedTypes = red::Types<float, __half, __nv_bfloat16>;

enum class Step { shared, coarsened, fma, two_pass };

template <class T>
std::size_t two_pass_depth(std::size_t n) {
  using Plan = Products<T>;
  return ch07::two_pass_depth(n, ch07::pass1_blocks<DotSum, ch07::Tuning, Plan>(n),
                              ch07::unroll_of<ch07::Tuning, Plan>(), Plan::kCount);
}

inline std::size_t depth_of(Step step, std::size_t n) {
  switch (step) {
    case Step::shared:
      return red::multipass_depth(n, kTile);
    case Step::coarsened:
    case Step::fma:
      return 2 * kCoarsen + 8 + red::ceil_div(n, 2 * kCoarsen * kBlock);
    case Step::two_pass:
      // The widest per-thread chain of the three types: 16-bit vectors hold 8 elements.
      return std::max(two_pass_depth<float>(n), two_pass_depth<__half>(n));
  }
  return n;
}

template <Step kStep, class T>
std::size_t scratch_bytes(std::size_t n) {
  if constexpr (kStep == Step::shared) return SharedScratch<T>(nullptr, n).bytes;
  if constexpr (kStep == Step::two_pass) return two_pass_scratch<T>(n);
  return 0;
}

template <Step kStep, class T>
void launch(const red::ReduceCall& c) {
  if (c.n > 0 && c.input2 == nullptr) throw std::invalid_argument("08_dot_product: no second vector");
  if constexpr (kStep == Step::shared) launch_shared<T>(c);
  if constexpr (kStep == Step::coarsened) launch_coarsened<T, false>(c);
  if constexpr (kStep == Step::fma) launch_coarsened<T, true>(c);
  if constexpr (kStep == Step::two_pass) launch_two_pass<T>(c);
}

template <Step kStep>
const red::Chapter& chapter_step() {
  static const char* names[] = {"dot_shared", "dot_coarsened", "dot_fma", "dot_two_pass"};
  static const char* summaries[] = {"03's shared-memory tree with the product in the load; multi-pass",
                                    "05's register accumulator (rounded product, rounded add) and one atomic per block",
                                    "05's register accumulator with fmaf and one atomic per block",
                                    "07's fixed grid, 16-byte vectors of both inputs, FMA, two deterministic passes"};
  static const red::Chapter ch = red::make_chapter<SupportedOps, SupportedTypes>(
      "08_dot_product", summaries[static_cast<int>(kStep)],
      [](auto op) {
        using T = typename decltype(op)::In;
        return red::Launcher{&scratch_bytes<kStep, T>, &launch<kStep, T>};
      },
      [](std::size_t n) { return depth_of(kStep, n); }, names[static_cast<int>(kStep)]);
  static const red::Chapter with_atomics =
      kStep == Step::coarsened || kStep == Step::fma
          ? red::with_global_float_atomics(ch, [](std::size_t n) { return red::ceil_div(n, 2 * kCoarsen * kBlock); })
          : ch;
  // The steps in the lesson's order, for the tables.
  static const red::Chapter reported =
      red::with_bench_info(with_atomics, {"", {{"step", 1 + static_cast<int>(kStep)}}});
  return reported;
}

inline const red::Chapter& chapter() { return chapter_step<Step::two_pass>(); }

}  // namespace ch08
