// 11_batched_segment_tuning: the balanced segments kernel's choices (ch11::SegmentTuning), each
// changed alone, timed side by side in one process on the benchmark's four segment shapes.
//
// The shapes are the benchmark's (f32 sum, 2^26 / mean segments of mean length 32 and 1024,
// lengths uniform or heavy-tailed). Every variant runs the lesson's two kernels with its own grid
// (one wave at its own occupancy) and is timed as the benchmark times a call (common/timing.hpp,
// the steady state, cold); its results must be bitwise those of the lesson's policy where only
// the schedule differs, and within the sum's bound where the order of additions differs too.
// It prints a table of GB/s (the input read once plus the results written), the lesson's first.
// results/h200/experiments/segment_tuning.md holds the H200's output.
//
//   11_batched_segment_tuning
//
// Exit codes: 0 done, 1 a variant's results disagree, 3 no GPU, 4 a CUDA error.
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "11_batched/host_reference.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace {

using Op = red::Sum<float>;
using Acc = Op::Acc;

// The lesson's policy with one choice changed.
template <unsigned kItemsV, bool kDoubleBufferV, unsigned kMinBlocksV>
struct Changed {
  static constexpr unsigned kItems = kItemsV;
  static constexpr bool kDoubleBuffer = kDoubleBufferV;
  static constexpr unsigned kMinBlocks = kMinBlocksV;
};
using Lesson = ch11::SegmentTuning;

struct Shape {
  const char* name;
  std::size_t mean;
  ch11::SegmentDist dist;
};

struct Variant {
  std::string name;
  std::function<void(const float*, const std::int64_t*, std::size_t, std::size_t, float*, void*, cudaStream_t)> call;
  unsigned registers = 0, blocks_per_sm = 0;
};

template <class Policy>
Variant variant(const std::string& name) {
  const auto kernel = ch11::segments_balanced<Op, float, true, Policy>;
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  Variant v{name, nullptr, static_cast<unsigned>(attributes.numRegs), ch11::blocks_per_sm<ch11::kBlock>(kernel)};
  const std::size_t warps = std::size_t{ch11::sm_count()} * v.blocks_per_sm * ch11::kWarpsPerBlock;
  v.call = [warps](const float* in, const std::int64_t* offsets, std::size_t segments, std::size_t n, float* out,
                   void* scratch, cudaStream_t stream) {
    // As the lesson's plan sizes its grid, with this policy's window and occupancy.
    constexpr std::size_t kWindow = 32 * Policy::kItems;
    const std::size_t padded = n + Policy::kItems;
    const std::size_t per_warp = red::ceil_div(red::ceil_div(padded, warps), kWindow) * kWindow;
    const auto blocks = static_cast<unsigned>(red::ceil_div(red::ceil_div(padded, per_warp), ch11::kWarpsPerBlock));
    auto* records = static_cast<ch11::Pieces<Acc>*>(scratch);
    ch11::segments_balanced<Op, float, true, Policy><<<blocks, ch11::kBlock, 0, stream>>>(in, offsets, segments, per_warp,
                                                                                       out, records);
    ch11::segments_balanced_finish<Op><<<blocks, ch11::kBlock, 0, stream>>>(
        offsets, segments, per_warp, Policy::kItems, std::size_t{blocks} * ch11::kWarpsPerBlock, records, out);
    CUDA_CHECK(cudaGetLastError());
  };
  return v;
}

int run() {
  const red::DeviceInfo dev = red::query_device();
  const std::vector<Variant> variants = {
      variant<Lesson>("lesson: 16 a lane, one array, 4 blocks an SM"),
      variant<Changed<16, true, 3>>("16 a lane, two arrays (3 blocks an SM)"),
      variant<Changed<32, false, 3>>("32 a lane, one array (3 blocks an SM)"),
      variant<Changed<8, true, 4>>("8 a lane, two arrays, 4 blocks an SM"),
  };
  const Shape shapes[] = {{"uniform", 32, ch11::SegmentDist::uniform},
                          {"heavy", 32, ch11::SegmentDist::heavy},
                          {"uniform", 1024, ch11::SegmentDist::uniform},
                          {"heavy", 1024, ch11::SegmentDist::heavy}};
  const std::size_t total = std::size_t{1} << 26;
  const red::L2Scrubber scrubber(dev);
  red::Stream stream;
  std::printf("# The balanced segments kernel's choices, one changed at a time: f32 sum, GB/s\n\n");
  std::printf("Device: %s. Steady state, cold (common/timing.hpp), the input read once plus the results written.\n\n",
              dev.name.c_str());
  std::printf("| variant | registers | blocks an SM |");
  for (const Shape& s : shapes) std::printf(" %s, mean %zu |", s.name, s.mean);
  std::printf("\n|---|---:|---:|");
  for (std::size_t i = 0; i < std::size(shapes); ++i) std::printf("---:|");
  std::printf("\n");
  std::vector<std::vector<double>> gbps(variants.size());
  bool agree = true;
  for (const Shape& shape : shapes) {
    const std::vector<std::int64_t> offsets = ch11::make_offsets(total / shape.mean, shape.mean, shape.dist, 11);
    const std::size_t segments = offsets.size() - 1, n = static_cast<std::size_t>(offsets.back());
    const red::HostArray host = red::generate(red::DType::f32, n, red::Dist::normal, 12);
    const red::DeviceInput in = red::upload(host);
    red::DeviceBuffer offsets_device(offsets.size() * sizeof(std::int64_t)), out(segments * 4),
        scratch(std::size_t{64} << 20);
    offsets_device.upload(offsets.data(), offsets.size() * sizeof(std::int64_t));
    const auto* o = static_cast<const std::int64_t*>(offsets_device.get());
    std::vector<float> lesson_results;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const auto call = [&] {
        variants[v].call(static_cast<const float*>(in.data), o, segments, n, static_cast<float*>(out.get()), scratch.get(),
                         stream.get());
      };
      red::TimingConfig cfg;
      cfg.scrubber = &scrubber;
      const red::Timing t = red::time_on_stream(call, stream.get(), cfg);
      gbps[v].push_back((n * 4.0 + segments * 4.0) / t.median_us / 1e3);
      std::vector<float> got(segments);
      out.download(got.data(), got.size() * 4);
      if (v == 0) {
        lesson_results = got;
        continue;
      }
      // Another window size adds in another order: within a relative 1e-4 of the lesson's sums.
      for (std::size_t s = 0; s < segments; ++s)
        if (std::fabs(got[s] - lesson_results[s]) > 1e-4f * (1.0f + std::fabs(lesson_results[s]))) {
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
  return agree ? 0 : 1;
}

}  // namespace

int main() {
  if (!red::gpu_available()) {
    std::fprintf(stderr,
                 "11_batched_segment_tuning: no usable CUDA GPU; results/h200/experiments/segment_tuning.md holds the "
                 "published H200 run.\n");
    return red::kExitNoGpu;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "11_batched_segment_tuning: %s\n", e.what());
    return red::kExitCudaError;
  }
}
