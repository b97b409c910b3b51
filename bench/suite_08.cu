#include "08_dot_product/baselines.cuh"
#include "08_dot_product/chapter.cuh"
#include "suite.hpp"

namespace red::bench::suite {

std::vector<const Chapter*> dot_steps_f32() {
  return {&ch08::chapter_step<ch08::Step::shared>(), &ch08::chapter_step<ch08::Step::coarsened>(),
          &ch08::chapter_step<ch08::Step::fma>(), &ch08::cublas_sdot()};
}

const Chapter& chapter_08() { return ch08::chapter(); }

const Chapter& dot_cub() { return ch08::cub_transform_reduce(); }

}  // namespace red::bench::suite
