#include <cmath>
#include <limits>
#include <type_traits>

#include "chapter.cuh"
#include "test_support.hpp"

using namespace red;

TEST_CASE("09_cub_comparison: shared size matrix, every op and dtype it wraps") {
  // CUB's tiles: 256 threads x 16 items = 4096 on sm_90 (the single-tile limit), and 5 blocks per
  // resident block slot beyond that.
  test::check_support_matrix(ch09::chapter(), {4096, std::size_t{1} << 20});
}

TEST_CASE("09_cub_comparison: NaN and the empty input") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const OpDType& p : ch09::chapter().support) {
    test::run_checked(ch09::chapter(), p.op, HostArray(p.dtype, 0));  // our identity, see reduce.cuh
    if (p.op != Op::sum) continue;
    for (std::size_t pos : {std::size_t{0}, std::size_t{50'001}, std::size_t{100'002}}) {
      HostArray a = generate(p.dtype, 100'003, Dist::normal, test::fresh_seed());
      a.set(pos, nan);
      CHECK(std::isnan(test::run_checked(ch09::chapter(), p.op, a).got.value));  // IEEE addition, any order
    }
  }
  // Max and Min promise nothing about NaN: cuda::maximum is (a < b) ? b : a, so a NaN survives
  // only where it sits on the left of every comparison. Reported, not asserted.
  for (std::size_t pos : {std::size_t{0}, std::size_t{50'001}, std::size_t{100'002}}) {
    HostArray a = generate(DType::f32, 100'003, Dist::normal, test::fresh_seed());
    a.set(pos, nan);
    DeviceInput in = upload(a);
    Workspace ws(ch09::chapter(), Op::max, DType::f32, a.n);
    const DeviceResult got = decode_result(
        run_once(ch09::chapter(), make_call(Op::max, DType::f32, in.data, a.n, ws, nullptr), ws), DType::f32, Op::max);
    MESSAGE("cub::DeviceReduce::Max with a NaN at index ", pos, " of 100003: ", got.value);
  }
}

TEST_CASE("09_cub_comparison: repeated calls into one output and scratch leave nothing stale") {
  for (Op op : {Op::sum, Op::max, Op::argmax}) test::check_repeated_calls(ch09::chapter(), op, DType::f32, 300'001);
}

TEST_CASE("09_cub_comparison: misaligned starts") { test::check_misaligned_starts(ch09::chapter()); }

TEST_CASE("09_cub_comparison: more than 2^31 elements" * doctest::test_suite("large")) {
  test::check_above_2_31(ch09::chapter());
}

TEST_CASE("09_cub_comparison: the two-phase API is run-to-run deterministic, as documented") {
  const std::size_t n = (1 << 24) + 3;
  HostArray a = generate(DType::f32, n, Dist::normal, test::fresh_seed());
  DeviceInput in = upload(a);
  Workspace ws(ch09::chapter(), Op::sum, DType::f32, n);
  ReduceCall call = make_call(Op::sum, DType::f32, in.data, n, ws, nullptr);
  CHECK(test::distinct_results(ch09::chapter(), call, ws, 100) == 1);
}

// The type cub::DeviceReduce::Sum accumulates in: DispatchReduce's AccumT is
// cuda::std::__accumulator_t<operator, input value, init>, and Sum's init has the output's type.
// For __half in and out that is __half. (An internal name of the installed CCCL: if a new version
// changes the rule, this stops compiling and the README's pitfall section needs a new look.)
static_assert(std::is_same_v<cuda::std::__accumulator_t<cuda::std::plus<>, __half, __half>, __half>,
              "Sum of __half into __half accumulates in __half");
static_assert(std::is_same_v<cuda::std::__accumulator_t<cuda::std::plus<float>, float, float>, float>,
              "TransformReduce with plus<float> and a float init accumulates in float");

TEST_CASE("09_cub_comparison: the pitfall, Sum of __half into __half accumulates in __half") {
  // 100,000 ones: the exact sum, 100000, is beyond f16's largest finite value (65504); an f16
  // accumulator cannot hold it, and what comes back depends on the order of additions (printed).
  // The chapter's TransformReduce accumulates in f32 and must return it exactly.
  const std::size_t n = 100'000;
  HostArray ones(DType::f16, n);
  for (std::size_t i = 0; i < n; ++i) ones.set(i, 1.0);
  DeviceInput in = upload(ones);
  DeviceBuffer out(sizeof(__half));
  std::size_t bytes = 0;
  const auto* d_in = static_cast<const __half*>(in.data);
  auto* d_out = static_cast<__half*>(out.get());
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, d_in, d_out, static_cast<int>(n)));
  DeviceBuffer temp(bytes);
  CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), bytes, d_in, d_out, static_cast<int>(n)));
  __half h;
  out.download(&h, sizeof h);
  MESSAGE("cub::DeviceReduce::Sum(__half -> __half) of 100000 ones: ", __half2float(h));

  const test::Outcome widened = test::run_checked(ch09::chapter(), Op::sum, ones);
  CHECK(widened.got.value == 100000.0);
}

TEST_CASE("09_cub_comparison: adversarial inputs") {
  // The shared set (all equal, heavy cancellation, subnormals, 16-bit sums past f16's range).
  // None of them puts a NaN into Max or Min, whose NaN behaviour CUB leaves open (above).
  test::check_adversarial(ch09::chapter());
}
