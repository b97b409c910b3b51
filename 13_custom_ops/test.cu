// Chapter 13's tests: every operator over the shared sizes through the kernels it may use, its
// adversarial inputs against float64, the traps of the naive forms shown to happen, the order of a
// non-commutative operator, a user's own functors, and determinism.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "13_custom_ops/host_reference.hpp"
#include "13_custom_ops/user_op.cuh"
#include "test_support.hpp"

using namespace ch13;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The sizes every operator runs at: the shared list around one tile of the kernels (a block's
// tile of chapter 07, the ordered kernel's step of a block: 8 warps x 32 lanes x 8 vectors of 4
// floats), plus a few million.
std::vector<std::size_t> sizes() { return red::test::shared_sizes({256 * 8 * 4, 8 * 32 * 8 * 4}); }

std::vector<float> normal(std::size_t n, float mean = 0, float sd = 1) {
  std::mt19937_64 rng(red::test::fresh_seed());
  std::normal_distribution<float> d(mean, sd);
  std::vector<float> x(n);
  for (auto& v : x) v = d(rng);
  return x;
}
std::vector<float> uniform(std::size_t n, float lo, float hi) {
  std::mt19937_64 rng(red::test::fresh_seed());
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> x(n);
  for (auto& v : x) v = d(rng);
  return x;
}

// A call's bookkeeping, asserted for every run.
template <class Op>
DeviceRun run(Kernel k, const std::vector<typename Op::In>& x, std::size_t offset = 0) {
  DeviceRun r = run_on_device<Op>(k, x.data(), x.size(), offset);
  CHECK_MESSAGE(r.same_twice, "a second call gave other bits, n = ", x.size());
  CHECK_MESSAGE(r.counters_zero, "a call left the scratch's counters nonzero, n = ", x.size());
  CHECK_MESSAGE(r.input_unchanged, "a call wrote its input, n = ", x.size());
  return r;
}

// Kernel k on x (placed `offset` elements past an aligned start), checked against the reference
// and bound of host_reference.hpp; asserted to pass unless `expect_pass` is false (a trap shown).
// Where a product's bound is too loose to judge at this n (checks.hpp: the float product, the sum
// of logs), its verdict is "unbounded: not checked": asserted then only not to be lost.
template <class Op>
Verdict check_op(Kernel k, const std::vector<typename Op::In>& x, bool expect_pass = true, std::size_t offset = 0) {
  const DeviceRun r = run<Op>(k, x, offset);
  std::string shown;
  const Verdict v = verdict_of<Op>(k, x.data(), x.size(), r.result, shown);
  if (expect_pass)
    CHECK_MESSAGE((v.passed || (!v.bounded && !v.lost)), v.why, " (n = ", x.size(), ", kernel ", kernel_name(k), ")");
  return v;
}

// Affine steps as the program and the benchmark generate them (host_data.hpp), from a fresh seed.
std::vector<float2> affine_steps(std::size_t n) { return generate_pairs(n, red::test::fresh_seed()); }
// Steps x -> a x + b with a = +-1 and b in {-1, 0, 1} (host_data.hpp) and their composition, exact:
// a kernel that keeps the order returns the sequential fold's bits whatever its tree, and one that
// does not almost surely returns others. (The steps of affine_steps, a in [0.5, 1], forget all but
// the last few dozen: only an exact check sees the order of the early ones.)
std::vector<float2> signed_unit_steps(std::size_t n, Affine& sequential) {
  std::vector<float2> x = generate_unit_steps(n, red::test::fresh_seed());
  const AffineReference want = affine_reference(x.data(), n);
  sequential = {static_cast<float>(want.a), static_cast<float>(want.b)};
  return x;
}
// A user's largest-magnitude operator (no transform), beside user_op.cuh's sum of squares.
struct LargerMagnitude {
  __device__ float operator()(float a, float b) const { return fabsf(b) > fabsf(a) ? b : a; }
};
using MaxMagnitude = FromFunctors<float, float, LargerMagnitude, user_functors::Zero>;

}  // namespace

TEST_CASE("13_custom_ops: argmin and min/max over the shared sizes, both kernels") {
  for (Kernel k : {Kernel::reordering, Kernel::ordered})
    for (std::size_t n : sizes()) {
      red::test::progress("argmin, minmax n=" + std::to_string(n));
      std::vector<float> x = normal(n);
      check_op<ArgMin<float>>(k, x);
      check_op<MinMax<float>>(k, x);
      if (n > 2) {
        x[n / 2] = x[n - 1] = -1e30f;  // a tie: the first wins
        check_op<ArgMin<float>>(k, x);
        x[n - 2] = kNaN;  // NaN wins, and propagates to both ends of the range
        check_op<ArgMin<float>>(k, x);
        check_op<MinMax<float>>(k, x);
      }
    }
  for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
    check_op<ArgMin<float>>(k, {});  // (+inf, -1)
    check_op<MinMax<float>>(k, {});  // (+inf, -inf)
    check_op<ArgMin<float>>(k, normal(100003), true, 3);  // a start 12 bytes past a 16-byte boundary
  }
}

TEST_CASE("13_custom_ops: products - the plain one leaves float's range, the two fixes do not") {
  // 300 factors of 1.5: 1.5^300 = 6.7e52, past FLT_MAX. The plain product is inf; both fixes hold it.
  const std::vector<float> big(300, 1.5f);
  const DeviceRun plain = run<Product<float>>(Kernel::reordering, big);
  CHECK(std::isinf(result_as<float>(plain.result)));
  check_op<LogProduct<float>>(Kernel::reordering, big);
  check_op<ScaledProduct<float>>(Kernel::reordering, big);
  // 300 of 0.5 underflow to 0; 2^-300 is well inside the fixes' range.
  const std::vector<float> small(300, 0.5f);
  CHECK(result_as<float>(run<Product<float>>(Kernel::reordering, small).result) == 0.0f);
  check_op<LogProduct<float>>(Kernel::reordering, small);
  check_op<ScaledProduct<float>>(Kernel::reordering, small);
  for (Kernel k : {Kernel::reordering, Kernel::ordered})
    for (std::size_t n : sizes()) {
      red::test::progress("products n=" + std::to_string(n));
      std::vector<float> x = uniform(n, 0.5f, 2.0f);  // ln x in [-0.69, 0.69]: the product wanders far
      for (std::size_t i = 0; i < n; i += 7) x[i] = -x[i];
      check_op<LogProduct<float>>(k, x);
      check_op<ScaledProduct<float>>(k, x);
      if (n < 40) check_op<Product<float>>(k, x);  // small enough for float: within its bound
    }
  // Subnormal factors (below FLT_MIN, 1.2e-38): both fixes scale them by 2^24 first.
  std::vector<float> tiny = uniform(1000, 0.5f, 2.0f);
  tiny[3] = 1e-40f;
  tiny[500] = -3e-42f;
  tiny[999] = std::numeric_limits<float>::denorm_min();
  for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
    check_op<LogProduct<float>>(k, tiny);
    check_op<ScaledProduct<float>>(k, tiny);
  }
  // A zero factor, an infinite one, both (NaN), and a NaN.
  std::vector<float> x = uniform(1000, 0.5f, 2.0f);
  x[10] = 0.0f;
  check_op<LogProduct<float>>(Kernel::ordered, x);
  check_op<ScaledProduct<float>>(Kernel::ordered, x);
  x[20] = std::numeric_limits<float>::infinity();
  check_op<LogProduct<float>>(Kernel::ordered, x);
  x[10] = 1.0f;
  check_op<LogProduct<float>>(Kernel::ordered, x);
  x[30] = kNaN;
  check_op<LogProduct<float>>(Kernel::ordered, x);
  check_op<ScaledProduct<float>>(Kernel::ordered, x);
  check_op<LogProduct<float>>(Kernel::ordered, {});  // ln 1 = 0, sign 1
}

TEST_CASE("13_custom_ops: any and all with votes, early exit or not, and through the generic kernels") {
  const auto check = [](const std::vector<std::uint8_t>& x, std::size_t offset, const std::string& what) {
    const BytesReference want = bytes_reference(x.data(), x.size());
    for (Kernel k : {Kernel::votes, Kernel::votes_early_exit, Kernel::reordering, Kernel::ordered}) {
      const DeviceRun ra = run_on_device<AnyNonzero>(k, x.data(), x.size(), offset);
      const DeviceRun rl = run_on_device<AllNonzero>(k, x.data(), x.size(), offset);
      CHECK_MESSAGE(result_as<int>(ra.result) == int(want.any), "any, ", what, ", kernel ", int(k));
      CHECK_MESSAGE(result_as<int>(rl.result) == int(want.all), "all, ", what, ", kernel ", int(k));
      CHECK(ra.counters_zero);
      CHECK(rl.counters_zero);
      CHECK(ra.same_twice);
      CHECK(rl.same_twice);
    }
  };
  for (std::size_t n : sizes()) {
    red::test::progress("any/all n=" + std::to_string(n));
    std::vector<std::uint8_t> zeros(n, 0), ones(n, 1);
    check(zeros, 0, "all zero n=" + std::to_string(n));
    check(ones, 0, "all one n=" + std::to_string(n));
    for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
      zeros[at] = 7;
      ones[at] = 0;
      check(zeros, 0, "one nonzero at " + std::to_string(at) + " of " + std::to_string(n));
      check(ones, 0, "one zero at " + std::to_string(at) + " of " + std::to_string(n));
      check(zeros, 5, "misaligned, one nonzero at " + std::to_string(at));
      zeros[at] = 0;
      ones[at] = 1;
    }
  }
  check({}, 0, "empty (any false, all true)");
}

TEST_CASE("13_custom_ops: log-sum-exp - the naive form overflows near 100, the online form does not") {
  const std::vector<float> near100 = uniform(4096, 95.0f, 105.0f);
  CHECK(std::isinf(result_as<float>(run<NaiveLogSumExp<float>>(Kernel::reordering, near100).result)));
  CHECK_FALSE(check_op<NaiveLogSumExp<float>>(Kernel::reordering, near100, false).passed);
  check_op<LogSumExp<float>>(Kernel::reordering, near100);
  for (Kernel k : {Kernel::reordering, Kernel::ordered})
    for (std::size_t n : sizes()) {
      red::test::progress("log-sum-exp n=" + std::to_string(n));
      std::vector<float> x = normal(n, 0, 10);
      check_op<LogSumExp<float>>(k, x);
      for (std::size_t i = 0; i < n; i += 3) x[i] = -std::numeric_limits<float>::infinity();  // add nothing
      check_op<LogSumExp<float>>(k, x);
    }
  for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
    check_op<LogSumExp<float>>(k, {});                                                             // -inf
    check_op<LogSumExp<float>>(k, std::vector<float>(1000, -std::numeric_limits<float>::infinity()));  // -inf
    std::vector<float> x = normal(1000);
    x[500] = std::numeric_limits<float>::infinity();
    check_op<LogSumExp<float>>(k, x);  // +inf
    x[600] = kNaN;
    check_op<LogSumExp<float>>(k, x);  // NaN
  }
}

// A result written by hand, as the kernel would store it.
template <class Result>
RawResult raw_of(const Result& value) {
  RawResult raw{};
  std::memcpy(raw.data(), &value, sizeof value);
  return raw;
}

TEST_CASE("13_custom_ops: a check never passes a result that lost the whole answer") {
  // 10^4 and its next float alternating: the variance is a quarter ulp squared (about 2.4e-7),
  // kappa about 2 x 10^7, so the variance's relative bound is above 1 at every depth. A variance of
  // 0 (everything lost) is within that bound, and fails all the same; the true variance passes.
  const float big = 1e4f, next = std::nextafter(big, 2e4f);
  std::vector<float> x(1 << 16);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 2 ? next : big;
  const MomentsReference want = moments_reference(x.data(), x.size());
  std::string shown;
  MeanVarianceResult lost{static_cast<float>(want.mean), 0.0f, x.size()};
  const Verdict v = verdict_of<NaiveMeanVariance<float>>(Kernel::reordering, x.data(), x.size(), raw_of(lost), shown);
  CHECK_MESSAGE(v.bound >= want.variance, "the bound ", v.bound, " should admit the loss here");
  CHECK_FALSE(v.passed);
  CHECK(v.why.find("whole variance is lost") != std::string::npos);
  CHECK(v.want == doctest::Approx(want.variance));
  MeanVarianceResult right{static_cast<float>(want.mean), static_cast<float>(want.variance), x.size()};
  CHECK(verdict_of<MeanVariance<float>>(Kernel::reordering, x.data(), x.size(), raw_of(right), shown).passed);

  // A product past float's range: the error is relative (inf for an overflow, 1 for an underflow to
  // 0), and the verdict carries the true value beside the result.
  const std::vector<float> factors(300, 1.5f);  // 1.5^300, about 6.7e52
  const Verdict over = verdict_of<Product<float>>(Kernel::reordering, factors.data(), factors.size(),
                                                  raw_of(std::numeric_limits<float>::infinity()), shown);
  CHECK_FALSE(over.passed);
  CHECK(std::isinf(over.error));
  CHECK(std::isinf(over.got));
  CHECK(over.want == doctest::Approx(std::pow(1.5, 300)).epsilon(1e-9));
  const std::vector<float> small(300, 1.0f / 1.5f);
  const Verdict under = verdict_of<Product<float>>(Kernel::reordering, small.data(), small.size(), raw_of(0.0f), shown);
  CHECK_FALSE(under.passed);
  CHECK(under.error == 1.0);
  CHECK(under.want == doctest::Approx(std::pow(static_cast<double>(small[0]), 300)).epsilon(1e-9));

  // The log form's bound grows with the factors' |ln x| and with n: over 10^30 and 10^-30 in turn
  // (ln|p| near 0, sum of |ln x| about 4.5 x 10^6) it is above 1, so a ln|p| off by 1 (a product
  // off by a factor of e) is within it, and fails all the same; one off by 0.5 (a factor of 1.65,
  // still a correct leading digit) is not lost, and not checked either: no bound below 10^-4.
  std::vector<float> far(1 << 16);
  for (std::size_t i = 0; i < far.size(); ++i) far[i] = i % 2 ? 1e-30f : 1e30f;
  const ProductReference p = product_reference(far.data(), far.size());
  struct LogResult {
    float log_abs;
    int sign;
  };
  const auto log_verdict = [&](double off) {
    return verdict_of<LogProduct<float>>(Kernel::reordering, far.data(), far.size(),
                                         raw_of(LogResult{static_cast<float>(p.log_abs + off), p.sign}), shown);
  };
  const Verdict off_by_e = log_verdict(1.0);
  CHECK_MESSAGE(off_by_e.bound > 1.0, "the bound ", off_by_e.bound, " should admit the loss here");
  CHECK_FALSE(off_by_e.passed);
  CHECK(off_by_e.lost);
  CHECK(off_by_e.why.find("whole answer lost") != std::string::npos);
  CHECK_FALSE(log_verdict(0.5).passed);
  CHECK_FALSE(log_verdict(0.5).bounded);
  CHECK_FALSE(log_verdict(0.5).lost);
  // A log far from 0 off by more than ln 2 keeps its leading digits: ln|p| about 4.5 x 10^6 off
  // by 1 is not lost (within its bound, which is far above 10^-4: not checked).
  const std::vector<float> huge(1 << 16, 1e30f);
  const ProductReference q = product_reference(huge.data(), huge.size());
  const Verdict large_log = verdict_of<LogProduct<float>>(
      Kernel::reordering, huge.data(), huge.size(), raw_of(LogResult{static_cast<float>(q.log_abs + 1.0), q.sign}), shown);
  CHECK_FALSE(large_log.lost);
  CHECK_FALSE(large_log.passed);
  CHECK_FALSE(large_log.bounded);
}

TEST_CASE("13_custom_ops: mean and variance - the naive sums lose a large mean's variance, Welford does not") {
  // 10^4 + N(0, 1): the variance is 1, kappa about 10^4.
  const std::vector<float> shifted = normal(1 << 20, 1e4f, 1.0f);
  const Verdict naive = check_op<NaiveMeanVariance<float>>(Kernel::reordering, shifted, false);
  const Verdict welford = check_op<MeanVariance<float>>(Kernel::reordering, shifted);
  // The trap, measured: the naive variance is off by more than a tenth of the variance itself; the
  // fix is within its bound (and in practice within 10^-3).
  CHECK_MESSAGE(naive.error > 0.1, "the naive variance's error: ", naive.error);
  CHECK_MESSAGE(welford.error < 1e-3, "Welford's error: ", welford.error);
  for (Kernel k : {Kernel::reordering, Kernel::ordered})
    for (std::size_t n : sizes()) {
      red::test::progress("mean/variance n=" + std::to_string(n));
      check_op<MeanVariance<float>>(k, normal(n, 3.0f, 2.0f));
    }
  for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
    const DeviceRun constant = run<MeanVariance<float>>(k, std::vector<float>(100003, 7.25f));
    CHECK(result_as<MeanVarianceResult>(constant.result).mean == 7.25f);
    CHECK(result_as<MeanVarianceResult>(constant.result).variance == 0.0f);  // no deviation, ever
    const DeviceRun one = run<MeanVariance<float>>(k, {2.5f});
    CHECK(result_as<MeanVarianceResult>(one.result).variance == 0.0f);
    const DeviceRun none = run<MeanVariance<float>>(k, {});
    CHECK(std::isnan(result_as<MeanVarianceResult>(none.result).mean));
    CHECK(std::isnan(result_as<MeanVarianceResult>(none.result).variance));
    CHECK(result_as<MeanVarianceResult>(none.result).count == 0);
    std::vector<float> x = normal(5000);
    x[77] = kNaN;
    CHECK(std::isnan(result_as<MeanVarianceResult>(run<MeanVariance<float>>(k, x).result).variance));
  }
}

TEST_CASE("13_custom_ops: affine maps keep their order through the ordered kernel only") {
  for (std::size_t n : sizes()) {
    red::test::progress("affine n=" + std::to_string(n));
    check_op<ComposeAffine>(Kernel::ordered, affine_steps(n));
  }
  check_op<ComposeAffine>(Kernel::ordered, {});  // (1, 0)
  // The reordering kernel combines a thread's vectors a grid apart and the partials out of order:
  // right for a commutative operator, wrong for this one. Shown, not hidden: far past the bound.
  const std::vector<float2> x = affine_steps(std::size_t{1} << 22);
  const Verdict reordered = check_op<ComposeAffine>(Kernel::reordering, x, false);
  CHECK_MESSAGE(!reordered.passed, "the reordering kernel happened to keep the order: error ", reordered.error);
  CHECK_THROWS_AS(launch<ComposeAffine>(Call{}), std::invalid_argument);  // the launcher refuses it
}

TEST_CASE("13_custom_ops: the ordered kernel composes exact steps in their order, bit for bit") {
  // Around the ordered kernel's step of a warp (256 vectors of 2 steps), a block's, a few million
  // (a region of a few steps a warp) and 2^24 + (about 16 steps a region on the H200).
  for (std::size_t n : {std::size_t{1}, std::size_t{511}, std::size_t{512}, std::size_t{513}, std::size_t{4095},
                        std::size_t{4097}, std::size_t{3'000'017}, (std::size_t{1} << 24) + 12'345}) {
    red::test::progress("exact affine n=" + std::to_string(n));
    Affine want{};
    const std::vector<float2> x = signed_unit_steps(n, want);
    for (std::size_t offset : {0, 1}) {
      const Affine got = result_as<Affine>(run<ComposeAffine>(Kernel::ordered, x, offset).result);
      CHECK_MESSAGE(got.a == want.a, "n = ", n, ", offset ", offset, ": a ", got.a, " against ", want.a);
      CHECK_MESSAGE(got.b == want.b, "n = ", n, ", offset ", offset, ": b ", got.b, " against ", want.b);
    }
  }
  // The check can fail: the reordering kernel's b differs (it is an integer spread over thousands,
  // so one run could match by chance, about once in 10^4; three in a row, never).
  int matched = 0;
  for (int trial = 0; trial < 3; ++trial) {
    Affine want{};
    const std::vector<float2> x = signed_unit_steps(std::size_t{1} << 22, want);
    matched += result_as<Affine>(run<ComposeAffine>(Kernel::reordering, x).result).b == want.b;
  }
  CHECK_MESSAGE(matched < 3, "the reordering kernel kept the order three times");
}

TEST_CASE("13_custom_ops: a user's functors, with and without a transform") {
  for (Kernel k : {Kernel::reordering, Kernel::ordered})
    for (std::size_t n : sizes()) {
      red::test::progress("functors n=" + std::to_string(n));
      const std::vector<float> x = normal(n);
      check_op<user_functors::SumOfSquares>(k, x);
      float largest = 0;
      for (float v : x) largest = std::fabs(v) > std::fabs(largest) ? v : largest;
      CHECK(std::fabs(result_as<float>(run<MaxMagnitude>(k, x).result)) == std::fabs(largest));
    }
}

TEST_CASE("13_custom_ops: the ordered kernel is deterministic and its result does not depend on the start") {
  const std::vector<float> x = normal(3'000'017);
  const DeviceRun at0 = run<LogSumExp<float>>(Kernel::ordered, x);
  for (int r = 0; r < 5; ++r) CHECK(run<LogSumExp<float>>(Kernel::ordered, x).result == at0.result);
  const DeviceRun w0 = run<MeanVariance<float>>(Kernel::ordered, x);
  for (std::size_t offset = 1; offset < 5; ++offset) CHECK(run<MeanVariance<float>>(Kernel::ordered, x, offset).result == w0.result);
}

namespace {
// Kernel k over x on a scratch the caller keeps between calls (its zeroed bytes zeroed once), the
// output poisoned before the call; the result, after checking that the zeroed bytes are zero again.
template <class Op>
RawResult call_on(Kernel k, const std::vector<typename Op::In>& x, const red::DeviceBuffer& scratch) {
  using In = typename Op::In;
  red::DeviceBuffer input(std::max<std::size_t>(1, x.size() * sizeof(In))), output(red::kResultBytes);
  if (!x.empty()) input.upload(x.data(), x.size() * sizeof(In));
  output.fill(0xA5);
  CUDA_CHECK(cudaDeviceSynchronize());
  Call c;
  c.input = input.get();
  c.n = x.size();
  c.output = output.get();
  c.scratch = scratch.get();
  c.scratch_bytes = scratch.bytes();
  launch_with<Op>(k, c);
  CUDA_CHECK(cudaDeviceSynchronize());
  RawResult r{};
  output.download(r.data(), r.size());
  CHECK_MESSAGE(scratch.prefix_is_zero(zeroed_for<Op>(k)), "a call of n = ", x.size(), " left the zeroed bytes nonzero");
  return r;
}
}  // namespace

TEST_CASE("13_custom_ops: one scratch serves calls of any n in turn, the vote kernels") {
  // A one-block call that finds its answer early, then calls of many blocks whose deciding byte
  // lies past every block's first trip (a trip of the GPU's blocks reads about 35 MB on an H200):
  // a flag left set by the first would stop them all before they reach it.
  const std::size_t big = std::size_t{1} << 27;
  const std::size_t sizes[] = {32768, big, 1, 0, 5000, big, 32768, big + 17};
  for (Kernel k : {Kernel::votes_early_exit, Kernel::votes}) {
    red::DeviceBuffer scratch(scratch_for<AnyNonzero>(k, big + 17));
    scratch.zero_prefix(zeroed_for<AnyNonzero>(k));
    for (std::size_t n : sizes) {
      red::test::progress("any on one scratch, kernel " + std::string(kernel_name(k)) + ", n=" + std::to_string(n));
      std::vector<std::uint8_t> x(n, 0);
      if (n > 1) x[n == 32768 ? 100 : n / 2] = 1;
      const bool want = n > 1;
      CHECK_MESSAGE(result_as<int>(call_on<AnyNonzero>(k, x, scratch)) == int(want), "any, kernel ", kernel_name(k), ", n = ", n);
    }
  }
  for (Kernel k : {Kernel::votes_early_exit, Kernel::votes}) {
    red::DeviceBuffer scratch(scratch_for<AllNonzero>(k, big));
    scratch.zero_prefix(zeroed_for<AllNonzero>(k));
    for (std::size_t n : sizes) {
      std::vector<std::uint8_t> x(n, 1);
      if (n > 1) x[n == 32768 ? 100 : n / 2] = 0;
      CHECK_MESSAGE(result_as<int>(call_on<AllNonzero>(k, x, scratch)) == int(n <= 1), "all, kernel ", kernel_name(k), ", n = ", n);
    }
  }
}

TEST_CASE("13_custom_ops: one scratch serves calls of any n in turn, the generic kernels") {
  const std::size_t sizes[] = {32768, std::size_t{1} << 22, 1, 0, 5000, (std::size_t{1} << 22) + 17};
  for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
    red::DeviceBuffer scratch(scratch_for<AnyNonzero>(k, std::size_t{1} << 22));
    scratch.zero_prefix(zeroed_for<AnyNonzero>(k));
    for (std::size_t n : sizes) {
      std::vector<std::uint8_t> x(n, 0);
      if (n > 1) x[n == 32768 ? 100 : n / 2] = 1;
      CHECK_MESSAGE(result_as<int>(call_on<AnyNonzero>(k, x, scratch)) == int(n > 1), "any, kernel ", kernel_name(k), ", n = ", n);
    }
  }
  for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
    red::DeviceBuffer scratch(scratch_for<MinMax<float>>(k, 1 << 22));
    scratch.zero_prefix(zeroed_for<MinMax<float>>(k));
    for (std::size_t n : {std::size_t{3}, std::size_t{1} << 22, std::size_t{1000}, std::size_t{0}, std::size_t{3'000'017}}) {
      const std::vector<float> x = normal(n);
      std::string shown;
      CHECK_MESSAGE(verdict_of<MinMax<float>>(k, x.data(), n, call_on<MinMax<float>>(k, x, scratch), shown).passed,
                    "minmax, kernel ", kernel_name(k), ", n = ", n, ": ", shown);
    }
  }
  red::DeviceBuffer scratch(scratch_for<ComposeAffine>(Kernel::ordered, 1 << 22));
  scratch.zero_prefix(zeroed_for<ComposeAffine>(Kernel::ordered));
  for (std::size_t n : {std::size_t{1} << 22, std::size_t{5}, std::size_t{513}, std::size_t{3'000'017}}) {
    const std::vector<float2> x = generate_unit_steps(n, red::test::fresh_seed());
    const AffineReference want = affine_reference(x.data(), n);
    const Affine got = result_as<Affine>(call_on<ComposeAffine>(Kernel::ordered, x, scratch));
    CHECK_MESSAGE((got.a == want.a && got.b == want.b), "affine, n = ", n);
  }
}

TEST_CASE("13_custom_ops: near-one products - the mantissa/exponent product passes at every n, the float one is not checked") {
  CHECK(product_gamma(1, kUnitRoundoff) == 0);
  CHECK(product_gamma(2, kUnitRoundoff) == doctest::Approx(kUnitRoundoff));
  CHECK(product_gamma((std::size_t{1} << 22) + 1, kUnitRoundoff) == doctest::Approx(1.0 / 3));
  CHECK(std::isinf(product_gamma((std::size_t{1} << 23) + 1, kUnitRoundoff)));
  // 1 + N(0, 10^-4), as the program's near_one: a float product of many such factors drifts low
  // (README, "The product"), so past n = 1678 its verdict is "unbounded: not checked"; the
  // mantissa/exponent product, its mantissa a double, is held to a bound far below 10^-4 at every n.
  for (std::size_t n : {std::size_t{1000}, std::size_t{1} << 20, (std::size_t{1} << 22) + 1, std::size_t{1} << 23,
                        std::size_t{17'000'000}}) {
    red::test::progress("near-one products n=" + std::to_string(n));
    const std::vector<float> x = generate_floats("near_one", n, red::test::fresh_seed());
    for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
      const Verdict scaled = check_op<ScaledProduct<float>>(k, x);
      CHECK(scaled.passed);
      CHECK(scaled.bounded);
      CHECK(scaled.bound < 1e-6);
      const Verdict plain = check_op<Product<float>>(k, x);
      CHECK(plain.bounded == (n < 1679));
      if (!plain.bounded) CHECK_FALSE(plain.passed);
    }
  }
}

TEST_CASE("13_custom_ops: the exact-data gates pass for the kernels that keep their promise, and can fail") {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{100}, std::size_t{1'000'003}, (std::size_t{1} << 24) + 43}) {
    red::test::progress("exact gates n=" + std::to_string(n));
    for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
      for (const GateOutcome& g : {ExactGate<Product<float>>::run(k, n, red::test::fresh_seed()),
                                   ExactGate<ScaledProduct<float>>::run(k, n, red::test::fresh_seed()),
                                   ExactGate<user_functors::SumOfSquares>::run(k, n, 0)}) {
        CHECK(g.ran);
        CHECK_MESSAGE(g.passed, g.why, " (n = ", n, ", kernel ", kernel_name(k), ")");
      }
    }
    const GateOutcome affine = ExactGate<ComposeAffine>::run(Kernel::ordered, n, red::test::fresh_seed());
    CHECK_MESSAGE(affine.passed, affine.why, " (n = ", n, ")");
  }
  // The affine gate catches the reordering kernel (it composes out of order).
  int caught = 0;
  for (int trial = 0; trial < 3; ++trial)
    caught += !ExactGate<ComposeAffine>::run(Kernel::reordering, std::size_t{1} << 22, red::test::fresh_seed()).passed;
  CHECK(caught > 0);
  // The product gate's data: one factor in a few million is not 1, so a dropped or repeated block
  // of ones would pass; a dropped factor would not. Its product is -2^24 whatever the n above 1000.
  double want = 0;
  const std::vector<float> f = generate_exact_factors(1'000'003, 5, want);
  CHECK(want == -16777216.0);
  CHECK(std::count_if(f.begin(), f.end(), [](float v) { return v != 1.0f; }) == 64 + 40 + 3);
}

// ---- above 2^31 elements (ctest's label "large") ----------------------------------------------------

TEST_CASE("large: 13_custom_ops beyond 2^31 elements" * doctest::test_suite("large")) {
  const std::size_t n = (std::size_t{1} << 31) + 7;
  if (red::test::size_above_2_31(sizeof(float)) == 0) {
    MESSAGE("skipped: the device has too little free memory for 2^31 + 7 floats (and a copy)");
    return;
  }
  // argmin's winner past index 2^31, where a 32-bit index would wrap; both kernels.
  std::vector<float> x = generate_floats("uniform", n, red::test::fresh_seed());
  x[n - 3] = -1.0f;
  for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
    red::test::progress(std::string("argmin above 2^31, kernel ") + kernel_name(k));
    const DeviceRun r = run<ArgMin<float>>(k, x);
    const Verdict v = verdict_of<ArgMin<float>>(k, x.data(), n, r.result);
    CHECK_MESSAGE(v.passed, v.why);
    long long index = 0;
    std::memcpy(&index, r.result.data() + 8, 8);
    CHECK(index == static_cast<long long>(n - 3));
  }
  x = {};
  for (Kernel k : {Kernel::reordering, Kernel::ordered}) {
    red::test::progress(std::string("exact sums of squares above 2^31, kernel ") + kernel_name(k));
    const GateOutcome g = ExactGate<user_functors::SumOfSquares>::run(k, n, 0);
    CHECK_MESSAGE(g.passed, g.why);
  }
  // any / all over 2^31 + 7 bytes, the deciding byte at the end, with and without the early exit.
  for (Kernel k : {Kernel::votes, Kernel::votes_early_exit}) {
    red::test::progress(std::string("any / all above 2^31 bytes, kernel ") + kernel_name(k));
    std::vector<std::uint8_t> bytes = generate_bytes(false, "end", n);
    CHECK(result_as<int>(run<AnyNonzero>(k, bytes).result) == 1);
    bytes = generate_bytes(true, "end", n);
    CHECK(result_as<int>(run<AllNonzero>(k, bytes).result) == 0);
  }
}
