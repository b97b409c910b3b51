#include "solutions/07_two_pass.cuh"
#include "solutions/08_dot_product.cuh"
#include "suite.hpp"

namespace red::bench::suite {

std::vector<Registration> solutions_07_08() {
  // 07's exercise: the f32 sum from launch-bound to DRAM sizes, beside 07's own rows of the same
  // run (pass 2 launched early, and launched plainly up to 2^18).
  std::vector<Case> last_block;
  for (int log2n = 10; log2n <= 28; log2n += 2) last_block.push_back({Op::sum, DType::f32, std::size_t{1} << log2n});
  // 08's exercise: the fused dot product and sum of squares, beside 08's dot_two_pass.
  std::vector<Case> dot_and_squares;
  for (int log2n : {20, 24, 28}) dot_and_squares.push_back({Op::dot, DType::f32, std::size_t{1} << log2n});
  return {{&sol07::chapter(), last_block}, {&sol08::chapter(), dot_and_squares}};
}

}  // namespace red::bench::suite
