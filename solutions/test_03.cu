// Chapter 03's exercise: 01's interleaved pairing in 03's shared memory, with the threads spread
// out and packed (03_shared/variants.cuh). Both must give 03's answers; solutions/03_shared.md
// says what they cost.
#include "03_shared/variants.cuh"
#include "test_support.hpp"

using namespace red;

namespace {
// 512-element tiles, as in 03: one pass up to 512 elements, two up to 512^2.
void check_solution(const Chapter& ch, std::size_t tile) {
  INFO("kernel ", ch.kernel_name(Op::sum, DType::f32));
  test::check_support_matrix(ch, {tile, tile * tile});
  test::check_special_values(ch);
  for (Op op : {Op::sum, Op::max}) test::check_repeated_calls(ch, op, DType::f32, 300'001);
  test::check_repeated_calls(ch, Op::sum, DType::i32, 300'001);
}
}  // namespace

TEST_CASE("solution_03: interleaved pairing, working threads spread over every warp") {
  check_solution(ch03::solution_interleaved(), ch03::SharedInterleaved::kTile);
}

TEST_CASE("solution_03: interleaved pairing, working threads packed") {
  check_solution(ch03::solution_interleaved_packed(), ch03::SharedInterleavedPacked::kTile);
}

TEST_CASE("solution_03: both kernels at a few small sizes (the sanitizer's case)") {
  // What scripts/gpu_check.sh runs under compute-sanitizer: one and two passes, partial warps,
  // blocks and tiles, both types and operators. Small, so racecheck finishes.
  for (const Chapter* ch : {&ch03::solution_interleaved(), &ch03::solution_interleaved_packed()})
    for (DType t : {DType::f32, DType::i32})
      for (Op op : {Op::sum, Op::max}) test::check_sizes(*ch, op, t, {1, 33, 257, 513, 8193, 70001});
}
