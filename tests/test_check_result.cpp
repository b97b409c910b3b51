// check_result (runner.hpp): the losses to underflow it allows, computed without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "runner.hpp"

using namespace red;

namespace {
Chapter fake(bool atomics) {
  Chapter ch{"00_fake",
             "",
             all_of({Op::sum, Op::dot}, {DType::f32, DType::f64}),
             [](Op, DType, std::size_t) { return std::size_t{0}; },
             [](const ReduceCall&) {},
             [](std::size_t) { return std::size_t{4}; },
             [](Op, DType) { return std::string("none"); },
             {},
             {},
             {},
             {}};
  if (atomics) ch = with_global_float_atomics(ch, [](std::size_t n) { return n / 100; });
  return ch;
}
}  // namespace

TEST_CASE("check_result: 2 FLT_MIN per global f32 atomic, 2^-150 per dot-product element") {
  const double flt_min = std::numeric_limits<float>::min();
  Reference ref;  // a sum of subnormal-sized partials, all flushed: the device says 0
  ref.value = 150 * flt_min;
  ref.abs_sum = ref.value;
  DeviceResult got;
  got.value = 0;
  CHECK_FALSE(check_result(fake(false), ref, got, DType::f32, Op::sum, 10'000).passed);
  CHECK(check_result(fake(true), ref, got, DType::f32, Op::sum, 10'000).passed);       // 100 atomics: 200 FLT_MIN
  CHECK_FALSE(check_result(fake(true), ref, got, DType::f32, Op::sum, 5'000).passed);  // 50 atomics: 100 FLT_MIN
  // f64 accumulates in double: no f32 atomics to allow for.
  CHECK_FALSE(check_result(fake(true), ref, got, DType::f64, Op::sum, 10'000).passed);

  Reference dot;  // products rounded on the subnormal grid: up to 2^-150 each
  dot.value = 1000 * std::ldexp(1.0, -150);
  dot.abs_sum = dot.value;
  CHECK(check_result(fake(false), dot, got, DType::f32, Op::dot, 1000).passed);
  CHECK_FALSE(check_result(fake(false), dot, got, DType::f32, Op::dot, 500).passed);
}
