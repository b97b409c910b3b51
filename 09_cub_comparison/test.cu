#include <cmath>
#include <limits>
#include <set>
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
}

TEST_CASE("09_cub_comparison: NaN, infinities and the empty input, with this project's semantics") {
  test::check_special_values(ch09::chapter());
}

namespace {
DeviceResult run_builtin(Op op, const HostArray& a) {
  const Chapter& builtin = ch09::builtin();
  DeviceInput in = upload(a);
  Workspace ws(builtin, op, a.dtype, a.n);
  return decode_result(run_once(builtin, make_call(op, a.dtype, in.data, a.n, ws, nullptr), ws), a.dtype, op);
}
}  // namespace

TEST_CASE("09_cub_comparison: what cub::DeviceReduce::Max, Min and ArgMax do, as shipped") {
  // They end with *d_out = op(init, aggregate), init = lowest() (max() for Min), even for a
  // non-empty input (cub/device/dispatch/kernels/reduce.cuh, finalize_and_store_aggregate), and
  // cuda::maximum is (a < b) ? b : a. So an all -inf input gives lowest(), a value below every
  // element...
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(run_builtin(Op::max, filled(DType::f32, 100'003, -inf)).value == -std::numeric_limits<float>::max());
  CHECK(run_builtin(Op::min, filled(DType::f32, 100'003, inf)).value == std::numeric_limits<float>::max());
  // ...and a NaN at index 0 stays on the left of every comparison up to the aggregate, which the
  // last step then drops for init: lowest() again, where every other chapter returns NaN.
  HostArray a = generate(DType::f32, 100'003, Dist::normal, test::fresh_seed());
  a.set(0, nan);
  CHECK(run_builtin(Op::max, a).value == -std::numeric_limits<float>::max());
  CHECK(std::isnan(test::run_checked(ch09::chapter(), Op::max, a).got.value));
  // ArgMax compares with > and ==, so a NaN never wins from the right; where it lands depends on
  // the tree. Reported, not asserted; this chapter's answer (the first NaN) is asserted.
  HostArray b = generate(DType::f32, 100'003, Dist::uniform, test::fresh_seed());
  b.set(0, 1.0);
  b.set(1, nan);
  b.set(2, 2.0);
  b.set(3, 0.0);
  MESSAGE("cub::DeviceReduce::ArgMax of [1, NaN, 2, 0, ...]: index ", run_builtin(Op::argmax, b).index);
  CHECK(test::run_checked(ch09::chapter(), Op::argmax, b).got.index == 1);
  // On inputs without NaN or infinities the two agree with every chapter.
  for (Op op : {Op::max, Op::min, Op::argmax}) test::check_sizes(ch09::builtin(), op, DType::f32, {3'000'017});
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
  test::check_adversarial(ch09::chapter());
}

TEST_CASE("09_cub_comparison: the remembered size query answers what CUB answers, n after n") {
  // scratch_bytes asks CUB once per n and device and keeps the answer (red::remembered_scratch_query),
  // so a timed call holds one dispatch of CUB, not two. Each answer must still be the fresh one.
  using Op = Sum<float>;
  std::set<std::size_t> answers;
  for (std::size_t n : {std::size_t{1000}, std::size_t{1} << 20, std::size_t{1000}, std::size_t{3} << 30,
                        std::size_t{1} << 20, std::size_t{5}}) {
    INFO("n=", n);
    const std::size_t fresh = scratch_query(n, ch09::cub_call<Op>);
    CHECK(ch09::scratch_bytes<Op>(n) == fresh);
    answers.insert(fresh);
  }
  CHECK(answers.size() >= 2);  // sizes that CUB sizes differently, or a stale answer could pass
}
