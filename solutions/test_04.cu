#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "solutions/04_multiblock_atomic.cuh"
#include "test_support.hpp"

using namespace red;

namespace {
constexpr std::size_t kTile = ch04::kTile;

// The sizes where a slot count matters: one block, the first block that shares a slot (past
// slots * kTile elements), several rounds of the slots.
std::vector<std::size_t> slot_edges(std::size_t slots) {
  const std::size_t wrap = slots * kTile;
  return {1, kTile - 1, kTile, kTile + 1, wrap - 1, wrap, wrap + 1, 3 * wrap + 5, 1'000'003};
}

void set_float(HostArray& a, std::size_t i, float v) { std::memcpy(static_cast<float*>(a.data()) + i, &v, sizeof v); }

}  // namespace

// ---- the sum over K slots ------------------------------------------------------------------

TEST_CASE("solution_04 spread sum: shared size matrix, every dtype, K = 1, 16, 256") {
  test::check_support_matrix(sol04::spread_sum<1>(), {kTile, kTile * kTile});
  test::check_support_matrix(sol04::spread_sum<16>(), {kTile, 16 * kTile});
  test::check_support_matrix(sol04::spread_sum<256>(), {kTile, 256 * kTile});
}

TEST_CASE("solution_04 spread sum: every K is exact on small integers around its slot edges") {
  std::size_t slots = 1;
  for (const Chapter* ch : sol04::spread_sums()) {
    INFO(ch->kernel_name(Op::sum, DType::f32));
    test::check_sizes(*ch, Op::sum, DType::f32, slot_edges(slots), Dist::ints);
    test::check_sizes(*ch, Op::sum, DType::i32, {slots * kTile + 1, 1'000'003}, Dist::normal);
    slots *= 2;
  }
}

TEST_CASE("solution_04 spread sum: NaN, infinities and the empty input") {
  for (const Chapter* ch : {&sol04::spread_sum<1>(), &sol04::spread_sum<8>(), &sol04::spread_sum<256>()})
    test::check_special_values(*ch);
}

TEST_CASE("solution_04 spread sum: repeated calls into one output and scratch leave nothing stale") {
  for (const Chapter* ch : {&sol04::spread_sum<1>(), &sol04::spread_sum<32>(), &sol04::spread_sum<256>()})
    for (DType t : {DType::f32, DType::i64}) test::check_repeated_calls(*ch, Op::sum, t, 300'001);
}

TEST_CASE("solution_04 spread sum: bitwise reproducible only while every slot takes at most one block") {
  const Chapter& ch = sol04::spread_sum<256>();
  // 256 blocks into 256 slots: each slot is 0 + one block's value (exact), and the slots are
  // added in a fixed tree, so the bits never change.
  for (std::size_t n : {256 * kTile, 200 * kTile + 17}) {
    HostArray host = generate(DType::f32, n, Dist::normal, test::fresh_seed());
    DeviceInput in = upload(host);
    Workspace ws(ch, Op::sum, DType::f32, n);
    CHECK(test::distinct_results(ch, make_call(Op::sum, DType::f32, in.data, n, ws, nullptr), ws, 20) == 1);
  }
  // Beyond that a slot adds blocks in their order of arrival again: reported, not asserted.
  const std::size_t n = std::size_t{1} << 24;
  HostArray host = generate(DType::f32, n, Dist::normal, test::fresh_seed());
  DeviceInput in = upload(host);
  Workspace ws(ch, Op::sum, DType::f32, n);
  const std::size_t distinct =
      test::distinct_results(ch, make_call(Op::sum, DType::f32, in.data, n, ws, nullptr), ws, 30);
  MESSAGE("solution_04 spread sum, K = 256: 30 runs of the same 2^24-element sum gave ", distinct,
          " distinct bit patterns");
}

TEST_CASE("solution_04 spread sum: misaligned starts") { test::check_misaligned_starts(sol04::spread_sum<16>()); }

TEST_CASE("solution_04 spread sum: adversarial inputs") { test::check_adversarial(sol04::spread_sum<16>()); }

TEST_CASE("solution_04 spread sum: 2,000 reductions of random n over 4 streams") {
  test::check_stress(sol04::spread_sum<64>(), Op::sum, 2'000);
}

TEST_CASE("solution_04 spread sum: more than 2^31 elements" * doctest::test_suite("large")) {
  const std::size_t n = test::size_above_2_31(sizeof(float));
  if (n == 0) {
    MESSAGE("skipped: the device has too little free memory for 2^31 + 7 floats");
    return;
  }
  test::Outcome o =
      test::run_checked(sol04::spread_sum<256>(), Op::sum, generate(DType::f32, n, Dist::ints, test::fresh_seed()));
  CHECK(o.got.value == o.ref.value);
}

// ---- argmax in one 64-bit word -------------------------------------------------------------

TEST_CASE("solution_04 packed argmax: shared size matrix") {
  test::check_support_matrix(sol04::packed_argmax(), {kTile, kTile * kTile});
}

TEST_CASE("solution_04 packed argmax: NaN, infinities and the empty input") {
  test::check_special_values(sol04::packed_argmax());
}

TEST_CASE("solution_04 packed argmax: repeated calls into one output and scratch leave nothing stale") {
  test::check_repeated_calls(sol04::packed_argmax(), Op::argmax, DType::f32, 300'001);
}

TEST_CASE("solution_04 packed argmax: misaligned starts") { test::check_misaligned_starts(sol04::packed_argmax()); }

TEST_CASE("solution_04 packed argmax: adversarial inputs") { test::check_adversarial(sol04::packed_argmax()); }

TEST_CASE("solution_04 packed argmax: ties go to the smaller index, -0 ties with +0") {
  const Chapter& ch = sol04::packed_argmax();
  const std::size_t n = 1'000'003;
  // The maximum three times, in three different blocks, the first one not in block 0.
  HostArray a = generate(DType::f32, n, Dist::uniform, test::fresh_seed());
  for (std::size_t i : {std::size_t{900'000}, std::size_t{70'001}, n - 1}) a.set(i, 5.0);
  CHECK(test::run_checked(ch, Op::argmax, a).got.index == 70'001);
  // Zeros of both signs above negative numbers: equal as floats, so the first zero wins.
  HostArray zeros = generate(DType::f32, n, Dist::negative, test::fresh_seed());
  set_float(zeros, 600'000, 0.0f);
  set_float(zeros, 12'345, -0.0f);
  set_float(zeros, 12'346, 0.0f);
  CHECK(test::run_checked(ch, Op::argmax, zeros).got.index == 12'345);
  // Every element equal: index 0, in every block.
  CHECK(test::run_checked(ch, Op::argmax, filled(DType::f32, n, -2.5)).got.index == 0);
}

TEST_CASE("solution_04 packed argmax: -inf, +inf and NaNs of either sign and any payload") {
  const Chapter& ch = sol04::packed_argmax();
  const float inf = std::numeric_limits<float>::infinity();
  const std::size_t n = 300'007;
  // +inf beats every number; a NaN beats +inf; among NaNs, whatever their sign bit and payload,
  // the first wins (a negative NaN's bits would sort below -inf if the key did not catch it).
  HostArray a = filled(DType::f32, n, -inf);
  set_float(a, 250'000, inf);
  CHECK(test::run_checked(ch, Op::argmax, a).got.index == 250'000);
  set_float(a, 200'000, test::float_from_bits(0x7FC00000u));  // +NaN
  set_float(a, 150'000, test::float_from_bits(0xFFC00001u));  // -NaN with a payload
  set_float(a, 290'000, test::float_from_bits(0x7F800001u));  // a signalling NaN
  test::Outcome o = test::run_checked(ch, Op::argmax, a);
  CHECK(o.got.index == 150'000);
  CHECK(std::isnan(o.got.value));
  // Only -inf: the first element, not the empty input's -1.
  o = test::run_checked(ch, Op::argmax, filled(DType::f32, n, -inf));
  CHECK(o.got.index == 0);
  CHECK(o.got.value == -inf);
  // One element.
  HostArray one(DType::f32, 1);
  set_float(one, 0, test::float_from_bits(0xFFFFFFFFu));
  o = test::run_checked(ch, Op::argmax, one);
  CHECK(o.got.index == 0);
  CHECK(std::isnan(o.got.value));
}

TEST_CASE("solution_04 packed argmax: more than 2^32 elements are refused before anything runs") {
  const Chapter& ch = sol04::packed_argmax();
  Workspace ws(ch, Op::argmax, DType::f32, 1);
  ws.output.fill(0x5A);
  // Never read: the launcher must throw before it queues a kernel. A real pointer would need 16 GiB.
  const auto* never_read = reinterpret_cast<const float*>(std::uintptr_t{1} << 40);
  for (std::size_t n : {sol04::kMaxPackedElements + 1, std::size_t{1} << 33, std::size_t{1} << 40}) {
    INFO("n = ", n);
    ReduceCall call = make_call(Op::argmax, DType::f32, never_read, n, ws, nullptr);
    CHECK_THROWS_AS(ch.launch(call), std::invalid_argument);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(cudaGetLastError() == cudaSuccess);
  std::uint8_t bytes[kResultBytes];
  ws.output.download(bytes, sizeof bytes);
  for (std::uint8_t b : bytes) CHECK(b == 0x5A);  // untouched: no kernel ran
  // Other dtypes are not served at all.
  CHECK_FALSE(ch.supports(Op::argmax, DType::f64));
  CHECK_THROWS_AS(ch.launch(make_call(Op::argmax, DType::f64, never_read, 10, ws, nullptr)), std::invalid_argument);
}

TEST_CASE("solution_04 packed argmax: more than 2^31 elements, the winner past 2^31" * doctest::test_suite("large")) {
  const std::size_t n = test::size_above_2_31(sizeof(float));
  if (n == 0) {
    MESSAGE("skipped: the device has too little free memory for 2^31 + 7 floats");
    return;
  }
  HostArray a = generate(DType::f32, n, Dist::ints, test::fresh_seed());
  a.set(n - 3, 100.0);
  a.set(n - 2, 100.0);
  test::Outcome o = test::run_checked(sol04::packed_argmax(), Op::argmax, a);
  CHECK(o.got.index == static_cast<std::int64_t>(n - 3));
}
