// Pass 1 of chapters 07 (every type's sum), 08 (the dot products) and 10 (every type's sum), and
// chapter 12's tuned segments kernel on 16-bit inputs, compiled to sm_90 SASS for
// scripts/sass_loads.py: the ctest entry sass_loads checks that each main loop keeps its unroll of
// 16-byte loads in flight, and that 12's window loads fly while the window before is finished
// (CMakeLists.txt beside this file).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "08_dot_product/reduce.cuh"
#include "10_single_pass/reduce.cuh"
#include "12_segmented/variants.cuh"

namespace {

template <class T>
using Array = ch07::Array<T>;

template <class T>
void instantiate() {
  using Op = red::Sum<T>;
  (void)&ch07::reduce_pass1<Op, ch07::Tuning, Array<T>>;
  (void)&ch10::reduce_single_pass<Op, Array<T>>;
}

template <class T>
void instantiate_dot() {
  (void)&ch07::reduce_pass1<red::Sum<float>, ch07::Tuning, ch08::Products<T>>;
}

}  // namespace

// Referenced from a function the linker keeps, so the kernels are compiled.
void sass_probe_kernels() {
  instantiate<float>();
  instantiate<double>();
  instantiate<__half>();
  instantiate<__nv_bfloat16>();
  instantiate<std::int32_t>();
  instantiate<std::int64_t>();
  instantiate<std::uint8_t>();
  instantiate_dot<float>();
  instantiate_dot<__half>();
  instantiate_dot<__nv_bfloat16>();
  (void)&ch12::segments_balanced_tuned<red::Sum<__half>, __half, true>;
  (void)&ch12::segments_balanced_tuned<red::Sum<__nv_bfloat16>, __nv_bfloat16, true>;
}
