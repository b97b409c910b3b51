#include <random>
#include <set>
#include <type_traits>
#include <vector>

#include "host_types.hpp"
#include "test_support.hpp"
#include "variants.cuh"

using namespace red;

namespace {
const Chapter& ch() { return ch07::chapter(); }

// The first 8 bytes of the result: the value's bits (and for argmax the index follows).
std::vector<std::byte> result_bits(const RawResult& raw) { return {raw.begin(), raw.end()}; }

}  // namespace

TEST_CASE("07_two_pass: shared size matrix, every op and dtype") {
  // One block trip is 256 threads x unroll_of<Tuning, Array<T>, Op>() vectors: 4096 elements for
  // 8-byte types, 8192 for the others, 32768 for a sum of bytes (8 vectors: append_vector). The
  // grid stops growing at SMs x blocks per SM (for the f32 sum on the H200, 528 blocks: one round
  // is 2^22 + 2^17 elements). At 2^23 + 3 the f32 grid is
  // full and makes one round plus a spread rest; 16-bit inputs (1056 blocks on the H200) do not
  // fill their grid yet: the next case takes every dtype through several rounds.
  test::check_support_matrix(ch(), {4096, 8192, 16384, std::size_t{1} << 22, (std::size_t{1} << 23) + 3});
}

TEST_CASE("07_two_pass: every dtype through several full rounds of its grid") {
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8}) {
    // A sum of bytes takes 4 times the elements a trip of the other 1-byte operators: 4 times the n.
    const std::size_t n = (std::size_t{1} << (t == DType::u8 ? 27 : 25)) + 3;
    // A round is blocks x one trip; the rounds this n takes must be 2 or more, whatever the GPU.
    std::size_t blocks = 0, per_trip = 0;
    red::host::with_storage_type(t, [&](auto* typed) {
      using Stored = std::remove_pointer_t<decltype(typed)>;  // int64_t is long here; the kernels' i64 is long long
      using T = std::conditional_t<std::is_same_v<Stored, std::int64_t>, long long, Stored>;
      using Source = ch07::Array<T>;
      blocks = ch07::pass1_blocks<Sum<T>, ch07::Tuning, Source>(n);
      per_trip = std::size_t{ch07::kBlock} * ch07::unroll_of<ch07::Tuning, Source, Sum<T>>() * Source::kCount;
    });
    INFO("dtype ", std::string(name(t)), ": ", blocks, " blocks, ", per_trip, " elements per block trip");
    CHECK(n / (blocks * per_trip) >= 2);
    test::check_sizes(ch(), Op::sum, t, {n}, Dist::ints);
    test::check_sizes(ch(), Op::argmax, t, {n}, Dist::normal);
  }
}

TEST_CASE("07_two_pass: bitwise identical over 100 runs, scratch refilled with garbage between runs") {
  std::mt19937_64 rng(test::fresh_seed());
  struct Case {
    Op op;
    DType t;
    std::size_t n;
  };
  const Case cases[] = {{Op::sum, DType::f32, 1000},          {Op::sum, DType::f32, (1 << 20) + 3},
                        {Op::sum, DType::f32, (1 << 25) + 5}, {Op::sum, DType::f16, (1 << 24) + 1},
                        {Op::sum, DType::f64, 3'000'017},     {Op::argmax, DType::f32, (1 << 24) + 7}};
  for (const Case& c : cases) {
    INFO("op=", std::string(name(c.op)), " dtype=", std::string(name(c.t)), " n=", c.n);
    HostArray host = generate(c.t, c.n, c.op == Op::argmax ? Dist::ints : Dist::normal, test::fresh_seed());
    DeviceInput in = upload(host);
    Workspace ws(ch(), c.op, c.t, c.n);
    ReduceCall call = make_call(c.op, c.t, in.data, c.n, ws, nullptr);
    const Reference ref = reference(host, c.op);
    std::set<std::vector<std::byte>> distinct;
    for (int run = 0; run < 100; ++run) {
      const RawResult raw = test::run_on_garbage(ch(), call, ws, rng);
      distinct.insert(result_bits(raw));
      if (run == 0) CHECK(check_result(ch(), ref, decode_result(raw, c.t, c.op), c.t, c.op, c.n).passed);
    }
    CHECK(distinct.size() == 1);
    // The plain launch of pass 2 computes in the same order: the same bits.
    const RawResult plain = test::run_on_garbage(ch07::chapter_plain_launch(), call, ws, rng);
    CHECK(distinct.count(result_bits(plain)) == 1);
  }
}

TEST_CASE("07_two_pass: the benchmark's variants are correct at their tile edges") {
  auto check_variant = [](const Chapter& chapter, std::size_t tile) {
    INFO(chapter.kernel_name(Op::sum, DType::f32));
    const std::vector<std::size_t> sizes = {1, tile - 1, tile, tile + 1, 1000 * tile + 17, 3'000'017};
    test::check_sizes(chapter, Op::sum, DType::f32, sizes, Dist::ints);
    test::check_sizes(chapter, Op::argmax, DType::f32, sizes, Dist::normal);
  };
  const std::size_t lesson_tile = 256 * 8 * 4;  // threads x vectors x floats per vector
  check_variant(ch07::chapter_with<ch07::Unroll<1>>(), 256 * 1 * 4);
  check_variant(ch07::chapter_with<ch07::Unroll<2>>(), 256 * 2 * 4);
  check_variant(ch07::chapter_with<ch07::Unroll<4>>(), 256 * 4 * 4);
  check_variant(ch07::chapter_plain_launch(), lesson_tile);
  check_variant(ch07::chapter_growing_grid(), lesson_tile);
  check_variant(ch07::chapter_with<ch07::ScalarLoads>(), 256 * 32);
  check_variant(ch07::chapter_with<ch07::L2Prefetch<4>>(), 256 * 4 * 4);
  check_variant(ch07::chapter_with<ch07::L2Prefetch<8>>(), lesson_tile);
  // Every op and dtype for the two variants that take out one of the chapter's ideas.
  test::check_support_matrix(ch07::chapter_growing_grid(), {lesson_tile});
  test::check_support_matrix(ch07::chapter_with<ch07::ScalarLoads>(), {256 * 32});
}

TEST_CASE("07_two_pass: back-to-back calls reuse one scratch buffer") {
  for (Op op : {Op::sum, Op::max, Op::min, Op::argmax})
    for (DType t : {DType::f32, DType::f16, DType::i32, DType::u8}) test::check_repeated_calls(ch(), op, t, 3'000'001);
}

TEST_CASE("07_two_pass: two streams at once, each with its own input and scratch") {
  const std::size_t n_a = (1 << 24) + 11, n_b = (1 << 23) + 5;
  for (int round = 0; round < 10; ++round) {
    INFO("round ", round);
    HostArray a = generate(DType::f32, n_a, Dist::normal, test::fresh_seed());
    HostArray b = generate(DType::f32, n_b, Dist::uniform, test::fresh_seed());
    DeviceInput in_a = upload(a), in_b = upload(b);
    Workspace ws_a(ch(), Op::sum, DType::f32, n_a), ws_b(ch(), Op::argmax, DType::f32, n_b);
    Stream s_a, s_b;
    ws_a.output.fill(0xFF);
    ws_b.output.fill(0xFF);
    CUDA_CHECK(cudaDeviceSynchronize());
    // Both reductions are queued before either is waited for, so their kernels can overlap.
    ch().launch(make_call(Op::sum, DType::f32, in_a.data, n_a, ws_a, s_a.get()));
    ch().launch(make_call(Op::argmax, DType::f32, in_b.data, n_b, ws_b, s_b.get()));
    CUDA_CHECK(cudaStreamSynchronize(s_a.get()));
    CUDA_CHECK(cudaStreamSynchronize(s_b.get()));
    RawResult raw_a{}, raw_b{};
    ws_a.output.download(raw_a.data(), raw_a.size());
    ws_b.output.download(raw_b.data(), raw_b.size());
    CHECK(check_result(ch(), reference(a, Op::sum), decode_result(raw_a, DType::f32, Op::sum), DType::f32, Op::sum, n_a)
              .passed);
    CHECK(check_result(ch(), reference(b, Op::argmax), decode_result(raw_b, DType::f32, Op::argmax), DType::f32,
                       Op::argmax, n_b)
              .passed);
  }
}

TEST_CASE("07_two_pass: the two-phase scratch query") {
  std::size_t bytes = 0;
  CHECK(ch07::reduce<Sum<float>>(nullptr, bytes, nullptr, 1 << 20, nullptr, nullptr) == cudaSuccess);
  CHECK(bytes > 0);
  // The size does not grow with n: the grid is fixed.
  std::size_t bytes_big = 0;
  CHECK(ch07::reduce<Sum<float>>(nullptr, bytes_big, nullptr, std::size_t{1} << 34, nullptr, nullptr) == cudaSuccess);
  CHECK(bytes_big == bytes);
  // A null scratch that claims a size is refused: it is not a size query, and must not return
  // success without having reduced anything.
  std::size_t claimed = bytes;
  CHECK(ch07::reduce<Sum<float>>(nullptr, claimed, nullptr, 1 << 20, nullptr, nullptr) == cudaErrorInvalidValue);
  // Too little scratch is refused, not overrun.
  DeviceBuffer scratch(bytes), out(kResultBytes), in(1024 * sizeof(float));
  in.fill(0);
  std::size_t too_few = bytes - 1;
  CHECK(ch07::reduce<Sum<float>>(scratch.get(), too_few, static_cast<const float*>(in.get()), 1024, out.get(),
                                 nullptr) == cudaErrorInvalidValue);
}

TEST_CASE("07_two_pass: NaN, infinities and the empty input") { test::check_special_values(ch()); }

TEST_CASE("07_two_pass: misaligned starts") { test::check_misaligned_starts(ch()); }

TEST_CASE("07_two_pass: the result's bits do not depend on where the input starts") {
  // 2^22 + 3 floats: every block takes tiles, and a partial vector and a tail are left.
  test::check_alignment_independence(ch(), (std::size_t{1} << 22) + 3);
  test::check_alignment_independence(ch(), 100'003);  // fewer blocks than the GPU holds
}

TEST_CASE("07_two_pass: more than 2^31 elements" * doctest::test_suite("large")) { test::check_above_2_31(ch()); }

TEST_CASE("07_two_pass: adversarial inputs") { test::check_adversarial(ch()); }

TEST_CASE("07_two_pass: 10,000 reductions of random n over 4 streams") {
  for (Op op : {Op::sum, Op::max}) test::check_stress(ch(), op);
}
