#include "01_naive/chapter.cuh"
#include "02_convergent/chapter.cuh"
#include "03_shared/chapter.cuh"
#include "04_multiblock_atomic/chapter.cuh"
#include "05_coarsened/chapter.cuh"
#include "suite.hpp"

namespace red::bench::suite {

std::vector<const Chapter*> chapters_01_to_05() {
  return {&ch01::chapter(), &ch02::chapter(), &ch03::chapter(), &ch04::chapter(), &ch05::chapter()};
}

std::vector<const Chapter*> coarsening_sweep_05() {
  return {&ch05::chapter_with_factor<1>(), &ch05::chapter_with_factor<2>(),  &ch05::chapter_with_factor<4>(),
          &ch05::chapter_with_factor<8>(), &ch05::chapter_with_factor<32>(), &ch05::chapter_with_factor<64>()};
}

}  // namespace red::bench::suite
