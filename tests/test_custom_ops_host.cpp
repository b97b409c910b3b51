// Chapter 13's host side (13_custom_ops/host_data.hpp): its generated inputs and float64
// references, on inputs with known answers and across the chunks the work is split into; neither
// may depend on the number of threads. And the products' checks (13_custom_ops/checks.hpp) on
// results built here, right and wrong, at sizes where the float product's bound is useless.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "13_custom_ops/checks.hpp"
#include "13_custom_ops/host_data.hpp"

using namespace ch13;

namespace {
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
constexpr std::size_t kChunk = std::size_t{1} << 20;  // host_data.cpp's
}  // namespace

TEST_CASE("chapter 13 inputs: the same values on one thread and on all, by the rules of each data set") {
  const std::size_t n = 3 * kChunk + 5;
  const int threads = omp_get_max_threads();
  const std::vector<float> many = generate_floats("around_one", n, 7);
  omp_set_num_threads(1);
  const std::vector<float> one = generate_floats("around_one", n, 7);
  const std::vector<float2> pairs_one = generate_pairs(kChunk + 3, 9);
  omp_set_num_threads(threads);
  const std::vector<float2> pairs_many = generate_pairs(kChunk + 3, 9);
  CHECK(std::memcmp(one.data(), many.data(), n * sizeof(float)) == 0);
  CHECK(std::memcmp(pairs_one.data(), pairs_many.data(), pairs_one.size() * sizeof(float2)) == 0);
  CHECK(generate_floats("around_one", n, 8) != many);  // another seed, other values
  bool rules = true;
  for (std::size_t i = 0; i < n; ++i) {
    const float a = std::fabs(many[i]);
    rules &= a >= 0.5f && a <= 2.0f && (many[i] < 0) == (i % 7 == 0);
  }
  CHECK(rules);
  for (const float2& p : pairs_many) rules &= p.x >= 0.5f && p.x <= 1.0f && p.y >= -1.0f && p.y <= 1.0f;
  CHECK(rules);
  double mean = 0;
  for (float v : generate_floats("shifted", kChunk, 1)) mean += v;
  CHECK(mean / kChunk == doctest::Approx(1e4).epsilon(1e-4));
  CHECK_THROWS_AS(generate_floats("gaussian", 10, 1), std::invalid_argument);

  const std::vector<std::uint8_t> any_middle = generate_bytes(false, "middle", 11), all_start = generate_bytes(true, "start", 11);
  CHECK(any_middle[5] == 1);
  CHECK(bytes_reference(any_middle.data(), 11).any);
  CHECK_FALSE(bytes_reference(generate_bytes(false, "none", 11).data(), 11).any);
  CHECK(all_start[0] == 0);
  CHECK_FALSE(bytes_reference(all_start.data(), 11).all);
  CHECK(bytes_reference(generate_bytes(true, "none", 11).data(), 11).all);
  CHECK(generate_bytes(true, "end", 11)[10] == 0);
}

TEST_CASE("chapter 13 references on inputs with known answers") {
  const std::vector<float> x = {3, 1, 2, 1};
  CHECK(argmin_reference(x.data(), 4).index == 1);  // the first smallest
  CHECK(argmin_reference(x.data(), 0).index == -1);
  CHECK(minmax_reference(x.data(), 4).lo == 1);
  CHECK(minmax_reference(x.data(), 4).hi == 3);
  const std::vector<float> with_nan = {3, kNaN, 1, kNaN};
  CHECK(argmin_reference(with_nan.data(), 4).index == 1);  // the first NaN
  CHECK(std::isnan(minmax_reference(with_nan.data(), 4).lo));

  const std::vector<float> f = {2, -0.5f, 4};
  ProductReference p = product_reference(f.data(), 3);
  CHECK(p.sign == -1);
  CHECK(p.log_abs == doctest::Approx(std::log(4.0)));
  CHECK(p.value() == doctest::Approx(-4.0));
  const std::vector<float> zero = {2, 0, 4}, zero_inf = {0, kInf}, inf = {-kInf, 2};
  CHECK(product_reference(zero.data(), 3).sign == 0);
  CHECK(product_reference(zero.data(), 3).value() == 0);
  CHECK(product_reference(zero_inf.data(), 2).nan);
  CHECK(product_reference(inf.data(), 2).sign == -1);
  CHECK(std::isinf(product_reference(inf.data(), 2).log_abs));

  const std::vector<float> zeros = {0, 0}, minus_inf = {-kInf, -kInf};
  CHECK(lse_reference(zeros.data(), 2) == doctest::Approx(std::log(2.0)));
  CHECK(lse_reference(minus_inf.data(), 2) == -std::numeric_limits<double>::infinity());
  CHECK(lse_reference(zeros.data(), 0) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(lse_reference(with_nan.data(), 4)));

  const std::vector<float> constant(1000, 1e4f);
  const MomentsReference m = moments_reference(constant.data(), 1000);
  CHECK(m.mean == 1e4);
  CHECK(m.variance == 0);
  CHECK(std::isnan(moments_reference(constant.data(), 0).variance));
  const std::vector<float> squares = {1, 2, 3};
  CHECK(sum_of_squares_reference(squares.data(), 3) == 14);

  // x -> 2x + 1, then x -> 3x - 1: x -> 6x + 2.
  const std::vector<float2> steps = {float2{2, 1}, float2{3, -1}};
  const AffineReference a = affine_reference(steps.data(), 2);
  CHECK(a.a == 6);
  CHECK(a.b == 2);
  CHECK(a.abs_b == 4);  // |1| x |3| + |-1|
}

TEST_CASE("chapter 13 references across chunks: the first NaN or minimum of the whole input, sums merged in order") {
  const std::size_t n = 2 * kChunk + 3;
  std::vector<float> x(n, 1.0f);
  x[kChunk + 5] = 0.25f;  // the smallest, in the second chunk
  x[2 * kChunk + 1] = 0.25f;  // a tie, later
  x[7] = -2.0f;  // one negative factor
  CHECK(argmin_reference(x.data(), n).index == 7);  // -2 is the smallest
  x[7] = 2.0f;
  CHECK(argmin_reference(x.data(), n).index == static_cast<long long>(kChunk + 5));
  CHECK(minmax_reference(x.data(), n).lo == 0.25);
  const ProductReference p = product_reference(x.data(), n);
  CHECK(p.sign == 1);
  CHECK(p.log_abs == doctest::Approx(2 * std::log(0.25) + std::log(2.0)));
  x[2 * kChunk + 2] = kNaN;
  x[kChunk + 9] = kNaN;
  CHECK(argmin_reference(x.data(), n).index == static_cast<long long>(kChunk + 9));
  const int threads = omp_get_max_threads();
  const std::vector<float> normal = generate_floats("normal", n, 3);
  const double lse_many = lse_reference(normal.data(), n);
  const MomentsReference m_many = moments_reference(normal.data(), n);
  omp_set_num_threads(1);
  CHECK(lse_reference(normal.data(), n) == lse_many);
  CHECK(moments_reference(normal.data(), n).variance == m_many.variance);
  omp_set_num_threads(threads);
  CHECK(m_many.variance == doctest::Approx(1.0).epsilon(0.01));
}

TEST_CASE("chapter 13 exact data: every partial product or sum is exact, the answers known") {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{100}, std::size_t{1'000'003}}) {
    double product = 0;
    const std::vector<float> f = generate_exact_factors(n, 11, product);
    double sequential = 1;
    int lowest = 0, highest = 0, exponent = 0;
    for (const float v : f) {
      CHECK((v == 1.0f || v == 2.0f || v == 0.5f || v == -1.0f));
      sequential *= v;
      exponent += v == 2.0f ? 1 : v == 0.5f ? -1 : 0;
      lowest = std::min(lowest, exponent);
      highest = std::max(highest, exponent);
    }
    CHECK(product == sequential);
    CHECK(lowest >= -40);  // every partial product, in any order, is +-2^k with -40 <= k <= 64
    CHECK(highest <= 64);
  }
  const std::vector<float> squares = generate_exact_squares(3 * kChunk + 5);
  CHECK(sum_of_squares_reference(squares.data(), squares.size()) < (1 << 24));
  CHECK(std::count_if(squares.begin(), squares.end(), [](float v) { return v != 0.0f; }) ==
        static_cast<long>((squares.size() + exact_squares_spacing(squares.size()) - 1) / exact_squares_spacing(squares.size())));
  const std::vector<float2> steps = generate_unit_steps(kChunk + 3, 4);
  for (const float2 s : steps) CHECK((std::fabs(s.x) == 1.0f && (s.y == -1.0f || s.y == 0.0f || s.y == 1.0f)));
}

TEST_CASE("chapter 13's product trap: float products of factors near one round down, most of all near 1") {
  // The reordering kernel's shape on the host: 4096 lanes, each a running float product of every
  // 4096th factor, then the lanes in turn; factors 1 + N(0, 10^-4), as the benchmark's near_one.
  const std::size_t n = std::size_t{1} << 22, lanes = 4096;
  const std::vector<float> x = generate_floats("near_one", n, 3);
  std::vector<float> lane(lanes, 1.0f);
  double exact = 1, drift = 0, drift_near_one = 0, sequential_float = 1;
  float sequential = 1;
  for (std::size_t i = 0; i < n; ++i) {
    float& a = lane[i % lanes];
    const double want = static_cast<double>(a) * x[i];
    const float got = a * x[i];
    const double e = (static_cast<double>(got) - want) / want;  // this multiplication's rounding
    drift += e;
    if (std::fabs(a - 1.0f) < 1e-3f) drift_near_one += e;
    a = got;
    exact *= x[i];
    sequential *= x[i];
  }
  sequential_float = sequential;
  float total = 1;
  for (const float a : lane) total *= a;
  const double relative = total / exact - 1, sequential_relative = sequential_float / exact - 1;
  const double random_scale = std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -24);  // sqrt(n) u
  INFO("4096 lanes: ", relative, ", sequential: ", sequential_relative, ", sqrt(n) u: ", random_scale);
  CHECK(relative < -10 * random_scale);             // a bias downward, far past random rounding's scale
  CHECK(drift < 0);
  CHECK(drift_near_one < 0);
  CHECK(drift_near_one / drift > 0.5);              // most of it where the running product is within 10^-3 of 1
  CHECK(std::fabs(sequential_relative) < std::fabs(relative) / 4);  // one running product strays from 1 sooner
}

TEST_CASE("chapter 13 exact squares: the total stays below 2^24 at every n up to 2^36 and beyond") {
  // Too large to generate: the spacing's promise, counted. generate_exact_squares puts a square of
  // at most 9 at every spacing-th element, ceil(n / spacing) of them.
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4099}, std::size_t{1} << 31, (std::size_t{1} << 31) + 7,
                        std::size_t{1} << 32, std::size_t{7'640'000'000}, std::size_t{1} << 36, (std::size_t{1} << 36) + 1,
                        std::size_t{1} << 40}) {
    const std::size_t spacing = exact_squares_spacing(n);
    const std::size_t nonzero = (n + spacing - 1) / spacing;
    CHECK_MESSAGE(9 * nonzero < (std::size_t{1} << 24), "n = ", n, ": ", nonzero, " squares a spacing of ", spacing, " apart");
    CHECK(spacing >= 4099);
    CHECK(spacing % 2 == 1);
  }
  CHECK(exact_squares_spacing(std::size_t{1} << 31) == 4099);  // the small sizes keep their data
  // The total of the squares generate_exact_squares would place at n = 2^36 (1 + i % 3 at i = 0,
  // spacing, 2 spacing, ...), summed without the array.
  const std::size_t n = std::size_t{1} << 36, spacing = exact_squares_spacing(n);
  double total = 0;
  for (std::size_t i = 0; i < n; i += spacing) total += static_cast<double>((1 + i % 3) * (1 + i % 3));
  CHECK(total < (1 << 24));
}

namespace {
// A product's result as the kernels store it (13_custom_ops/ops.cuh): the float product a float at
// byte 0; the mantissa/exponent product a double mantissa in [0.5, 1) at byte 0 and an int
// exponent at byte 8, here of the double p; the sum of logs ln|p| (float) at byte 0, the sign at 4.
RawResult float_result(float p) {
  RawResult r{};
  std::memcpy(r.data(), &p, sizeof p);
  return r;
}
RawResult scaled_result(double p) {
  int exponent = 0;
  const double mantissa = std::frexp(p, &exponent);
  RawResult r{};
  std::memcpy(r.data(), &mantissa, sizeof mantissa);
  std::memcpy(r.data() + 8, &exponent, sizeof exponent);
  return r;
}
RawResult log_result(float log_abs, int sign) {
  RawResult r{};
  std::memcpy(r.data(), &log_abs, sizeof log_abs);
  std::memcpy(r.data() + 4, &sign, sizeof sign);
  return r;
}
}  // namespace

TEST_CASE("chapter 13's products: the mantissa/exponent product's check bites at every n; the float product's never passes unbounded") {
  std::string shown;
  for (std::size_t n : {std::size_t{1} << 20, (std::size_t{1} << 22) + 1, std::size_t{1} << 23, std::size_t{17'000'000}}) {
    INFO("n = ", n);
    const std::vector<float> x = generate_floats("near_one", n, 13);
    const double p = product_reference(x.data(), n).value();
    // The true product, as the kernel stores it: passes, on a bound far below 10^-4.
    const Verdict right = check_scaled_product(x.data(), n, scaled_result(p), shown);
    CHECK_MESSAGE(right.passed, right.why);
    CHECK(right.bounded);
    CHECK(right.bound < kLargestProductBound / 100);
    // Wrong by 7.5 %, by a factor of 0.6, 0.5 or 1.9, and 2p rounded to float: each fails, checked.
    const double wrong[] = {1.075 * p, 0.6 * p, 0.5 * p, 1.9 * p, static_cast<double>(static_cast<float>(2 * p))};
    for (const double w : wrong) {
      const Verdict v = check_scaled_product(x.data(), n, scaled_result(w), shown);
      CHECK_MESSAGE(!v.passed, "a result of ", w / p, " times the product passed");
      CHECK((v.bounded || v.lost));  // a failure, not "not checked"
      // The float product given the same results: never a pass (its bound is 10^-4 or more here):
      // "unbounded: not checked", or a failure where the result is beyond even that loose bound or
      // lost (off by a factor of 2).
      const Verdict plain = check_product(x.data(), n, float_result(static_cast<float>(w)), shown);
      CHECK_MESSAGE(!plain.passed, "the float product passed a result of ", w / p, " times the product");
      CHECK(plain.bound >= kLargestProductBound);
    }
    // The float product's own true value is not a pass either: not checked.
    const Verdict plain = check_product(x.data(), n, float_result(static_cast<float>(p)), shown);
    CHECK_FALSE(plain.passed);
    CHECK_FALSE(plain.bounded);
    CHECK_FALSE(plain.lost);
    // The sum of logs: its bound here is far above 10^-4, so its true ln|p| is not checked.
    const ProductReference want = product_reference(x.data(), n);
    const Verdict log_right = check_log_product(x.data(), n, 40, log_result(static_cast<float>(want.log_abs), 1), shown);
    CHECK_FALSE(log_right.passed);
    CHECK_FALSE(log_right.bounded);
    CHECK(log_right.bound >= kLargestProductBound);
  }
  // Few factors: the float product and the sum of logs are checked while their bounds are below
  // 10^-4 (the float product up to n = 1678), and fail a result 1 % off.
  const std::vector<float> x = generate_floats("near_one", 1000, 17);
  const ProductReference want = product_reference(x.data(), x.size());
  const double p = want.value();
  const Verdict plain = check_product(x.data(), x.size(), float_result(static_cast<float>(p)), shown);
  CHECK_MESSAGE(plain.passed, plain.why);
  CHECK(plain.bound < kLargestProductBound);
  const Verdict plain_off = check_product(x.data(), x.size(), float_result(static_cast<float>(1.01 * p)), shown);
  CHECK_FALSE(plain_off.passed);
  CHECK(plain_off.bounded);
  const std::vector<float> y(x.begin(), x.begin() + 200);
  const ProductReference few = product_reference(y.data(), y.size());
  const Verdict log_few = check_log_product(y.data(), y.size(), 40, log_result(static_cast<float>(few.log_abs), 1), shown);
  CHECK_MESSAGE(log_few.passed, log_few.why);
  CHECK(log_few.bound < kLargestProductBound);
  CHECK_FALSE(check_log_product(y.data(), y.size(), 40, log_result(static_cast<float>(few.log_abs + 0.01), 1), shown).passed);
  // The rule at its edge: the float product is bounded up to n = 1678 and not from 1679 on.
  CHECK(product_gamma(1678, kUnitRoundoff) < kLargestProductBound);
  CHECK(product_gamma(1679, kUnitRoundoff) >= kLargestProductBound);
  CHECK(product_gamma(std::size_t{1} << 36, kDoubleUnitRoundoff) < kLargestProductBound / 10);  // 7.6e-6
  // Every pass rests on a bound below 10^-4: whatever n, whatever the result.
  for (std::size_t n : {std::size_t{100}, std::size_t{1000}, std::size_t{1679}, std::size_t{5000}, std::size_t{100'000}}) {
    const std::vector<float> z = generate_floats("near_one", n, 19);
    const ProductReference r = product_reference(z.data(), n);
    for (const double factor : {1.0, 1.00001, 1.001, 1.075}) {
      const Verdict vs[] = {
          check_product(z.data(), n, float_result(static_cast<float>(factor * r.value())), shown),
          check_scaled_product(z.data(), n, scaled_result(factor * r.value()), shown),
          check_log_product(z.data(), n, 40, log_result(static_cast<float>(r.log_abs + std::log(factor)), 1), shown)};
      for (const Verdict& v : vs) CHECK_MESSAGE((!v.passed || v.bound < kLargestProductBound), "n = ", n, ": ", v.why);
    }
  }
}
