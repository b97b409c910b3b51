#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "host_types.hpp"
#include "reference.hpp"

using namespace red;

namespace {
HostArray array_of(DType t, std::initializer_list<double> values) {
  HostArray a(t, values.size());
  std::size_t i = 0;
  for (double v : values) a.set(i++, v);
  return a;
}
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("references on inputs with known answers") {
  HostArray a = array_of(DType::f32, {3, -1, 7, 7, 2});
  CHECK(reference(a, Op::sum).value == 18);
  CHECK(reference(a, Op::sum).abs_sum == 20);
  CHECK(reference(a, Op::max).value == 7);
  CHECK(reference(a, Op::min).value == -1);
  CHECK(reference(a, Op::argmax).index == 2);  // tie between 2 and 3: the smaller index

  // Compensation: 1 + 1e-16 * 1e6 - 1 is 1e-10, which plain double summation loses.
  HostArray c(DType::f64, 1'000'002);
  c.set(0, 1.0);
  for (std::size_t i = 1; i <= 1'000'000; ++i) c.set(i, 1e-16);
  c.set(1'000'001, -1.0);
  CHECK(reference(c, Op::sum).value == doctest::Approx(1e-10).epsilon(1e-6));
}

TEST_CASE("integer references are exact; i64 sums wrap modulo 2^64") {
  HostArray i = array_of(DType::i32, {2147483647, 2147483647, 2});
  CHECK(reference(i, Op::sum).ivalue == 4294967296LL);  // past the i32 range, exact in i64
  HostArray w(DType::i64, 2);
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  std::memcpy(w.data(), &big, 8);
  std::memcpy(static_cast<char*>(w.data()) + 8, &big, 8);
  CHECK(reference(w, Op::sum).ivalue == -2);  // (2^63 - 1) * 2 mod 2^64
  HostArray u = array_of(DType::u8, {255, 255, 1});
  CHECK(reference(u, Op::sum).ivalue == 511);
  CHECK(reference(u, Op::min).ivalue == 1);
}

TEST_CASE("NaN and infinity semantics of the references") {
  HostArray n = array_of(DType::f32, {1, kNaN, 5, kNaN});
  CHECK(std::isnan(reference(n, Op::sum).value));
  CHECK(std::isnan(reference(n, Op::max).value));
  CHECK(std::isnan(reference(n, Op::min).value));
  CHECK(reference(n, Op::argmax).index == 1);  // the first NaN
  HostArray inf = array_of(DType::f32, {1, kInf, -kInf});
  CHECK(std::isnan(reference(inf, Op::sum).value));
  CHECK(reference(inf, Op::max).value == kInf);
  CHECK(reference(inf, Op::min).value == -kInf);
  HostArray neg = array_of(DType::f32, {-kInf, -kInf});
  CHECK(reference(neg, Op::argmax).index == 0);
  CHECK(reference(neg, Op::argmax).value == -kInf);
}

TEST_CASE("empty input gives the identity") {
  HostArray e(DType::f32, 0);
  CHECK(reference(e, Op::sum).value == 0);
  CHECK(reference(e, Op::max).value == -kInf);
  CHECK(reference(e, Op::min).value == kInf);
  CHECK(reference(e, Op::argmax).index == -1);
  HostArray ei(DType::i32, 0);
  CHECK(reference(ei, Op::max).ivalue == std::numeric_limits<std::int32_t>::min());
  CHECK(reference(ei, Op::min).ivalue == std::numeric_limits<std::int32_t>::max());
}

TEST_CASE("dot reference") {
  HostArray a = array_of(DType::f32, {1, 2, -3}), b = array_of(DType::f32, {4, 5, 6});
  Reference r = reference_dot(a, b);
  CHECK(r.value == -4);
  CHECK(r.abs_sum == 32);
}

TEST_CASE("error bound follows n, eps and sum |x|") {
  CHECK(sum_error_bound(9, 0x1p-23, 100.0) == doctest::Approx(10 * 0x1p-23 * 100.0));
  CHECK(accumulator_eps(DType::f16) == 0x1p-23);  // 16-bit floats accumulate in f32
  CHECK(accumulator_eps(DType::f64) == 0x1p-52);

  Reference ref;
  ref.value = 1000.0;
  ref.abs_sum = 1000.0;
  DeviceResult got;
  const double bound = sum_error_bound(20, 0x1p-23, 1000.0);
  got.value = 1000.0 + 0.9 * bound;
  CHECK(check(ref, got, DType::f32, Op::sum, 20).passed);
  got.value = 1000.0 + 1.1 * bound;
  CHECK_FALSE(check(ref, got, DType::f32, Op::sum, 20).passed);
  got.value = kNaN;
  CHECK_FALSE(check(ref, got, DType::f32, Op::sum, 20).passed);
}

TEST_CASE("check: extremes and integers must be exact, argmax must match the index") {
  Reference ref;
  ref.value = 7;
  ref.index = 2;
  DeviceResult got;
  got.value = 7;
  got.index = 3;
  CHECK_FALSE(check(ref, got, DType::f32, Op::argmax, 0).passed);
  got.index = 2;
  CHECK(check(ref, got, DType::f32, Op::argmax, 0).passed);
  got.value = std::nextafter(7.0, 8.0);
  CHECK_FALSE(check(ref, got, DType::f64, Op::max, 0).passed);
  Reference iref;
  iref.ivalue = 1LL << 40;
  DeviceResult igot;
  igot.ivalue = (1LL << 40) + 1;
  CHECK_FALSE(check(iref, igot, DType::i32, Op::sum, 0).passed);
}

TEST_CASE("decode_result reads the value in the result type and the argmax index at offset 8") {
  RawResult raw{};
  const float v = 2.5f;
  const std::int64_t idx = 123456789012LL;
  std::memcpy(raw.data(), &v, 4);
  std::memcpy(raw.data() + kResultIndexOffset, &idx, 8);
  DeviceResult d = decode_result(raw, DType::f32, Op::argmax);
  CHECK(d.value == 2.5);
  CHECK(d.index == idx);
  const std::int64_t s = -(1LL << 40);
  std::memcpy(raw.data(), &s, 8);
  CHECK(decode_result(raw, DType::i32, Op::sum).ivalue == s);
}

TEST_CASE("check: an absolute slack widens only sums and dot products") {
  Reference ref;
  ref.value = 1e-37;
  ref.abs_sum = 1e-37;
  DeviceResult got;
  got.value = 0.0;  // everything flushed away
  CHECK_FALSE(check(ref, got, DType::f32, Op::sum, 10).passed);
  CHECK(check(ref, got, DType::f32, Op::sum, 10, 2e-37).passed);
  CHECK_FALSE(check(ref, got, DType::f32, Op::max, 10, 2e-37).passed);  // extremes stay exact
}

TEST_CASE("host::to_int64 of floats: NaN is 0, values beyond int64 saturate (no undefined cast)") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK(red::host::to_int64(static_cast<float>(nan)) == 0);
  CHECK(red::host::to_int64(inf) == std::numeric_limits<std::int64_t>::max());
  CHECK(red::host::to_int64(-inf) == std::numeric_limits<std::int64_t>::min());
  CHECK(red::host::to_int64(1e30f) == std::numeric_limits<std::int64_t>::max());
  CHECK(red::host::to_int64(-3.75) == -3);
}

TEST_CASE("overflow: a sum whose partial sums may pass the accumulator's range accepts inf and NaN") {
  // [3e38, -3e38, 3e38, -3e38] in f32: the exact sum is 0, but (3e38 + 3e38) overflows float, so
  // a tree order gives inf or NaN, and that is the type's honest answer.
  const HostArray a = array_of(DType::f32, {3e38, -3e38, 3e38, -3e38});
  const Reference ref = reference(a, Op::sum);
  CHECK(ref.value == 0.0);
  DeviceResult got;
  for (double v : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), 0.0}) {
    got.value = v;
    CHECK(check(ref, got, DType::f32, Op::sum, 2, 0).passed);
  }
  // Where no partial sum can overflow, inf is still an error.
  const Reference small = reference(array_of(DType::f32, {1, 2, 3}), Op::sum);
  got.value = std::numeric_limits<double>::infinity();
  CHECK_FALSE(check(small, got, DType::f32, Op::sum, 2, 0).passed);
}

TEST_CASE("overflow: the f64 reference stays exact where a double partial sum overflows") {
  const double big = std::numeric_limits<double>::max();
  const Reference ref = reference(array_of(DType::f64, {big, big, -big}), Op::sum);
  CHECK(ref.value == big);  // was NaN: the compensation itself overflowed
  CHECK(std::isinf(ref.abs_sum));
}
