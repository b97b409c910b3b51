#include "chapter.cuh"
#include "test_support.hpp"

using namespace red;

TEST_CASE("02_convergent: shared size matrix, every supported op") {
  // Tile boundaries: one pass up to 512 elements, two passes up to 512^2.
  test::check_support_matrix(ch02::chapter(), {ch02::kTile, ch02::kTile * ch02::kTile});
}

TEST_CASE("02_convergent: NaN, infinities and the empty input") { test::check_special_values(ch02::chapter()); }

TEST_CASE("02_convergent: repeated calls into one output and scratch leave nothing stale") {
  for (Op op : {Op::sum, Op::max, Op::min}) test::check_repeated_calls(ch02::chapter(), op, DType::f32, 300'001);
}

TEST_CASE("02_convergent: misaligned starts") { test::check_misaligned_starts(ch02::chapter()); }

TEST_CASE("02_convergent: more than 2^31 elements" * doctest::test_suite("large")) {
  test::check_above_2_31(ch02::chapter());
}

TEST_CASE("02_convergent: adversarial inputs") { test::check_adversarial(ch02::chapter()); }
