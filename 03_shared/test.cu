#include "chapter.cuh"
#include "test_support.hpp"

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
