// Chapter 08's exercise: Σ a_i·b_i and Σ a_i² in one pass (solutions/08_dot_product.cuh). The dot
// product goes through the shared matrix like every chapter's; Σ a_i², which the shared checks do
// not know about, is checked here against a float64 reference.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "solutions/08_dot_product.cuh"
#include "test_support.hpp"

using namespace red;

namespace {
const Chapter& ch() { return sol08::chapter(); }

const std::initializer_list<std::size_t> kTiles = {4096, 8192, std::size_t{1} << 22};

// Σ a_i², the float at offset 8 of the result, decoded as a dot product's value.
DeviceResult decode_squares(const RawResult& raw, DType t) {
  RawResult moved{};
  std::memcpy(moved.data(), raw.data() + sol08::kSquaresOffset, sizeof(float));
  return decode_result(moved, t, Op::dot);
}

struct Both {
  DeviceResult dot, squares;
  RawResult raw;
};

// One call on a (and b) placed `offset_a` (`offset_b`) elements past an aligned start; both sums
// checked. Σ a_i² is a_i · a_i summed, so reference_dot(a, a) is its float64 compensated sum of
// exact products, and check_result holds it to the dot product's bound, the project's sum bound
// (depth + 1) · eps · Σ|x| with one more rounding per product: (depth + 2) · 2^-23 · Σ a_i².
Both run_and_check(const HostArray& a, const HostArray& b, std::size_t offset_a = 0, std::size_t offset_b = 0) {
  const DType t = a.dtype;
  const std::size_t n = a.n;
  INFO("dtype=", std::string(name(t)), " n=", n, " offset of a=", offset_a, " offset of b=", offset_b);
  const DeviceInput in_a = upload(a, offset_a), in_b = upload(b, offset_b);
  const Workspace ws(ch(), Op::dot, t, n);
  Both got;
  got.raw = run_once(ch(), make_call(Op::dot, t, in_a.data, n, ws, nullptr, in_b.data), ws);
  got.dot = decode_result(got.raw, t, Op::dot);
  got.squares = decode_squares(got.raw, t);
  const CheckOutcome dot = check_result(ch(), reference_dot(a, b), got.dot, t, Op::dot, n);
  const CheckOutcome squares = check_result(ch(), reference_dot(a, a), got.squares, t, Op::dot, n);
  INFO("dot: ", got.dot.value, " error ", dot.abs_error, " bound ", dot.bound, " ", dot.why);
  INFO("sum of squares: ", got.squares.value, " error ", squares.abs_error, " bound ", squares.bound, " ", squares.why);
  CHECK(dot.passed);
  CHECK(squares.passed);
  CHECK(device_holds(in_a, a));
  CHECK(device_holds(in_b, b));
  return got;
}

Both run_and_check(DType t, std::size_t n, Dist dist) {
  const HostArray a = generate(t, n, dist, test::fresh_seed()), b = generate(t, n, dist, test::fresh_seed());
  const Both got = run_and_check(a, b);
  // Squares of small integers (at most 64) add exactly in float in any order while the total
  // stays below 2^24: the bound is not needed, and a lost or doubled element cannot hide in it.
  if (dist == Dist::ints && n * 64 < (std::size_t{1} << 24)) CHECK(got.squares.value == reference_dot(a, a).value);
  return got;
}

constexpr DType kTypes[] = {DType::f32, DType::f16, DType::bf16};
}  // namespace

TEST_CASE("solution_08: shared size matrix for the dot product, every dtype") {
  // 08's tile edges: one block trip of f32 (4096) and of 16-bit inputs (8192), and 2^22, where
  // the grid stops growing.
  test::check_support_matrix(ch(), kTiles);
}

TEST_CASE("solution_08: the sum of squares, every dtype, the shared sizes and distributions") {
  for (DType t : kTypes) {
    for (std::size_t n : test::shared_sizes(kTiles)) run_and_check(t, n, Dist::normal);
    for (std::size_t n : {std::size_t{1000}, std::size_t{65'537}, std::size_t{1'000'003}})
      run_and_check(t, n, Dist::ints);
    for (Dist dist : {Dist::uniform, Dist::negative, Dist::signs})
      for (std::size_t n : {std::size_t{4097}, std::size_t{1'000'003}}) run_and_check(t, n, dist);
  }
}

TEST_CASE("solution_08: both sums at misaligned starts, and their bits do not depend on them") {
  for (DType t : {DType::f32, DType::bf16}) {
    const std::size_t n = (std::size_t{1} << 22) + 3;
    const HostArray a = generate(t, n, Dist::normal, test::fresh_seed());
    const HostArray b = generate(t, n, Dist::normal, test::fresh_seed());
    const RawResult aligned = run_and_check(a, b).raw;
    const std::size_t per_vector = 16 / size_of(t);
    for (std::size_t offset = 1; offset <= per_vector + 1; ++offset) {
      const std::size_t offset_b = (offset * 3 + 1) % (per_vector + 2);
      CHECK(run_and_check(a, b, offset, offset_b).raw == aligned);
    }
  }
}

TEST_CASE("solution_08: NaN and infinities in one vector reach the sums that use it") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::size_t n = 100'003;
  for (DType t : kTypes) {
    for (std::size_t pos : {std::size_t{0}, n / 2, n - 1}) {
      HostArray a = generate(t, n, Dist::normal, test::fresh_seed()),
                b = generate(t, n, Dist::normal, test::fresh_seed());
      b.set(pos, nan);  // only the dot product reads b
      Both got = run_and_check(a, b);
      CHECK(std::isnan(got.dot.value));
      CHECK(std::isfinite(got.squares.value));
      a.set(pos, nan);
      got = run_and_check(a, b);
      CHECK(std::isnan(got.squares.value));
    }
    HostArray a = generate(t, n, Dist::uniform, test::fresh_seed()),
              b = generate(t, n, Dist::uniform, test::fresh_seed());
    a.set(n / 3, -inf);
    b.set(n / 3, 0.0);
    const Both got = run_and_check(a, b);
    CHECK(std::isnan(got.dot.value));  // -inf · 0
    CHECK(got.squares.value == inf);   // (-inf)² = inf
  }
}

TEST_CASE("solution_08: the empty input gives 0 for both sums") {
  for (DType t : kTypes) {
    const Both got = run_and_check(HostArray(t, 0), HostArray(t, 0));
    CHECK(got.dot.value == 0);
    CHECK(got.squares.value == 0);
  }
}

TEST_CASE("solution_08: NaN, infinities and the empty input (the dot product's shared cases)") {
  test::check_special_values(ch());
}

TEST_CASE("solution_08: bitwise identical over 100 runs, both sums") {
  for (DType t : {DType::f32, DType::f16}) {
    const std::size_t n = (1 << 24) + 3;
    const HostArray a = generate(t, n, Dist::normal, test::fresh_seed());
    const HostArray b = generate(t, n, Dist::normal, test::fresh_seed());
    const DeviceInput in_a = upload(a), in_b = upload(b);
    const Workspace ws(ch(), Op::dot, t, n);
    const ReduceCall call = make_call(Op::dot, t, in_a.data, n, ws, nullptr, in_b.data);
    CHECK(test::distinct_results(ch(), call, ws, 100) == 1);  // all 16 bytes of the result
  }
}

TEST_CASE("solution_08: repeated calls into one output and scratch leave nothing stale") {
  for (DType t : {DType::f32, DType::bf16}) test::check_repeated_calls(ch(), Op::dot, t, 300'001);
}

TEST_CASE("solution_08: misaligned starts (the dot product's shared cases)") { test::check_misaligned_starts(ch()); }

TEST_CASE("solution_08: adversarial inputs (the dot product's shared cases)") { test::check_adversarial(ch()); }
