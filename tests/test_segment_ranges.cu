// Chapter 11's segments kernel and its finishing kernel place the warps' ranges of cost with the
// same host/device arithmetic (ch11::RangeCosts): tested here without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>

#include "11_batched/reduce.cuh"

TEST_CASE("11_batched: RangeCosts covers every cost once, in order, skewed by the blocks' rank, and finds a cost's range") {
  for (unsigned skew : {0u, 20u, 100u})
    for (std::size_t blocks : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{528}, std::size_t{529}})
      for (unsigned ranks : {1u, 3u, 4u})
        for (std::size_t total : {std::size_t{1}, std::size_t{7}, std::size_t{5000}, (std::size_t{1} << 26) + 12345}) {
          const ch11::RangeCosts c(0, total, 0, 1, 0, blocks, ranks, skew);
          INFO("skew ", skew, ", blocks ", blocks, ", ranks ", ranks, ", total ", total);
          REQUIRE(c.ranges() == blocks * ch11::kWarpsPerBlock);
          CHECK(c.start(0) == 0);
          CHECK(c.start(c.ranges()) == total);
          std::size_t most = 0;
          bool ordered = true;
          for (std::size_t q = 0; q < c.ranges(); ++q) {
            ordered &= c.start(q) <= c.start(q + 1);
            most = std::max(most, c.start(q + 1) - c.start(q));
          }
          CHECK(ordered);
          CHECK(most <= c.most());
          // Every cost lies in the range range_of names (a sample of them, both ends included).
          bool found = true;
          const std::size_t stride = std::max<std::size_t>(1, total / 997);
          for (std::size_t cost = 0; cost < total; cost += stride) {
            const std::size_t q = c.range_of(cost);
            found &= q < c.ranges() && c.start(q) <= cost && cost < c.start(q + 1);
          }
          const std::size_t q = c.range_of(total - 1);
          found &= q < c.ranges() && c.start(q) <= total - 1 && total - 1 < c.start(q + 1);
          CHECK(found);
        }
}

TEST_CASE("11_batched: RangeCosts gives an SM's first blocks more cost than its last, by the skew") {
  const std::size_t total = std::size_t{1} << 26, blocks = 528;
  const auto share = [&](const ch11::RangeCosts& c, std::size_t b) {
    return double(c.start((b + 1) * ch11::kWarpsPerBlock) - c.start(b * ch11::kWarpsPerBlock));
  };
  const ch11::RangeCosts even(0, total, 0, 1, 0, blocks, 4, 0);
  CHECK(share(even, 0) == doctest::Approx(share(even, blocks - 1)).epsilon(1e-4));
  // 20%: weights 1.1, 1.033, 0.967 and 0.9 of the mean for the blocks b / 132 = 0, 1, 2, 3.
  const ch11::RangeCosts skewed(0, total, 0, 1, 0, blocks, 4, 20);
  CHECK(share(skewed, 0) / share(skewed, blocks - 1) == doctest::Approx(1.1 / 0.9).epsilon(1e-4));
  CHECK(share(skewed, 131) == doctest::Approx(share(skewed, 0)).epsilon(1e-4));
  CHECK(share(skewed, 132) < share(skewed, 131));
  CHECK(share(skewed, 0) == doctest::Approx(1.1 * double(total) / double(blocks)).epsilon(1e-4));
  // Fewer blocks than ranks: no skew.
  const ch11::RangeCosts few(0, total, 0, 1, 0, 3, 4, 20);
  CHECK(share(few, 0) == doctest::Approx(share(few, 2)).epsilon(1e-4));
}
