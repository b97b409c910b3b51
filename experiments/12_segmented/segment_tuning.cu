// 12_segmented_segment_tuning: the balanced segments kernel's choices (ch12::SegmentTuning), each
// changed alone (with the register cap, blocks an SM, that the change needs; a second array or 32
// elements a lane only with the loads into registers, which says so), timed side by side in one
// process on the benchmark's four segment shapes.
//
// The shapes are the benchmark's (f32 sum, 2^26 / mean segments of mean length 32 and 1024,
// lengths uniform or heavy-tailed); a second table times the choices that depend on the element's
// size on f16 sums of the same shapes. Every variant runs through the lesson's own plan and launch
// (plan_balanced and launch_balanced in 12_segmented/reduce.cuh: ranges for one wave of blocks at the variant's
// occupancy, or for the waves it asks for) and is
// timed as the benchmark times a call (common/timing.hpp, the steady state, cold). Each changes
// the order of additions, so its results must agree with the lesson's within a rounding bound.
// It prints a table of GB/s (the elements and the offsets read once plus the results written,
// counted_bytes), the lesson's first.
// results/h200/experiments/segment_tuning.md holds the H200's output.
//
//   12_segmented_segment_tuning
//
// Exit codes: 0 done, 1 a variant's results disagree with the lesson's, 2 bad arguments, 3 no GPU, 4 a CUDA
// error.
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/12_segmented/segment_experiment.hpp"
#include "command_line.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace {

// The lesson's policy with one choice changed.
template <unsigned kItemsV, bool kDoubleBufferV, unsigned kMinBlocksV, bool kStreamingLoadsV = true,
          unsigned kWavesV = ch12::SegmentTuning::kWaves, bool kEarlyFinishV = ch12::SegmentTuning::kEarlyFinish,
          unsigned kSegmentCostV = ch12::SegmentTuning::kSegmentCost, bool kStagedLoadsV = ch12::SegmentTuning::kStagedLoads,
          bool kEarlyProbeV = ch12::SegmentTuning::kEarlyProbe, bool kPreloadBeforeV = ch12::SegmentTuning::kPreloadBefore,
          bool kSharedBoundsV = ch12::SegmentTuning::kSharedBounds, bool kGuessProbeV = ch12::SegmentTuning::kGuessProbe>
struct Changed {
  static constexpr unsigned kItems = kItemsV;
  static constexpr bool kDoubleBuffer = kDoubleBufferV;
  static constexpr unsigned kMinBlocks = kMinBlocksV;
  static constexpr bool kStreamingLoads = kStreamingLoadsV;
  static constexpr unsigned kWaves = kWavesV;
  static constexpr bool kEarlyFinish = kEarlyFinishV;
  static constexpr unsigned kSegmentCost = kSegmentCostV;
  static constexpr bool kStagedLoads = kStagedLoadsV;
  static constexpr bool kEarlyProbe = kEarlyProbeV;
  static constexpr bool kTimeline = false;
  static constexpr bool kPreloadBefore = kPreloadBeforeV;
  static constexpr bool kSharedBounds = kSharedBoundsV;
  static constexpr bool kGuessProbe = kGuessProbeV;
};
using Lesson = ch12::SegmentTuning;

struct Variant {
  std::string name;
  std::function<void(const ch12::SegmentedCall&)> call;
  unsigned registers = 0, blocks_per_sm = 0;
};

// The lesson's plan and launch of the balanced mapping (reduce.cuh), with another policy, for a sum
// of T.
template <class Policy, class T = float>
Variant variant(const std::string& name) {
  using Op = red::Sum<T>;
  const auto kernel = ch12::segments_balanced<Op, T, true, Policy>;
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  Variant v{name, nullptr, static_cast<unsigned>(attributes.numRegs), ch11::blocks_per_sm<ch12::kBlock>(kernel)};
  v.call = [](const ch12::SegmentedCall& c) {
    ch12::Plan p;
    p.vector = true;
    ch12::plan_balanced<Op, T, Policy>(p, c.n, c.segments);
    if (c.scratch_bytes < p.scratch_bytes) throw std::runtime_error("scratch too small for " + std::to_string(p.scratch_bytes));
    ch12::launch_balanced<Op, T, Policy>(c, p);
    CUDA_CHECK(cudaGetLastError());
  };
  return v;
}

// The variants on the four shapes, as a table of GB/s (dtype: their element type's); whether every
// variant's results agree with the first's (the lesson's).
bool table(const std::vector<Variant>& variants, red::DType dtype, const red::L2Scrubber& scrubber, red::Stream& stream) {
  ch12::print_shape_header("variant | registers | blocks an SM", "---|---:|---:|");
  std::vector<std::vector<double>> gbps(variants.size());
  bool agree = true;
  for (const ch12::ExperimentShape& shape : ch12::kExperimentShapes) {
    const ch12::SegmentInput input(shape, dtype);
    const std::vector<std::int64_t>& offsets = input.offsets;
    const std::size_t segments = input.segments;
    const red::HostArray& host = input.host;
    const red::DeviceBuffer scratch(std::size_t{64} << 20);
    const ch12::SegmentedCall c = input.call(scratch, stream.get());
    std::vector<double> abs_sums(segments, 0.0);
    for (std::size_t s = 0; s < segments; ++s)
      for (auto i = static_cast<std::size_t>(offsets[s]); i < static_cast<std::size_t>(offsets[s + 1]); ++i)
        abs_sums[s] += std::fabs(host.at(i));
    std::vector<float> lesson_results;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const auto call = [&] { variants[v].call(c); };
      red::TimingConfig cfg;
      cfg.scrubber = &scrubber;
      const red::Timing t = red::time_on_stream(call, stream.get(), cfg);
      gbps[v].push_back(input.bytes() / t.median_us / 1e3);
      std::vector<float> got(segments);
      input.out.download(got.data(), got.size() * 4);
      if (v == 0) {
        lesson_results = got;
        continue;
      }
      // Another window size adds in another order: within 2^-12 of the segment's sum of |x| of
      // the lesson's (each is within (depth + 1) eps sum|x| of the exact sum, depth below 1000).
      for (std::size_t s = 0; s < segments; ++s)
        if (std::fabs(got[s] - lesson_results[s]) > abs_sums[s] / 4096) {
          std::fprintf(stderr, "%s disagrees with the lesson at segment %zu of %s mean %zu: %g against %g\n",
                       variants[v].name.c_str(), s, shape.name, shape.mean, got[s], lesson_results[s]);
          agree = false;
          break;
        }
    }
  }
  for (std::size_t v = 0; v < variants.size(); ++v) {
    std::printf("| %s | %u | %u |", variants[v].name.c_str(), variants[v].registers, variants[v].blocks_per_sm);
    for (double g : gbps[v]) std::printf(" %.1f |", g);
    std::printf("\n");
  }
  return agree;
}

int run() {
  const red::DeviceInfo dev = red::query_device();
  // Changed<items, two arrays, blocks an SM, evict-first, waves, early finish, end's cost, staged
  // copies, early probe, the record before a head's loaded with it, bounds passed on in the block,
  // first probes around a guess>
  const std::vector<Variant> variants = {
      variant<Lesson>(std::string("lesson: 16 a lane, copied into shared memory 512 bytes an instruction, 4 blocks an SM, "
                                  "evict-first, one wave, the finish launched early, an end costs 32 elements, the "
                                  "search's first probes ") +
                      (Lesson::kGuessProbe ? "around a guess and " : "") +
                      "loaded at once, the record before a head's loaded with it, a bound searched once a block"),
      variant<Changed<16, false, 4, true, 1, true, 32, true, true, true, true, !Lesson::kGuessProbe>>(
          Lesson::kGuessProbe ? "the search's first probes spread over all the segments (no guess)"
                              : "the search's first probes around where the bound would lie if every segment cost the same"),
      variant<Changed<16, false, 4, true, 1, true, 32, false>>("each lane loads its own 16 into registers"),
      variant<Changed<16, false, 4, true, 1, true, 32, false, false>>(
          "into registers, the search's first probes loaded once offsets[0] and offsets[segments] have come"),
      variant<Changed<16, true, 3, true, 1, true, 32, false>>("into registers, two arrays (3 blocks an SM)"),
      variant<Changed<32, false, 3, true, 1, true, 32, false>>("into registers, 32 a lane (3 blocks an SM)"),
      variant<Changed<8, false, 4>>("8 a lane"),
      variant<Changed<16, false, 4, false>>("no evict-first hint"),
      variant<Changed<16, false, 4, true, 1, true, 32, true, false>>(
          "the search's first probes loaded once offsets[0] and offsets[segments] have come"),
      variant<Changed<16, false, 4, true, 1, false>>("the finishing kernel launched once the first has ended"),
      variant<Changed<16, false, 4, true, 1, true, 32, true, true, false>>(
          "the finishing kernel reads a head's record, then the tails (two trips to memory)"),
      variant<Changed<16, false, 4, true, 1, true, 32, true, true, true, !Lesson::kSharedBounds>>(
          Lesson::kSharedBounds ? "each warp searches both of its range's bounds"
                                : "each warp searches its first bound, the next warp's is its last (shared memory)"),
      variant<Changed<16, false, 4, true, 2>>("ranges for two waves of blocks"),
      variant<Changed<16, false, 4, true, 4>>("ranges for four waves of blocks"),
      variant<Changed<16, false, 4, true, 1, true, 0>>("ranges of equal elements (an end costs nothing)"),
      variant<Changed<16, false, 4, true, 1, true, 8>>("an end costs 8 elements"),
      variant<Changed<16, false, 4, true, 1, true, 16>>("an end costs 16 elements"),
      variant<Changed<16, false, 4, true, 1, true, 24>>("an end costs 24 elements"),
      variant<Changed<16, false, 4, true, 1, true, 64>>("an end costs 64 elements"),
  };
  // f16: a lane's elements, and how they come (the lesson's for 16-bit inputs first).
  using Lesson16 = ch12::SegmentPolicy<__half>;
  const std::vector<Variant> variants_f16 = {
      variant<Lesson16, __half>("lesson for 16-bit inputs: " + std::to_string(Lesson16::kItems) +
                                " a lane (64 bytes), each lane loading its own into registers, " +
                                std::to_string(Lesson16::kMinBlocks) + " blocks an SM"),
      variant<Lesson, __half>("f32's lesson: 16 a lane (32 bytes), copied into shared memory, 4 blocks an SM"),
      variant<Changed<16, false, 4, true, 1, true, 32, false>, __half>("16 a lane, each lane loading its own into registers"),
      variant<Changed<32, false, 4, true, 1, true, 32, false>, __half>("32 a lane into registers, held to 4 blocks an SM"),
      variant<Changed<32, false, 3, true, 1, true, 32, false, true, true, true, !Lesson16::kGuessProbe>, __half>(
          Lesson16::kGuessProbe ? "the lesson for 16-bit inputs, the search's first probes spread over all the segments (no guess)"
                                : "the lesson for 16-bit inputs, the search's first probes around a guess"),
  };

  const red::L2Scrubber scrubber(dev);
  red::Stream stream;
  std::printf("# The balanced segments kernel's choices, one changed at a time (with the register cap it needs): "
              "sums, GB/s\n\n");
  std::printf("Device: %s. Steady state, cold (common/timing.hpp), the elements and the offsets read once plus the results written.\n\n",
              dev.name.c_str());
  std::printf("**f32**\n\n");
  bool agree = table(variants, red::DType::f32, scrubber, stream);
  std::printf("\n**f16**: the same elements in half the bytes\n\n");
  agree &= table(variants_f16, red::DType::f16, scrubber, stream);
  return agree ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return red::experiment_without_options(
      argc, argv, "12_segmented_segment_tuning",
      "The balanced segments kernel's choices (ch12::SegmentTuning), each changed alone, timed on the\n"
      "benchmark's four segment shapes (f32 and f16 sums); it takes no options.",
      "results/h200/experiments/segment_tuning.md", [] { return run(); });
}
