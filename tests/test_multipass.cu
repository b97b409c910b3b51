// The multi-pass driver and scratch carving are host logic: tested here without a GPU by
// recording the passes instead of launching them.
#include <doctest/doctest.h>

#include <vector>

#include "multipass.cuh"

using namespace red;

namespace {
struct PassRecord {
  const void* src;
  std::size_t len;
  void* dst;
  bool last;
  std::size_t blocks;
};
}  // namespace

TEST_CASE("run_multipass: one pass per tile level, ping-pong buffers, the result on the last pass only") {
  float first[1], a[1], b[1];
  int result;
  for (std::size_t n : {std::size_t{1}, std::size_t{512}, std::size_t{513}, std::size_t{262'144}, std::size_t{262'145},
                        std::size_t{1} << 31}) {
    std::vector<PassRecord> passes;
    run_multipass(first, n, 512, a, b, &result,
                  [&](auto* src, std::size_t len, float* dst, void* res, std::size_t blocks) {
                    passes.push_back({src, len, dst, res == &result, blocks});
                  });
    INFO("n = ", n);
    REQUIRE(!passes.empty());
    CHECK(passes.front().src == first);
    CHECK(passes.front().len == n);
    for (std::size_t k = 0; k < passes.size(); ++k) {
      CHECK(passes[k].blocks == ceil_div(passes[k].len, 512));
      CHECK(passes[k].last == (k + 1 == passes.size()));
      if (k > 0) {
        CHECK(passes[k].src == passes[k - 1].dst);  // reads what the previous pass wrote
        CHECK(passes[k].len == passes[k - 1].blocks);
        CHECK(passes[k].dst != passes[k].src);
      }
    }
    CHECK(passes.back().blocks == 1);
  }
}

TEST_CASE("multipass_depth counts tree levels over all passes") {
  CHECK(multipass_depth(1, 512) == 0);
  CHECK(multipass_depth(2, 512) == 1);
  CHECK(multipass_depth(512, 512) == 9);
  CHECK(multipass_depth(513, 512) == 10);  // 9 levels, then a pass over 2 partials
  CHECK(multipass_depth(512 * 512, 512) == 18);
}

TEST_CASE("ScratchCarver: sizes and pointers agree, every part 256-byte aligned") {
  ScratchCarver sizing;
  sizing.take<float>(1000);
  sizing.take<double>(3);
  std::vector<char> mem(sizing.bytes() + 256);
  char* base = mem.data() + (256 - reinterpret_cast<std::uintptr_t>(mem.data()) % 256) % 256;
  ScratchCarver carve(base);
  float* f = carve.take<float>(1000);
  double* d = carve.take<double>(3);
  CHECK(reinterpret_cast<char*>(f) == base);
  CHECK(reinterpret_cast<char*>(d) == base + 4096);  // 4000 bytes rounded up to 256
  CHECK(carve.bytes() == sizing.bytes());
}
