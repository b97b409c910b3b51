#include <atomic>
#include <thread>
#include <vector>

#include "baselines.cuh"
#include "chapter.cuh"
#include "test_support.hpp"

using namespace red;

namespace {
const Chapter* const kSteps[] = {&ch08::chapter_step<ch08::Step::shared>(),
                                 &ch08::chapter_step<ch08::Step::coarsened>(), &ch08::chapter_step<ch08::Step::fma>(),
                                 &ch08::chapter_step<ch08::Step::two_pass>()};
}

TEST_CASE("08_dot_product: shared size matrix, every step and dtype") {
  // Tiles: 512 (dot_shared), 8192 (the coarsened steps), 4096 and 8192 (one block trip of
  // dot_two_pass for f32 and 16-bit inputs) and 2^22 (where its grid stops growing).
  for (const Chapter* step : kSteps) test::check_support_matrix(*step, {512, 4096, 8192, std::size_t{1} << 22});
}

TEST_CASE("08_dot_product: NaN, infinities and the empty input") {
  for (const Chapter* step : kSteps) test::check_special_values(*step);
}

TEST_CASE("08_dot_product: repeated calls into one output and scratch leave nothing stale") {
  for (const Chapter* step : kSteps)
    for (DType t : {DType::f32, DType::bf16}) test::check_repeated_calls(*step, Op::dot, t, 300'001);
}

TEST_CASE("08_dot_product: misaligned starts, the same for both vectors") {
  for (const Chapter* step : kSteps) test::check_misaligned_starts(*step);
}

TEST_CASE("08_dot_product: dot_two_pass's bits do not depend on where a and b start") {
  test::check_alignment_independence(ch08::chapter(), (std::size_t{1} << 22) + 3);
}

TEST_CASE("08_dot_product: vectors at different offsets from a 16-byte boundary") {
  // dot_two_pass reads each vector as wide as its own address allows.
  for (std::size_t offset_b : {1, 2, 3}) {
    const std::size_t n = 1'000'003;
    HostArray a = generate(DType::f32, n, Dist::normal, test::fresh_seed());
    HostArray b = generate(DType::f32, n, Dist::normal, test::fresh_seed());
    DeviceInput in_a = upload(a), in_b = upload(b, offset_b);
    Workspace ws(ch08::chapter(), Op::dot, DType::f32, n);
    ReduceCall call = make_call(Op::dot, DType::f32, in_a.data, n, ws, nullptr, in_b.data);
    const DeviceResult got = decode_result(run_once(ch08::chapter(), call, ws), DType::f32, Op::dot);
    const CheckOutcome c = check_result(ch08::chapter(), reference_dot(a, b), got, DType::f32, Op::dot, n);
    INFO("offset of b: ", offset_b, ", ", c.why, " error=", c.abs_error, " bound=", c.bound);
    CHECK(c.passed);
  }
}

TEST_CASE("08_dot_product: dot_two_pass is bitwise identical over 100 runs") {
  for (DType t : {DType::f32, DType::f16}) {
    const std::size_t n = (1 << 24) + 3;
    HostArray a = generate(t, n, Dist::normal, test::fresh_seed()),
              b = generate(t, n, Dist::normal, test::fresh_seed());
    DeviceInput in_a = upload(a), in_b = upload(b);
    Workspace ws(ch08::chapter(), Op::dot, t, n);
    ReduceCall call = make_call(Op::dot, t, in_a.data, n, ws, nullptr, in_b.data);
    CHECK(test::distinct_results(ch08::chapter(), call, ws, 100) == 1);
  }
}

TEST_CASE("08_dot_product: FMA against a rounded product, same data") {
  // Reported, not asserted beyond the bound: fmaf rounds once per element instead of twice.
  const std::size_t n = 1 << 24;
  HostArray a = generate(DType::f32, n, Dist::normal, test::fresh_seed());
  HostArray b = generate(DType::f32, n, Dist::normal, test::fresh_seed());
  for (const Chapter* step : {kSteps[1], kSteps[2]}) {
    test::Outcome o = test::run_checked(*step, Op::dot, a, 0, &b);
    MESSAGE(step->kernel_name(Op::dot, DType::f32), ": |error| = ", o.check.abs_error, " (bound ", o.check.bound, ")");
  }
}

TEST_CASE("08_dot_product: the library baselines") {
  const std::vector<std::size_t> sizes = {1, 33, 1025, 65'537, 3'000'017};
  test::check_sizes(ch08::cublas_sdot(), Op::dot, DType::f32, sizes);
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    test::check_sizes(ch08::cub_transform_reduce(), Op::dot, t, sizes);
}

TEST_CASE("08_dot_product: cuBLAS's one handle, called from four host threads on four streams") {
  // cublasSetStream and the call must run as a pair: another thread's SetStream in between would
  // send this call to that thread's stream, and this thread would read its result too early.
  const std::size_t n = 3'000'017;
  const HostArray ints = generate(DType::f32, n, Dist::ints, test::fresh_seed());
  const HostArray ones = filled(DType::f32, n, 1.0);
  const DeviceInput a = upload(ints), b = upload(ones);
  const double exact = reference_dot(ints, ones).value;  // small integers: every order is exact
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      Stream stream;
      Workspace ws(ch08::cublas_sdot(), Op::dot, DType::f32, n);
      const ReduceCall call = make_call(Op::dot, DType::f32, a.data, n, ws, stream.get(), b.data);
      for (int i = 0; i < 200; ++i) {
        ws.output.fill(0xFF, stream.get());  // NaN until this call writes it
        ch08::cublas_sdot().launch(call);
        stream.sync();
        float got = 0;
        ws.output.download(&got, sizeof got);
        if (got != exact) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}

TEST_CASE("08_dot_product: more than 2^31 elements" * doctest::test_suite("large")) {
  for (const Chapter* step : kSteps) test::check_above_2_31(*step);
}

TEST_CASE("08_dot_product: adversarial inputs") {
  for (const Chapter* step : kSteps) test::check_adversarial(*step);
}
