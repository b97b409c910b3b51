#include "reduce.cuh"
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

TEST_CASE("03_shared: misaligned starts") {
  for (std::size_t offset = 1; offset <= 7; ++offset)
    test::run_checked(ch03::chapter(), Op::sum, generate(DType::f32, 100'003, Dist::normal, test::fresh_seed()), offset);
}

TEST_CASE("03_shared: more than 2^31 elements") {
  std::size_t n = test::size_above_2_31(sizeof(float));
  if (n == 0) {
    MESSAGE("skipped: the device has too little free memory for 2^31 + 7 floats");
    return;
  }
  // Small integers keep every partial sum exact, so a single lost element would show.
  test::Outcome o = test::run_checked(ch03::chapter(), Op::sum, generate(DType::f32, n, Dist::ints, test::fresh_seed()));
  CHECK(o.got.value == o.ref.value);
  test::run_checked(ch03::chapter(), Op::max, generate(DType::f32, n, Dist::normal, test::fresh_seed()));
}
