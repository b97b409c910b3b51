#include "07_two_pass/variants.cuh"
#include "suite.hpp"

namespace red::bench::suite {

std::vector<const Chapter*> variants_07() {
  return {&ch07::chapter_growing_grid(),          &ch07::chapter_with<ch07::ScalarLoads>(),
          &ch07::chapter_with<ch07::Unroll<1>>(),     &ch07::chapter_with<ch07::Unroll<2>>(),
          &ch07::chapter_with<ch07::Unroll<4>>(),     &ch07::chapter_with<ch07::Unroll<16>>(),
          &ch07::chapter_with<ch07::L2Prefetch<4>>(), &ch07::chapter_with<ch07::L2Prefetch<8>>()};
}

}  // namespace red::bench::suite
