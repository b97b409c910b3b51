#include "chapter.cuh"
#include "test_support.hpp"
#include "variants.cuh"

using namespace red;

TEST_CASE("03_shared: shared size matrix, every supported op") {
  // Tile boundaries: one pass up to 512 elements, two passes up to 512^2.
  test::check_support_matrix(ch03::chapter(), {ch03::kTile, ch03::kTile * ch03::kTile});
}

TEST_CASE("03_shared: NaN, infinities and the empty input") { test::check_special_values(ch03::chapter()); }

TEST_CASE("03_shared: repeated calls into one output and scratch leave nothing stale") {
  for (Op op : {Op::sum, Op::max, Op::min}) test::check_repeated_calls(ch03::chapter(), op, DType::f32, 300'001);
}

TEST_CASE("03_shared: misaligned starts") { test::check_misaligned_starts(ch03::chapter()); }

TEST_CASE("03_shared: more than 2^31 elements" * doctest::test_suite("large")) {
  test::check_above_2_31(ch03::chapter());
}

TEST_CASE("03_shared: adversarial inputs") { test::check_adversarial(ch03::chapter()); }

// Harris's steps rebuilt on this chapter's kernel (variants.cuh), the benchmark's rows.
namespace {
// The shared matrix at the step's tile edges (one pass up to a tile, two up to a tile squared),
// the special values and repeated calls. Every step has chapter name "03_shared": the kernel's
// name tells them apart in a failure.
void check_harris_step(const Chapter& ch, std::initializer_list<std::size_t> tile_sizes) {
  INFO("kernel ", ch.kernel_name(Op::sum, DType::f32));
  test::check_support_matrix(ch, tile_sizes);
  test::check_special_values(ch);
  for (Op op : {Op::sum, Op::max}) test::check_repeated_calls(ch, op, DType::f32, 300'001);
  test::check_repeated_calls(ch, Op::sum, DType::i32, 300'001);
}
constexpr std::size_t squared(std::size_t tile) { return tile * tile; }
}  // namespace

TEST_CASE("03_shared: Harris step 1, interleaved addressing with divergent branching") {
  check_harris_step(ch03::harris1_interleaved_divergent(), {ch03::Harris1::kTile, squared(ch03::Harris1::kTile)});
}

TEST_CASE("03_shared: Harris step 2, interleaved addressing with bank conflicts") {
  check_harris_step(ch03::harris2_interleaved_bank_conflicts(), {ch03::Harris2::kTile, squared(ch03::Harris2::kTile)});
}

TEST_CASE("03_shared: Harris step 3, sequential addressing") {
  check_harris_step(ch03::harris3_sequential(), {ch03::Harris3::kTile, squared(ch03::Harris3::kTile)});
}

TEST_CASE("03_shared: Harris step 4, first add during the load") {
  check_harris_step(ch03::harris4_first_add(), {ch03::Harris4::kTile, squared(ch03::Harris4::kTile)});
}

TEST_CASE("03_shared: Harris step 5, last warp unrolled") {
  check_harris_step(ch03::harris5_last_warp(), {ch03::Harris5::kTile, squared(ch03::Harris5::kTile)});
}

TEST_CASE("03_shared: Harris step 6, complete unrolling") {
  check_harris_step(ch03::harris6_unrolled(), {ch03::Harris6::kTile, squared(ch03::Harris6::kTile)});
}

TEST_CASE("03_shared: Harris step 7, 32 elements per thread") {
  // An 8192-element tile: two passes up to 2^26 elements, three beyond.
  check_harris_step(ch03::harris7_cascaded(), {ch03::Harris7::kTile, squared(ch03::Harris7::kTile)});
}

TEST_CASE("03_shared: Harris steps, more than 2^31 elements" * doctest::test_suite("large")) {
  // The two ends of the index arithmetic: the most blocks (one element per thread, the block size
  // read at run time) and the longest stride inside a thread (32 elements).
  test::check_above_2_31(ch03::harris1_interleaved_divergent());
  test::check_above_2_31(ch03::harris7_cascaded());
}

TEST_CASE("03_shared: Harris steps at a few small sizes (the sanitizer's case)") {
  // What scripts/gpu_check.sh runs under compute-sanitizer: every step, one and two passes, a
  // partial warp, block and tile, on both types and both operators. Small, so racecheck finishes.
  for (const Chapter* ch : ch03::harris_steps())
    for (DType t : {DType::f32, DType::i32})
      for (Op op : {Op::sum, Op::max}) test::check_sizes(*ch, op, t, {1, 33, 257, 513, 8193, 70001});
}
