// pointer_chase: the latency of one load from L2 and from DRAM, measured, not typed.
//
// One thread follows a chain of pointers: each load's address is the value the previous load
// returned, so no two loads overlap and the time per step is the latency of one load. The chain
// visits distinct 128-byte lines in a random order (no prefetcher can guess the next one), with
// `ld.global.cg` (cached in L2 only, so L1 never answers).
//
//   l2      the chain walked once to bring its lines into L2, then timed: every load hits L2
//   dram    L2 emptied first (common/timing.hpp, L2Scrubber), then the chain walked once: every
//           line is new, so every load goes to DRAM. The lines lie spread over a region of the
//           given size; a region larger than the address translation caches cover adds a TLB miss
//           to some loads, which the larger regions show.
//
// Little's law turns the DRAM figure into what a kernel must keep in flight to stream at full
// bandwidth: bytes in flight = latency x bandwidth (tools/littles_law.py draws that curve).
//
// Output: CSV on stdout (pattern, region_bytes, loads, ns_per_load: the median of several walks)
// and the device's name, SM count, L2 size and theoretical DRAM bandwidth as '#' comments.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "command_line.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "timing.hpp"

using namespace red;

namespace {

constexpr std::size_t kLineBytes = 128;
constexpr std::size_t kWordsPerLine = kLineBytes / sizeof(unsigned);
constexpr unsigned kChainLines = 1u << 14;  // 2 MiB of lines: fits L2, long enough to time
constexpr int kWalks = 7;

__global__ void chase(const unsigned* next, unsigned start, unsigned steps, unsigned* sink) {
  unsigned word = start;
  for (unsigned s = 0; s < steps; ++s) word = __ldcg(next + word);
  *sink = word;  // keeps the chain from being optimised away
}

__global__ void scatter(unsigned* buffer, const unsigned* where, const unsigned* what, unsigned count) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) buffer[where[k]] = what[k];
}

// A random cycle through kChainLines distinct lines of a region of `region_bytes`: one line drawn
// at random from each of kChainLines equal strata (distinct and spread over the whole region),
// linked in a random order (Sattolo's algorithm gives a single cycle). Returns the start word.
unsigned build_chain(unsigned* buffer, std::size_t region_bytes, std::mt19937_64& rng) {
  const std::size_t lines = region_bytes / kLineBytes;
  const std::size_t per_stratum = lines / kChainLines;
  std::vector<unsigned> word(kChainLines);
  for (unsigned k = 0; k < kChainLines; ++k) {
    const std::size_t line = k * per_stratum + std::uniform_int_distribution<std::size_t>(0, per_stratum - 1)(rng);
    word[k] = static_cast<unsigned>(line * kWordsPerLine);
  }
  std::vector<unsigned> order(kChainLines);
  for (unsigned k = 0; k < kChainLines; ++k) order[k] = k;
  for (unsigned k = kChainLines - 1; k > 0; --k)
    std::swap(order[k], order[std::uniform_int_distribution<unsigned>(0, k - 1)(rng)]);
  // order is a permutation with one cycle: line order[k] points to line order[k + 1].
  std::vector<unsigned> where(kChainLines), what(kChainLines);
  for (unsigned k = 0; k < kChainLines; ++k) {
    where[k] = word[order[k]];
    what[k] = word[order[(k + 1) % kChainLines]];
  }
  DeviceBuffer d_where(kChainLines * sizeof(unsigned)), d_what(kChainLines * sizeof(unsigned));
  CUDA_CHECK(cudaMemcpy(d_where.get(), where.data(), kChainLines * sizeof(unsigned), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_what.get(), what.data(), kChainLines * sizeof(unsigned), cudaMemcpyHostToDevice));
  scatter<<<kChainLines / 256, 256>>>(buffer, static_cast<const unsigned*>(d_where.get()),
                                      static_cast<const unsigned*>(d_what.get()), kChainLines);
  CUDA_CHECK(cudaDeviceSynchronize());
  return word[order[0]];
}

// Nanoseconds per load of one walk around the chain.
double walk_ns(const unsigned* buffer, unsigned start, unsigned* sink) {
  Event begin, end;
  CUDA_CHECK(cudaEventRecord(begin.get()));
  chase<<<1, 1>>>(buffer, start, kChainLines, sink);
  CUDA_CHECK(cudaEventRecord(end.get()));
  CUDA_CHECK(cudaEventSynchronize(end.get()));
  return 1e3 * elapsed_us(begin, end) / kChainLines;
}

// The median walk (common/timing.hpp's, of the sorted walks).
double median_walk(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return red::median(v);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The latency of one load from L2 and from DRAM, measured with a pointer chase; CSV on stdout.",
               "pointer_chase"};
  app.footer("Exit codes: 0 measured, 2 bad arguments, 3 no GPU, 4 CUDA error.");
  if (const int stop = parse_command_line(app, argc, argv); stop >= 0) return stop;
  if (!gpu_available()) {
    std::fprintf(stderr, "pointer_chase: no usable CUDA GPU; results/h200/latency.csv holds the published H200 run.\n");
    return 3;
  }
  try {
    const DeviceInfo dev = query_device();
    std::printf("# device: %s\n# sm_count: %d\n# l2_bytes: %zu\n# dram_gbps: %.1f\n", dev.name.c_str(), dev.sm_count,
                dev.l2_bytes, dev.dram_gbps);
    std::printf("pattern,region_bytes,loads,ns_per_load\n");
    const L2Scrubber scrubber(dev);
    DeviceBuffer sink(sizeof(unsigned));
    std::mt19937_64 rng(0xC4A5E);
    unsigned* out = static_cast<unsigned*>(sink.get());

    // L2: a 2 MiB chain, walked once untimed so that every line is in L2.
    {
      const std::size_t region = kChainLines * kLineBytes;
      DeviceBuffer buffer(region);
      const unsigned start = build_chain(static_cast<unsigned*>(buffer.get()), region, rng);
      std::vector<double> ns;
      for (int w = 0; w < kWalks; ++w) {
        walk_ns(static_cast<const unsigned*>(buffer.get()), start, out);
        ns.push_back(walk_ns(static_cast<const unsigned*>(buffer.get()), start, out));
      }
      std::printf("l2,%zu,%u,%.1f\n", region, kChainLines, median_walk(ns));
    }
    // DRAM: L2 emptied before every walk; regions from 16 MiB up to 4 GiB (where memory allows).
    for (std::size_t region = std::size_t{16} << 20; region <= (std::size_t{4} << 30); region *= 4) {
      if (region > dev.free_memory / 2) break;
      DeviceBuffer buffer(region);
      const unsigned start = build_chain(static_cast<unsigned*>(buffer.get()), region, rng);
      std::vector<double> ns;
      for (int w = 0; w < kWalks; ++w) {
        scrubber.scrub(nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        ns.push_back(walk_ns(static_cast<const unsigned*>(buffer.get()), start, out));
      }
      std::printf("dram,%zu,%u,%.1f\n", region, kChainLines, median_walk(ns));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pointer_chase: %s\n", e.what());
    return 4;
  }
  return 0;
}
