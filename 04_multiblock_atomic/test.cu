#include <cstring>
#include <set>

#include "chapter.cuh"
#include "test_support.hpp"

using namespace red;

TEST_CASE("04_multiblock_atomic: shared size matrix, every supported op") {
  // One block covers 512 elements; every size above takes several blocks and atomics.
  test::check_support_matrix(ch04::chapter(), {ch04::kTile, ch04::kTile * ch04::kTile});
}

TEST_CASE("04_multiblock_atomic: NaN, infinities and the empty input") { test::check_special_values(ch04::chapter()); }

TEST_CASE("04_multiblock_atomic: repeated calls into one output leave nothing stale") {
  // The launcher resets the output to the identity itself; a stale sum or max would show here.
  for (Op op : {Op::sum, Op::max, Op::min}) test::check_repeated_calls(ch04::chapter(), op, DType::f32, 300'001);
}

TEST_CASE("04_multiblock_atomic: max of all-negative inputs is not 0") {
  // A result initialised with 0 instead of -inf would return 0 here.
  test::Outcome o = test::run_checked(ch04::chapter(), Op::max, generate(DType::f32, 1'000'003, Dist::negative, 7));
  CHECK(o.got.value < 0);
}

TEST_CASE("04_multiblock_atomic: float sums are not bitwise reproducible, but always within the bound") {
  const std::size_t n = 1 << 24;
  HostArray host = generate(DType::f32, n, Dist::normal, test::fresh_seed());
  DeviceInput in = upload(host);
  const Reference ref = reference(host, Op::sum);
  Workspace ws(ch04::chapter(), Op::sum, DType::f32, n);
  ReduceCall call = make_call(Op::sum, DType::f32, in.data, n, ws, nullptr);
  std::set<std::uint32_t> distinct_bits;
  for (int run = 0; run < 30; ++run) {
    DeviceResult got = decode_result(run_once(ch04::chapter(), call, ws), DType::f32, Op::sum);
    CHECK(check_result(ch04::chapter(), ref, got, DType::f32, Op::sum, n).passed);
    const float f = static_cast<float>(got.value);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    distinct_bits.insert(bits);
  }
  // Reported, not asserted: the arrival order of the blocks decides the rounding.
  MESSAGE("04_multiblock_atomic: 30 runs of the same 2^24-element sum gave ", distinct_bits.size(),
          " distinct bit patterns");
}

TEST_CASE("04_multiblock_atomic: misaligned starts") { test::check_misaligned_starts(ch04::chapter()); }

TEST_CASE("04_multiblock_atomic: more than 2^31 elements" * doctest::test_suite("large")) {
  test::check_above_2_31(ch04::chapter());
}

TEST_CASE("04_multiblock_atomic: adversarial inputs") { test::check_adversarial(ch04::chapter()); }

TEST_CASE("04_multiblock_atomic: 10,000 reductions of random n over 4 streams") {
  for (Op op : {Op::sum, Op::max}) test::check_stress(ch04::chapter(), op);
}
