#include <type_traits>

#include "07_two_pass/variants.cuh"
#include "suite.hpp"

namespace red::bench::suite {

std::vector<const Chapter*> unroll_sweep_07() {
  std::vector<const Chapter*> variants;
  const auto unroll = [&](auto u) {
    if constexpr (u.value != ch07::kUnroll) variants.push_back(&ch07::chapter_with<true, u.value>());
  };
  unroll(std::integral_constant<unsigned, 1>{});
  unroll(std::integral_constant<unsigned, 2>{});
  unroll(std::integral_constant<unsigned, 4>{});
  unroll(std::integral_constant<unsigned, 8>{});
  unroll(std::integral_constant<unsigned, 16>{});
  variants.push_back(&ch07::chapter_with<true, 4, ch07::L2PrefetchLoad>());
  variants.push_back(&ch07::chapter_with<true, 8, ch07::L2PrefetchLoad>());
  return variants;
}

}  // namespace red::bench::suite
