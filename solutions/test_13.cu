// Chapter 13's exercise: the maximum prefix sum (solutions/13_custom_ops.cuh) through the
// order-keeping kernel, against a sequential float64 scan; the reordering launcher refuses it, and
// forced through chapter 10's kernel anyway it answers wrong.
#include <cmath>
#include <random>
#include <vector>

#include "13_custom_ops/host_reference.hpp"
#include "solutions/13_custom_ops.cuh"
#include "test_support.hpp"

namespace {

struct Want {
  double s = 0, m = 0, abs_sum = 0;  // the sum, the largest prefix sum, and sum |x| (the bound's scale)
};
Want scan(const std::vector<float>& x) {
  Want w;
  for (float v : x) {
    w.s += v;
    w.m = std::max(w.m, w.s);
    w.abs_sum += std::fabs(v);
  }
  return w;
}

// A walk with a drift: its largest prefix sum is far from its end, and far from its start.
std::vector<float> walk(std::size_t n, float drift) {
  std::mt19937_64 rng(red::test::fresh_seed());
  std::normal_distribution<float> step(drift, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = step(rng);
  return x;
}

sol12::PrefixSummary run(ch13::Kernel k, const std::vector<float>& x) {
  const ch13::DeviceRun r = ch13::run_on_device<sol12::MaxPrefixSum>(k, x.data(), x.size());
  CHECK(r.same_twice);
  CHECK(r.counters_zero);
  return ch13::result_as<sol12::PrefixSummary>(r.result);
}

}  // namespace

TEST_CASE("solution 12: the maximum prefix sum keeps its order through the ordered kernel") {
  for (std::size_t n : red::test::shared_sizes({32 * 32 * 8})) {
    red::test::progress("max prefix sum n=" + std::to_string(n));
    for (float drift : {0.01f, -0.01f}) {
      const std::vector<float> x = walk(n, drift);
      const Want want = scan(x);
      const sol12::PrefixSummary got = run(ch13::Kernel::ordered, x);
      // Every prefix sum is a sum: within a sum's bound of its exact value, so the largest too.
      const double bound = (ch13::depth<sol12::MaxPrefixSum>(ch13::Kernel::ordered, n) + 2) * ch13::kEps * want.abs_sum;
      CHECK_MESSAGE(std::fabs(got.s - want.s) <= bound, "sum, n = ", n);
      CHECK_MESSAGE(std::fabs(got.m - want.m) <= bound, "largest prefix sum, n = ", n, ": ", got.m, " against ", want.m);
    }
  }
  const sol12::PrefixSummary empty = run(ch13::Kernel::ordered, {});
  CHECK(empty.s == 0.0f);
  CHECK(empty.m == 0.0f);
}

TEST_CASE("solution 12: chapter 10's kernel is refused, and wrong when forced") {
  CHECK_THROWS_AS(ch13::launch<sol12::MaxPrefixSum>(ch13::Call{}), std::invalid_argument);
  // Up for the first half, down for the second: the largest prefix sum is at the middle. A thread
  // of chapter 10's kernel holds pieces from both halves, each summary right for its own elements;
  // combined as if adjacent, the halves cancel inside every thread's summary before the next
  // thread's rise is added, and the maximum comes out a small fraction of the true one.
  std::vector<float> x = walk(std::size_t{1} << 22, 0.01f);
  for (std::size_t i = x.size() / 2; i < x.size(); ++i) x[i] -= 0.02f;
  const Want want = scan(x);
  const sol12::PrefixSummary got = run(ch13::Kernel::reordering, x);
  const double bound = (ch13::depth<sol12::MaxPrefixSum>(ch13::Kernel::reordering, x.size()) + 2) * ch13::kEps * want.abs_sum;
  CHECK(std::fabs(got.s - want.s) <= bound);  // the sum commutes: right
  CHECK_MESSAGE(std::fabs(got.m - want.m) > bound, "the reordered maximum happened to be right: ", got.m);
}
