// Chapter 07's cut of a misaligned vector out of the two aligned blocks it straddles
// (07_two_pass/vector_loads.cuh, cut_straddled), on the host: every skip gives the vector's bytes.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "07_two_pass/vector_loads.cuh"

TEST_CASE("cut_straddled: the 16 bytes that start skip bytes into two blocks, for every skip") {
  std::mt19937 random(2026);
  for (int trial = 0; trial < 100; ++trial) {
    unsigned char bytes[32];
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(random());
    uint4 lo, hi;
    std::memcpy(&lo, bytes, 16);
    std::memcpy(&hi, bytes + 16, 16);
    for (unsigned skip = 0; skip < 16; ++skip) {
      const uint4 got = ch07::cut_straddled(lo, hi, skip);
      unsigned char cut[16];
      std::memcpy(cut, &got, 16);
      INFO("skip = ", skip, ", trial ", trial);
      CHECK(std::memcmp(cut, bytes + skip, 16) == 0);
    }
  }
}
