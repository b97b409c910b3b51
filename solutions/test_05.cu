#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "device_buffer.hpp"
#include "solutions/05_coarsened.cuh"
#include "test_support.hpp"

using namespace red;

namespace {
constexpr std::size_t kTile = ch05::tile_of<ch05::kCoarsen>();

// Both combines on every ordered pair of values, one pair per thread (count * count threads).
__global__ void both_combines(const float* values, unsigned count, float* early, float* select) {
  const unsigned a = threadIdx.x / count, b = threadIdx.x % count;
  early[threadIdx.x] = sol05::MaxEarlyNan<float>::combine(values[a], values[b]);
  select[threadIdx.x] = Max<float>::combine(values[a], values[b]);
}

}  // namespace

TEST_CASE("solution_05: the early-return combine gives red::Max's results on special values") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {
      test::float_from_bits(0x7FC00000u), test::float_from_bits(0xFFC00001u), -inf, -1.5f, -0.0f, 0.0f, 1e-40f, 2.0f, inf};
  const unsigned count = static_cast<unsigned>(values.size());
  DeviceBuffer in(count * sizeof(float)), early(count * count * sizeof(float)), select(count * count * sizeof(float));
  in.upload(values.data(), count * sizeof(float));
  both_combines<<<1, count * count>>>(static_cast<const float*>(in.get()), count, static_cast<float*>(early.get()),
                                      static_cast<float*>(select.get()));
  CUDA_CHECK_LAUNCH();
  std::vector<float> e(count * count), s(count * count);
  early.download(e.data(), e.size() * sizeof(float));
  select.download(s.data(), s.size() * sizeof(float));
  for (unsigned k = 0; k < count * count; ++k) {
    INFO("combine(", values[k / count], ", ", values[k % count], "): early return ", e[k], ", select ", s[k]);
    const bool any_nan = std::isnan(values[k / count]) || std::isnan(values[k % count]);
    CHECK(std::isnan(e[k]) == any_nan);  // NaN absorbs, in both
    CHECK(std::isnan(s[k]) == any_nan);
    if (!any_nan) CHECK(e[k] == s[k]);
  }
}

TEST_CASE("solution_05: shared size matrix") { test::check_support_matrix(sol05::early_nan_max(), {kTile, kTile * 7}); }

TEST_CASE("solution_05: NaN, infinities and the empty input") { test::check_special_values(sol05::early_nan_max()); }

TEST_CASE("solution_05: NaN in a tail, in many blocks, with any sign and payload") {
  const Chapter& ch = sol05::early_nan_max();
  // The last element of an input that ends inside a tile: the thread that loads it skips the
  // rest of its column.
  for (std::size_t n : {kTile + 1, 3 * kTile + 77}) {
    HostArray a = generate(DType::f32, n, Dist::normal, test::fresh_seed());
    a.set(n - 1, std::nan(""));
    CHECK(std::isnan(test::run_checked(ch, Op::max, a).got.value));
  }
  // A NaN in every 1000th element, alternating sign bits: every block returns NaN, and the CAS
  // loop on the result keeps one.
  const std::size_t n = 1'000'003;
  HostArray a = generate(DType::f32, n, Dist::normal, test::fresh_seed());
  for (std::size_t i = 0; i < n; i += 1000) {
    const float nan = test::float_from_bits(i % 2000 ? 0xFFC00001u : 0x7FC00000u);
    std::memcpy(static_cast<float*>(a.data()) + i, &nan, sizeof nan);
  }
  CHECK(std::isnan(test::run_checked(ch, Op::max, a).got.value));
}

TEST_CASE("solution_05: repeated calls into one output leave nothing stale") {
  test::check_repeated_calls(sol05::early_nan_max(), Op::max, DType::f32, 300'001);
}

TEST_CASE("solution_05: max of all-negative inputs is not 0") {
  test::Outcome o =
      test::run_checked(sol05::early_nan_max(), Op::max, generate(DType::f32, 1'000'003, Dist::negative, 13));
  CHECK(o.got.value < 0);
}

TEST_CASE("solution_05: adversarial inputs") { test::check_adversarial(sol05::early_nan_max()); }

TEST_CASE("solution_05: 10,000 reductions of random n over 4 streams") {
  test::check_stress(sol05::early_nan_max(), Op::max);
}
