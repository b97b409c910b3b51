// Chapter 09's registration: what the chapter program, the tests and the benchmark need to know
// about it (common/chapter.hpp). The lesson is reduce.cuh; a later chapter that reuses a piece of
// it includes reduce.cuh only, so this file's instantiations stay out of its programs.
#pragma once

#include "09_cub_comparison/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch09 {

inline std::string cub_kernel_name(red::Op op, red::DType t) {
  if (op == red::Op::sum && (t == red::DType::f16 || t == red::DType::bf16)) return "cub_transform_reduce";
  return "cub_" + std::string(red::name(op));
}

inline const red::Chapter& chapter() {
  static const red::Chapter ch =
      red::make_chapter<red::Ops<red::Sum, red::Max, red::Min, red::ArgMax>, red::Types<float, __half, __nv_bfloat16>>(
          "09_cub_comparison", "cub::DeviceReduce (Sum, Max, Min, ArgMax; TransformReduce for 16-bit floats)",
          [](auto op) {
            return red::Launcher{&scratch_bytes<decltype(op)>, &launch<decltype(op)>};
          },
          // CUB's order of additions is its own; n - 1 is the bound that holds for any order.
          [](std::size_t n) { return n > 0 ? n - 1 : 0; }, cub_kernel_name);
  return ch;
}

}  // namespace ch09
