// 12_segmented_segment_tuning: the tuned balanced segments kernel's numbers (ch12::SegmentTuning,
// 12_segmented/variants.cuh), each changed alone (with the register cap, blocks an SM, that the
// change needs), timed side by side in one process on the benchmark's four segment shapes: a
// lane's elements in a window, the windows copied into shared memory or loaded by each lane into
// its registers, blocks an SM, waves of ranges, and what a segment's end costs.
//
// The shapes are the benchmark's (f32 sum, 2^26 / mean segments of mean length 32 and 1024,
// lengths uniform or heavy-tailed); a second table times the choices that depend on the element's
// size on f16 sums of the same bytes (2^27 / mean segments). Every variant runs through the tuned kernel's own plan and
// launch (plan_balanced_tuned and launch_balanced_tuned in 12_segmented/variants.cuh: ranges for
// one wave of blocks at the variant's occupancy, or for the waves it asks for) and is timed as the
// benchmark times a call (common/timing.hpp, the steady state, cold). Each changes the order of
// additions, so its results must agree with the tuned policy's within a rounding bound. It prints
// a table of GB/s (the elements and the offsets read once plus the results written,
// counted_bytes), the tuned policy's first. results/h200/experiments/segment_tuning.md holds the
// H200's output.
//
//   12_segmented_segment_tuning
//
// Exit codes: 0 done, 1 a variant's results disagree with the tuned policy's, 2 bad arguments,
// 3 no GPU, 4 a CUDA error.
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

using Tuned = ch12::SegmentTuning;

// The tuned policy with its numbers changed.
template <unsigned kItemsV, bool kStagedLoadsV, unsigned kMinBlocksV, unsigned kWavesV = Tuned::kWaves,
          unsigned kSegmentCostV = Tuned::kSegmentCost>
struct Changed {
  static constexpr unsigned kItems = kItemsV;
  static constexpr bool kStagedLoads = kStagedLoadsV;
  static constexpr unsigned kMinBlocks = kMinBlocksV;
  static constexpr unsigned kWaves = kWavesV;
  static constexpr unsigned kSegmentCost = kSegmentCostV;
};

struct Variant {
  std::string name;
  std::function<void(const ch12::SegmentedCall&)> call;
  unsigned registers = 0, blocks_per_sm = 0;
};

// The tuned kernel's plan and launch (variants.cuh), with another policy, for a sum of T.
template <class Policy, class T = float>
Variant variant(const std::string& name) {
  using Op = red::Sum<T>;
  const auto kernel = ch12::segments_balanced_tuned<Op, T, true, Policy>;
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  Variant v{name, nullptr, static_cast<unsigned>(attributes.numRegs), ch11::blocks_per_sm<ch12::kBlock>(kernel)};
  v.call = [](const ch12::SegmentedCall& c) {
    ch12::Plan p;
    p.vector = true;
    ch12::plan_balanced_tuned<Op, T, Policy>(p, c.n, c.segments);
    if (c.scratch_bytes < p.scratch_bytes) throw std::runtime_error("scratch too small for " + std::to_string(p.scratch_bytes));
    ch12::launch_balanced_tuned<Op, T, Policy>(c, p);
    CUDA_CHECK(cudaGetLastError());
  };
  return v;
}

// The variants on the four shapes, as a table of GB/s (dtype: their element type's); whether every
// variant's results agree with the first's (the tuned policy's).
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
    std::vector<float> tuned_results;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const auto call = [&] { variants[v].call(c); };
      red::TimingConfig cfg;
      cfg.scrubber = &scrubber;
      const red::Timing t = red::time_on_stream(call, stream.get(), cfg);
      gbps[v].push_back(input.bytes() / t.median_us / 1e3);
      std::vector<float> got(segments);
      input.out.download(got.data(), got.size() * 4);
      if (v == 0) {
        tuned_results = got;
        continue;
      }
      // Another window size adds in another order: within 2^-12 of the segment's sum of |x| of
      // the tuned policy's (each is within (depth + 1) eps sum|x| of the exact sum, depth below
      // 1000).
      for (std::size_t s = 0; s < segments; ++s)
        if (std::fabs(got[s] - tuned_results[s]) > abs_sums[s] / 4096) {
          std::fprintf(stderr, "%s disagrees with the tuned policy at segment %zu of %s mean %zu: %g against %g\n",
                       variants[v].name.c_str(), s, shape.name, shape.mean, got[s], tuned_results[s]);
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
  // Changed<items a lane, copied into shared memory, blocks an SM, waves, an end's cost>
  const std::vector<Variant> variants = {
      variant<Tuned>("tuned: 16 a lane, copied into shared memory 512 bytes an instruction, 4 blocks an SM, one wave, "
                     "an end costs 32 elements"),
      variant<Changed<16, false, 4>>("each lane loads its own 16 into registers"),
      variant<Changed<32, false, 3>>("into registers, 32 a lane (3 blocks an SM)"),
      variant<Changed<8, true, 4>>("8 a lane"),
      variant<Changed<16, true, 4, 2>>("ranges for two waves of blocks"),
      variant<Changed<16, true, 4, 4>>("ranges for four waves of blocks"),
      variant<Changed<16, true, 4, 1, 0>>("ranges of equal elements (an end costs nothing)"),
      variant<Changed<16, true, 4, 1, 8>>("an end costs 8 elements"),
      variant<Changed<16, true, 4, 1, 16>>("an end costs 16 elements"),
      variant<Changed<16, true, 4, 1, 24>>("an end costs 24 elements"),
      variant<Changed<16, true, 4, 1, 64>>("an end costs 64 elements"),
  };
  // f16: a lane's elements, and how they come (the tuned policy for 16-bit inputs first).
  using Tuned16 = ch12::SegmentPolicy<__half>;
  const std::vector<Variant> variants_f16 = {
      variant<Tuned16, __half>("tuned for 16-bit inputs: " + std::to_string(Tuned16::kItems) +
                               " a lane (64 bytes), each lane loading its own into registers, " +
                               std::to_string(Tuned16::kMinBlocks) + " blocks an SM"),
      variant<Tuned, __half>("f32's policy: 16 a lane (32 bytes), copied into shared memory, 4 blocks an SM"),
      variant<Changed<16, false, 4>, __half>("16 a lane, each lane loading its own into registers"),
      variant<Changed<32, false, 4>, __half>("32 a lane into registers, held to 4 blocks an SM"),
  };

  const red::L2Scrubber scrubber(dev);
  red::Stream stream;
  std::printf("# The tuned balanced segments kernel's numbers, one changed at a time (with the register cap it "
              "needs): sums, GB/s\n\n");
  std::printf("Device: %s. Steady state, cold (common/timing.hpp), the elements and the offsets read once plus the results written.\n\n",
              dev.name.c_str());
  std::printf("**f32**\n\n");
  bool agree = table(variants, red::DType::f32, scrubber, stream);
  std::printf("\n**f16**: the same bytes, twice the elements\n\n");
  agree &= table(variants_f16, red::DType::f16, scrubber, stream);
  return agree ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return red::experiment_without_options(
      argc, argv, "12_segmented_segment_tuning",
      "The tuned balanced segments kernel's numbers (ch12::SegmentTuning), each changed alone, timed on\n"
      "the benchmark's four segment shapes (f32 and f16 sums); it takes no options.",
      "results/h200/experiments/segment_tuning.md", [] { return run(); });
}
