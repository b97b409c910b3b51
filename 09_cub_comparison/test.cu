#include "reduce.cuh"
#include "test_support.hpp"

using namespace red;

// Full chapter tests (NaN semantics, every dtype) come with the chapter's lesson; for now the CUB
// baseline the benchmark compares against is checked over the shared size matrix.
TEST_CASE("09_cub_comparison: shared size matrix for the baseline the benchmark uses") {
  for (Op op : {Op::sum, Op::max, Op::min, Op::argmax})
    test::check_sizes(ch09::chapter(), op, DType::f32, test::shared_sizes({1u << 20}), Dist::normal);
  test::check_sizes(ch09::chapter(), Op::sum, DType::f16, test::shared_sizes({}), Dist::normal);
  test::check_sizes(ch09::chapter(), Op::sum, DType::bf16, test::shared_sizes({}), Dist::normal);
}
