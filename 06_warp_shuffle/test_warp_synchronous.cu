// Chapter 06's warp-synchronous pitfall, tested (warp_synchronous.cuh): the shuffle tree's sums
// are exact (asserted); the volatile tree without synchronisation is a data race whose wrong sums,
// if any, are reported. scripts/memory_model_outputs.sh runs these two cases under racecheck, by
// the names "*warp-synchronous?shuffle*" and "*warp-synchronous?volatile*".
#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include "06_warp_shuffle/warp_synchronous.cuh"
#include "test_support.hpp"

using namespace red;
namespace warp_sync = ch06::warp_sync;

namespace {

// Runs one tree kernel over `blocks` blocks of 64 small integers (float sums of them are exact in
// any order), `runs` times on fresh data, and returns how many block sums were wrong.
template <warp_sync::Tree kTree>
std::size_t wrong_sums(unsigned blocks, int runs) {
  const std::size_t n = std::size_t{blocks} * warp_sync::kValues;
  DeviceBuffer out(blocks * sizeof(float));
  std::vector<float> got(blocks);
  std::size_t wrong = 0;
  for (int run = 0; run < runs; ++run) {
    const HostArray host = generate(DType::f32, n, Dist::ints, test::fresh_seed());
    const DeviceInput in = upload(host);
    out.fill(0xFF);
    const auto* values = static_cast<const float*>(in.data);
    warp_sync::sum64_per_block<kTree><<<blocks, warp_sync::kWarp>>>(values, static_cast<float*>(out.get()));
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    out.download(got.data(), blocks * sizeof(float));
    for (unsigned b = 0; b < blocks; ++b) {
      double exact = 0;
      for (unsigned i = 0; i < warp_sync::kValues; ++i) exact += host.at(std::size_t{b} * warp_sync::kValues + i);
      if (!(got[b] == exact)) ++wrong;
    }
  }
  return wrong;
}

// Enough blocks to fill every SM several times over; few enough runs for racecheck.
constexpr unsigned kTreeBlocks = 1024;
constexpr int kTreeRuns = 20;

}  // namespace

TEST_CASE("06_warp_shuffle: warp-synchronous shuffle tree is exact over many blocks") {
  CHECK(wrong_sums<warp_sync::Tree::shuffle>(kTreeBlocks, kTreeRuns) == 0);
}

TEST_CASE("06_warp_shuffle: warp-synchronous volatile tree without synchronisation (reported)") {
  // A data race between the lanes of one warp: its sums are whatever the lanes' timing makes them,
  // so they are reported, not asserted. Right sums here prove nothing. The check is racecheck's:
  // scripts/memory_model_outputs.sh runs this case under it and fails unless it reports the race.
  const std::size_t wrong = wrong_sums<warp_sync::Tree::volatile_unsynchronised>(kTreeBlocks, kTreeRuns);
  MESSAGE(wrong, " wrong block sums of ", std::size_t{kTreeBlocks} * kTreeRuns,
          " from the volatile tree without synchronisation");
}
