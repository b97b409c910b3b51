// Chapter 09's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include <type_traits>

#include "09_cub_comparison/reduce.cuh"
#include "chapter_builder.cuh"
#include "cub_order.hpp"

namespace ch09 {

inline std::string cub_kernel_name(red::Op op, red::DType t) {
  if (op == red::Op::sum && (t == red::DType::f16 || t == red::DType::bf16)) return "cub_transform_reduce";
  return "cub_" + std::string(red::name(op));
}

// kBuiltin = false: the chapter (max, min, argmax through Reduce with this project's operators).
// true: cub::DeviceReduce::Max/Min/ArgMax as shipped, for the tests of their semantics and for
// the benchmark, which measures what the project's semantics cost.
template <bool kBuiltin>
const red::Chapter& chapter_with() {
  using Ops = std::conditional_t<kBuiltin, red::Ops<red::Max, red::Min, red::ArgMax>,
                                 red::Ops<red::Sum, red::Max, red::Min, red::ArgMax>>;
  static const red::Chapter ch = red::make_chapter<Ops, red::Types<float, __half, __nv_bfloat16>>(
      "09_cub_comparison",
      kBuiltin ? "cub::DeviceReduce::Max, Min, ArgMax as shipped (their own -inf and NaN semantics)"
               : "cub::DeviceReduce (Sum; TransformReduce for 16-bit sums; Reduce with this project's max, min, "
                 "argmax)",
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&scratch_bytes<Op, kBuiltin>, &launch<Op, kBuiltin>};
      },
      // CUB's order of additions, bounded from its installed sources (common/cub_order.hpp).
      red::cub_sum_depth,
      [](red::Op op, red::DType t) { return cub_kernel_name(op, t) + (kBuiltin ? "_builtin" : ""); });
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with<false>(); }

// CUB's own Max, Min and ArgMax as shipped.
inline const red::Chapter& builtin() { return chapter_with<true>(); }

}  // namespace ch09
