// Chapter 13's host side (13_custom_ops/host_data.hpp): its generated inputs and float64
// references, on inputs with known answers and across the chunks the work is split into; neither
// may depend on the number of threads.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

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
