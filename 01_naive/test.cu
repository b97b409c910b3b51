#include "chapter.cuh"
#include "test_support.hpp"

using namespace red;

TEST_CASE("01_naive: shared size matrix, every supported op") {
  // Tile boundaries: one pass up to 512 elements, two passes up to 512^2.
  test::check_support_matrix(ch01::chapter(), {ch01::kTile, ch01::kTile * ch01::kTile});
}

TEST_CASE("01_naive: NaN, infinities and the empty input") { test::check_special_values(ch01::chapter()); }

TEST_CASE("01_naive: repeated calls into one output and scratch leave nothing stale") {
  for (Op op : {Op::sum, Op::max, Op::min}) test::check_repeated_calls(ch01::chapter(), op, DType::f32, 300'001);
}

TEST_CASE("01_naive: misaligned starts") { test::check_misaligned_starts(ch01::chapter()); }

TEST_CASE("01_naive: more than 2^31 elements" * doctest::test_suite("large")) {
  test::check_above_2_31(ch01::chapter());
}

TEST_CASE("01_naive: adversarial inputs") { test::check_adversarial(ch01::chapter()); }
