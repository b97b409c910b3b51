#include "chapter.cuh"
#include "test_support.hpp"

using namespace red;

namespace {
constexpr std::size_t kTile = ch05::tile_of<ch05::kCoarsen>();
}

TEST_CASE("05_coarsened: shared size matrix, every supported op") {
  test::check_support_matrix(ch05::chapter(), {kTile, kTile * 7});
}

TEST_CASE("05_coarsened: every coarsening factor of the sweep is correct at its tile edges") {
  auto check_factor = [](const Chapter& ch, std::size_t tile) {
    for (Op op : {Op::sum, Op::max})
      test::check_sizes(ch, op, DType::f32, {1, tile - 1, tile, tile + 1, 3 * tile + 5, 1'000'003}, Dist::ints);
  };
  check_factor(ch05::chapter_with_factor<1>(), ch05::tile_of<1>());
  check_factor(ch05::chapter_with_factor<4>(), ch05::tile_of<4>());
  check_factor(ch05::chapter_with_factor<64>(), ch05::tile_of<64>());
}

TEST_CASE("05_coarsened: NaN, infinities and the empty input") { test::check_special_values(ch05::chapter()); }

TEST_CASE("05_coarsened: repeated calls into one output leave nothing stale") {
  for (Op op : {Op::sum, Op::max, Op::min}) test::check_repeated_calls(ch05::chapter(), op, DType::f32, 300'001);
}

TEST_CASE("05_coarsened: max of all-negative inputs is not 0") {
  test::Outcome o = test::run_checked(ch05::chapter(), Op::max, generate(DType::f32, 1'000'003, Dist::negative, 11));
  CHECK(o.got.value < 0);
}

TEST_CASE("05_coarsened: misaligned starts") { test::check_misaligned_starts(ch05::chapter()); }

TEST_CASE("05_coarsened: more than 2^31 elements" * doctest::test_suite("large")) {
  test::check_above_2_31(ch05::chapter());
}

TEST_CASE("05_coarsened: adversarial inputs") { test::check_adversarial(ch05::chapter()); }

TEST_CASE("05_coarsened: 10,000 reductions of random n over 4 streams") {
  for (Op op : {Op::sum, Op::max}) test::check_stress(ch05::chapter(), op);
}
