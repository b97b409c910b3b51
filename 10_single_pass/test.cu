#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "host_types.hpp"
#include "test_support.hpp"
#include "variants.cuh"

using namespace red;

namespace {
const Chapter& ch() { return ch10::chapter(); }

// The counter's bytes (ch10::Scratch puts it first), read back once the device is idle.
unsigned counter_of(const Workspace& ws) {
  unsigned counter = 0xFFFFFFFFu;
  CUDA_CHECK(cudaDeviceSynchronize());
  ws.scratch.download(&counter, sizeof counter);
  return counter;
}

// The grid each kernel takes for n: the lesson's kernel, its variants without flags (their own
// limits) and with one block up to one tile, the tuned kernel with some of its choices, the
// grid-sync kernel. Equal trees on equal grids give equal bits.
template <class Op>
unsigned lesson_kernel_blocks(std::size_t n) {
  return ch10::grid_blocks<Op>(n, ch10::limits<Op>().max_blocks);
}
template <class Op, bool kFenced>
unsigned unflagged_kernel_blocks(std::size_t n) {
  return ch10::grid_blocks<Op>(n, ch10::unflagged_limits<Op, kFenced>().max_blocks);
}
template <class Op>
unsigned one_tile_blocks(std::size_t n) {
  return ch10::one_tile_grid_blocks<Op>(n, ch10::limits<Op>().max_blocks);
}
template <class Choices, class Op>
unsigned tuned_kernel_blocks(std::size_t n) {
  return ch10::grid_blocks<Op>(n, ch10::tuned_limits<Op, ch07::Tuning, Choices>().max_blocks);
}
template <class Op>
unsigned grid_sync_blocks(std::size_t n) {
  return ch10::grid_blocks<Op>(n, ch10::grid_sync_limits<Op>().max_blocks);
}

// One f32 input of n elements through the lesson and every variant, each result checked against
// the reference. The variants with chapter 06's tree (the lesson's) must give the lesson's bits
// wherever their grid is the lesson's; the two with cooperative groups' tree, which adds in
// another order, must give each other's.
template <class Op>
void check_variant_bits(red::Op op, std::size_t n) {
  INFO("op=", std::string(name(op)), " n=", n);
  const HostArray host = generate(DType::f32, n, op == red::Op::argmax ? Dist::ints : Dist::normal, test::fresh_seed());
  const DeviceInput in = upload(host);
  const Reference ref = reference(host, op);
  const auto run = [&](const Chapter& chapter) {
    INFO(chapter.kernel_name(op, DType::f32));
    const Workspace ws(chapter, op, DType::f32, n);
    const RawResult raw = run_once(chapter, make_call(op, DType::f32, in.data, n, ws, nullptr), ws);
    CHECK(check_result(chapter, ref, decode_result(raw, DType::f32, op), DType::f32, op, n).passed);
    return raw;
  };
  struct Variant {
    const Chapter* chapter;
    unsigned blocks;
  };
  const RawResult lesson = run(ch());
  const unsigned lesson_blocks = lesson_kernel_blocks<Op>(n);
  const Variant lessons_tree[] = {
      {&ch10::chapter_unflagged<false>(), unflagged_kernel_blocks<Op, false>(n)},
      {&ch10::chapter_unflagged<true>(), unflagged_kernel_blocks<Op, true>(n)},
      {&ch10::chapter_one_tile(), one_tile_blocks<Op>(n)},
      {&ch10::chapter_tuned<ch10::ProgrammaticLaunch>(), tuned_kernel_blocks<ch10::ProgrammaticLaunch, Op>(n)},
      {&ch10::chapter_grid_sync(), grid_sync_blocks<Op>(n)}};
  for (const Variant& v : lessons_tree) {
    INFO(v.chapter->kernel_name(op, DType::f32), " blocks=", v.blocks, " lesson's=", lesson_blocks);
    const RawResult got = run(*v.chapter);
    if (v.blocks == lesson_blocks) CHECK(got == lesson);
  }
  const RawResult cg = run(ch10::chapter_tuned<ch10::CooperativeGroups>());
  const RawResult cg_early = run(ch10::chapter_tuned<ch10::CooperativeGroupsProgrammaticLaunch>());
  if (tuned_kernel_blocks<ch10::CooperativeGroups, Op>(n) ==
      tuned_kernel_blocks<ch10::CooperativeGroupsProgrammaticLaunch, Op>(n))
    CHECK(cg == cg_early);
}
}  // namespace

TEST_CASE("10_single_pass: shared size matrix, every op and dtype") {
  // 07's tiles: one block trip is 4096 elements for 8-byte types, 8192 for the others; the grid
  // stops growing at SMs x blocks per SM, and 2^23 + 3 takes the f32 grid through one full round
  // plus a spread rest.
  test::check_support_matrix(ch(), {4096, 8192, 16384, std::size_t{1} << 22, (std::size_t{1} << 23) + 3});
}

TEST_CASE("10_single_pass: every dtype through several full rounds of its grid") {
  const std::size_t n = (std::size_t{1} << 25) + 3;
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8}) {
    test::check_sizes(ch(), Op::sum, t, {n}, Dist::ints);
    test::check_sizes(ch(), Op::argmax, t, {n}, Dist::normal);
  }
}

TEST_CASE("10_single_pass: NaN, infinities and the empty input") { test::check_special_values(ch()); }

TEST_CASE("10_single_pass: integer sums past the input type's range") { test::check_integer_overflow(ch()); }

TEST_CASE("10_single_pass: adversarial inputs") { test::check_adversarial(ch()); }

TEST_CASE("10_single_pass: misaligned starts") { test::check_misaligned_starts(ch()); }

TEST_CASE("10_single_pass: the result's bits do not depend on where the input starts") {
  test::check_alignment_independence(ch(), (std::size_t{1} << 22) + 3);
}

TEST_CASE("10_single_pass: bitwise identical over 100 runs, whichever block comes last") {
  // The block that draws the last ticket changes from run to run; what it adds, and in what order,
  // does not. Scratch past the counter holds fresh random bytes before every run.
  std::mt19937_64 rng(test::fresh_seed());
  struct Case {
    Op op;
    DType t;
    std::size_t n;
  };
  const Case cases[] = {{Op::sum, DType::f32, 1000},          {Op::sum, DType::f32, 20'000},
                        {Op::sum, DType::f32, (1 << 20) + 3}, {Op::sum, DType::f32, (1 << 25) + 5},
                        {Op::sum, DType::f16, (1 << 24) + 1}, {Op::sum, DType::f64, 3'000'017},
                        {Op::max, DType::bf16, 3'000'017},    {Op::argmax, DType::f32, (1 << 24) + 7}};
  for (const Case& c : cases) {
    INFO("op=", std::string(name(c.op)), " dtype=", std::string(name(c.t)), " n=", c.n);
    const HostArray host = generate(c.t, c.n, c.op == Op::argmax ? Dist::ints : Dist::normal, test::fresh_seed());
    const DeviceInput in = upload(host);
    const Workspace ws(ch(), c.op, c.t, c.n);
    const ReduceCall call = make_call(c.op, c.t, in.data, c.n, ws, nullptr);
    std::set<RawResult> distinct;
    for (int run = 0; run < 100; ++run) distinct.insert(test::run_on_garbage(ch(), call, ws, rng));
    CHECK(distinct.size() == 1);
    CHECK(
        check_result(ch(), reference(host, c.op), decode_result(*distinct.begin(), c.t, c.op), c.t, c.op, c.n).passed);
    CHECK(counter_of(ws) == 0);
  }
}

TEST_CASE("10_single_pass: the variants give the lesson's answers") {
  // The fences, the acq_rel ticket and the early launch change nothing in the arithmetic; one
  // block up to one tile and grid.sync() combine as the lesson's last block does. Up to two tiles
  // (16,384 floats) the lesson's grid is one block, above it every variant's grid is the lesson's
  // until the grid stops growing (SMs x blocks per SM of each kernel). 12,000 floats: one block
  // for the lesson, two for single_block_1_tile.
  for (std::size_t n : {std::size_t{1000}, std::size_t{12'000}, std::size_t{20'000}, std::size_t{1 << 20} + 3,
                        std::size_t{1 << 24} + 7}) {
    check_variant_bits<Sum<float>>(Op::sum, n);
    check_variant_bits<ArgMax<float>>(Op::argmax, n);
  }
}

TEST_CASE("10_single_pass: the variants over the shared sizes") {
  for (const Chapter* variant : ch10::variant_chapters()) {
    INFO(variant->kernel_name(Op::sum, DType::f32));
    const std::vector<std::size_t> sizes = test::shared_sizes({8192, std::size_t{1} << 22});
    test::check_sizes(*variant, Op::sum, DType::f32, sizes);
    test::check_sizes(*variant, Op::sum, DType::f16, sizes);
    test::check_sizes(*variant, Op::sum, DType::f64, sizes);  // 8-byte partials: the acq_rel ticket in every variant
    test::check_sizes(*variant, Op::argmax, DType::f32, sizes, Dist::ints);
    test::check_sizes(*variant, Op::max, DType::u8, sizes);
  }
}

TEST_CASE("10_single_pass: the variants at the sanitizer's sizes") {
  // Small enough for compute-sanitizer (scripts/gpu_check.sh runs this case under each tool): one
  // block, a few blocks, and past one block's tile for every dtype.
  for (const Chapter* variant : ch10::variant_chapters()) {
    INFO(variant->kernel_name(Op::sum, DType::f32));
    test::check_sizes(*variant, Op::sum, DType::f32, {1, 33, 1025, 16385, 100'003});
    test::check_sizes(*variant, Op::argmax, DType::f32, {33, 16385, 100'003}, Dist::ints);
    test::check_sizes(*variant, Op::sum, DType::u8, {16385, 100'003}, Dist::ints);
  }
}

TEST_CASE("10_single_pass: launched early, back to back on one scratch, every call waits for the last") {
  // With programmatic dependent launch a call's kernel starts before the previous one has ended,
  // and waits in cudaGridDependencySynchronize() before it touches the input or the scratch: the
  // counter and the slots the previous call's last block resets.
  for (const Chapter* early : {&ch10::chapter_tuned<ch10::ProgrammaticLaunch>(),
                               &ch10::chapter_tuned<ch10::CooperativeGroupsProgrammaticLaunch>()}) {
    INFO(early->kernel_name(Op::sum, DType::f32));
    for (DType t : {DType::f32, DType::f64}) test::check_repeated_calls(*early, Op::sum, t, 3'000'001);
    test::check_stress(*early, Op::sum, 2'000);
  }
}

TEST_CASE("10_single_pass: repeated calls into one output and scratch leave nothing stale") {
  for (Op op : {Op::sum, Op::max, Op::min, Op::argmax})
    for (DType t : {DType::f32, DType::f16, DType::i32, DType::u8}) test::check_repeated_calls(ch(), op, t, 3'000'001);
}

TEST_CASE("10_single_pass: four streams at once, each with its own scratch, give the same bits") {
  for (Op op : {Op::sum, Op::argmax}) test::check_concurrent_streams(ch(), op, (1 << 22) + 11, 50);
}

TEST_CASE("10_single_pass: 10,000 back-to-back reductions of random n over 4 streams") {
  // Each stream reuses one scratch call after call, with no memset between: every call starts
  // from the counter the previous one's last block left at 0.
  for (Op op : {Op::sum, Op::max}) test::check_stress(ch(), op);
}

TEST_CASE("10_single_pass: a call the launcher refuses leaves the scratch ready for the next") {
  const std::size_t n = 3'000'017;
  const HostArray host = generate(DType::f32, n, Dist::ints, test::fresh_seed());
  const DeviceInput in = upload(host);
  const Workspace ws(ch(), Op::sum, DType::f32, n);
  ReduceCall call = make_call(Op::sum, DType::f32, in.data, n, ws, nullptr);
  const RawResult first = run_once(ch(), call, ws);  // the output poisoned first

  ReduceCall misaligned = call;  // a float input one byte past a float boundary
  misaligned.input = static_cast<const char*>(in.data) + 1;
  CHECK_THROWS_AS(ch().launch(misaligned), std::invalid_argument);
  ReduceCall small = call;
  small.scratch_bytes = ws.scratch.bytes() - 1;
  CHECK_THROWS_AS(ch().launch(small), std::invalid_argument);
  ReduceCall no_input = call;
  no_input.input = nullptr;
  CHECK_THROWS_AS(ch().launch(no_input), std::invalid_argument);
  for (std::size_t off : {4, 8}) {  // a scratch off a 16-byte boundary: its partials would be misaligned
    ReduceCall shifted = call;
    shifted.scratch = static_cast<char*>(call.scratch) + off;
    CHECK_THROWS_WITH_AS(ch().launch(shifted), "10_single_pass: scratch not aligned to 16 bytes",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(ch10::launch<red::Sum<float>>(shifted), "10_single_pass: scratch not aligned to 16 bytes",
                         std::invalid_argument);
  }

  CHECK(counter_of(ws) == 0);
  CHECK(run_once(ch(), call, ws) == first);
  CHECK(decode_result(first, DType::f32, Op::sum).value == reference(host, Op::sum).value);  // exact: small ints
}

TEST_CASE("10_single_pass: a counter another call has moved gives a wrong answer (one scratch, one call at a time)") {
  // What two calls in flight on one scratch do to each other, made deterministic: the counter
  // stands where another call's blocks would have left it, a whole grid's tickets drawn and its
  // reset not yet made. No block of this call then draws ticket blocks - 1: nobody combines, the
  // result is never written (the poison stays), and the counter is left further on, so the next
  // call fails the same way. Zeroing the counter once more repairs it.
  const std::size_t n = (1 << 22) + 11;
  const HostArray host = generate(DType::f32, n, Dist::ints, test::fresh_seed());
  const DeviceInput in = upload(host);
  const Workspace ws(ch(), Op::sum, DType::f32, n);
  const ReduceCall call = make_call(Op::sum, DType::f32, in.data, n, ws, nullptr);
  const double exact = reference(host, Op::sum).value;
  const unsigned blocks = lesson_kernel_blocks<Sum<float>>(n);
  REQUIRE(blocks > 1);
  ws.scratch.upload(&blocks, sizeof blocks);
  int wrong = 0;
  for (int call_no = 0; call_no < 2; ++call_no) {
    const DeviceResult got = decode_result(run_once(ch(), call, ws), DType::f32, Op::sum);
    if (!(got.value == exact)) ++wrong;  // NaN: the poison, never overwritten
  }
  CHECK(wrong == 2);
  CHECK(counter_of(ws) == 3 * blocks);
  CUDA_CHECK(cudaMemset(ws.scratch.get(), 0, ws.zeroed));
  CHECK(decode_result(run_once(ch(), call, ws), DType::f32, Op::sum).value == exact);
  CHECK(counter_of(ws) == 0);
}

TEST_CASE("large: 10_single_pass beyond 2^31 elements" * doctest::test_suite("large")) { test::check_above_2_31(ch()); }
