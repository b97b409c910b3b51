// 12_segmented_segment_timeline: where the balanced segments kernel's time goes. The lesson's kernels
// with the timer stamps of ch12::SegmentTimeline compiled in (Policy::kTimeline): lane 0 of every
// warp reads the GPU's global timer when it begins, when the cost search has found its range, when
// its first segment is found, after its first and its last window, and the finishing warp of each
// range when it sees the records and when it has written its segment.
//
// The shapes are the benchmark's (f32 sum, 2^26 / mean segments of mean length 32 and 1024,
// lengths uniform or heavy-tailed). Each shape is called cold (the L2 scrubbed first, as
// common/timing.hpp times a call), 3 times unstamped, then kCalls times stamped; every figure is the
// median over the stamped calls of that call's figure, in microseconds from the first warp's
// start. The stamped calls' results must equal the unstamped ones bit for bit (the stamps change
// nothing that the kernels compute). It prints one Markdown table, a column a shape;
// results/h200/experiments/segment_timeline.md holds the H200's output.
//
//   12_segmented_segment_timeline
//
// Exit codes: 0 done, 1 a stamped call's results differ from an unstamped one's, 2 bad arguments,
// 3 no GPU, 4 a CUDA error.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/12_segmented/segment_experiment.hpp"
#include "experiments/11_batched/timeline_experiment.hpp"
#include "command_line.hpp"
#include "device_info.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace {

using Op = red::Sum<float>;
struct Stamped : ch12::SegmentTuning {
  static constexpr bool kTimeline = true;
};
using Point = ch12::SegmentTimeline::Point;
constexpr int kCalls = 5;

using ch11::quantile;

// One stamped call's figures, in the order of kRows.
std::vector<double> figures(const std::vector<ch12::SegmentTimeline>& t, double call_us, double gbps) {
  unsigned long long start = ~0ull;
  for (const auto& r : t)
    if (r.at[Point::entry]) start = std::min(start, r.at[Point::entry]);
  const auto us = [&](unsigned long long ns) { return static_cast<double>(ns - start) / 1e3; };
  std::vector<double> bounds, first_segment, first_window, last_window, per_window, visible, done;
  struct Sm {
    std::vector<std::size_t> blocks;  // the blocks that ran on it, lowest-numbered first
  };
  std::vector<Sm> sms(1024);
  for (std::size_t r = 0; r < t.size(); ++r) {
    const auto& x = t[r];
    if (x.at[Point::finish_visible]) visible.push_back(us(x.at[Point::finish_visible]));
    if (x.at[Point::finish_done]) done.push_back(us(x.at[Point::finish_done]));
    if (!x.at[Point::last_window]) continue;  // an empty range
    bounds.push_back(us(x.at[Point::bounds]));
    first_segment.push_back(us(x.at[Point::first_segment]));
    first_window.push_back(us(x.at[Point::first_window]));
    last_window.push_back(us(x.at[Point::last_window]));
    if (x.windows > 1) {
      const double loop_ns = static_cast<double>(x.at[Point::last_window] - x.at[Point::first_window]);
      per_window.push_back(loop_ns / 1e3 / (x.windows - 1));
    }
    const std::size_t block = r / ch12::kWarpsPerBlock;
    auto& blocks = sms[x.sm % sms.size()].blocks;
    if (blocks.empty() || blocks.back() != block) blocks.push_back(block);
  }
  // A block's warps' mean end; an SM's mean over its warps; blocks by their rank on their SM.
  std::vector<double> block_mean(t.size() / ch12::kWarpsPerBlock + 1, 0.0), block_warps(block_mean.size(), 0.0);
  for (std::size_t r = 0; r < t.size(); ++r)
    if (t[r].at[Point::last_window]) {
      block_mean[r / ch12::kWarpsPerBlock] += us(t[r].at[Point::last_window]);
      block_warps[r / ch12::kWarpsPerBlock] += 1;
    }
  std::vector<double> sm_mean, rank_sum(4, 0.0), rank_count(4, 0.0);
  for (const Sm& sm : sms) {
    if (sm.blocks.empty()) continue;
    double sum = 0, warps = 0;
    for (std::size_t i = 0; i < sm.blocks.size(); ++i) {
      const std::size_t b = sm.blocks[i];
      sum += block_mean[b];
      warps += block_warps[b];
      if (i < 4 && block_warps[b] > 0) {
        rank_sum[i] += block_mean[b] / block_warps[b];
        rank_count[i] += 1;
      }
    }
    sm_mean.push_back(sum / warps);
  }
  std::vector<double> f = {call_us, gbps, quantile(bounds, 0.5), quantile(bounds, 1.0), quantile(first_segment, 0.5),
                           quantile(first_window, 0.5), quantile(first_window, 1.0), quantile(per_window, 0.5),
                           quantile(last_window, 0.0), quantile(last_window, 0.5), quantile(last_window, 1.0),
                           quantile(sm_mean, 1.0)};
  for (int i = 0; i < 4; ++i) f.push_back(rank_count[i] > 0 ? rank_sum[i] / rank_count[i] : 0);
  f.push_back(quantile(visible, 0.5));
  f.push_back(quantile(done, 1.0));
  return f;
}

// The per-window row is printed to the nanosecond, the others to a tenth.
constexpr std::size_t kPerWindowRow = 7;
const char* const kRows[] = {
    "the call, between events around it (us)",
    "GB/s (the elements and the offsets read once plus the results written)",
    "cost search done: median warp",
    "cost search done: last warp",
    "first segment found: median warp",
    "first window done: median warp",
    "first window done: last warp",
    "a window (from the first's end to the last's, per window): median warp",
    "last window done: first warp",
    "last window done: median warp",
    "last window done: last warp",
    "last window done: the SM whose warps' mean is latest (the end if each SM shared out its work evenly)",
    "last window done: mean of each SM's lowest-numbered block",
    "last window done: mean of each SM's second block",
    "last window done: mean of each SM's third block",
    "last window done: mean of each SM's fourth block",
    "finishing kernel: the records visible (median warp)",
    "finishing kernel: the last segment written",
};

int run() {
  const red::DeviceInfo dev = red::query_device();
  const red::L2Scrubber scrubber(dev);
  red::Stream stream;
  std::vector<std::vector<double>> columns;
  bool same = true;
  for (const ch12::ExperimentShape& shape : ch12::kExperimentShapes) {
    const ch12::SegmentInput input(shape);
    ch12::Plan p;
    p.vector = true;
    ch12::plan_balanced<Op, float, Stamped>(p, input.n, input.segments);
    const red::DeviceBuffer scratch(p.scratch_bytes);
    const ch12::SegmentedCall c = input.call(scratch, stream.get());
    const std::size_t ranges = std::size_t{p.blocks} * ch12::kWarpsPerBlock;
    red::DeviceBuffer stamps(ranges * sizeof(ch12::SegmentTimeline));
    ch11::StampedCalls calls;
    calls.stamp = [&](bool on) {
      ch12::SegmentTimeline* where = on ? static_cast<ch12::SegmentTimeline*>(stamps.get()) : nullptr;
      CUDA_CHECK(cudaMemcpyToSymbol(ch12::segment_timeline, &where, sizeof where));
      CUDA_CHECK(cudaMemsetAsync(stamps.get(), 0, stamps.bytes(), stream.get()));
    };
    calls.call = [&] { ch12::launch_balanced<Op, float, Stamped>(c, p); };
    calls.results = [&] {
      std::vector<unsigned char> got(input.segments * 4);
      input.out.download(got.data(), got.size());
      return got;
    };
    calls.figures = [&](double us) {
      std::vector<ch12::SegmentTimeline> host_stamps(ranges);
      stamps.download(host_stamps.data(), stamps.bytes());
      return figures(host_stamps, us, input.bytes() / us / 1e3);
    };
    bool shape_same = true;
    columns.push_back(ch11::median_figures(calls, scrubber, stream, 3, kCalls, shape_same));
    if (!shape_same) {
      std::fprintf(stderr, "%s mean %zu: a stamped call's results differ from an unstamped call's\n", shape.name,
                   shape.mean);
      same = false;
    }
  }
  std::printf(
      "# Where the balanced segments kernel's time goes: f32 sum, microseconds from the first warp's start\n\n");
  std::printf("Device: %s. Each figure is the median over %d calls, each cold (the L2 scrubbed before it), of that "
              "call's figure; the warps' timer stamps (ch12::SegmentTimeline) are read by lane 0 of each warp.\n\n",
              dev.name.c_str(), kCalls);
  ch12::print_shape_header("", "---|");
  ch11::print_figure_rows(kRows, std::size(kRows), columns,
                          [](std::size_t row) { return row == kPerWindowRow ? " %.3f |" : " %.1f |"; });
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return red::experiment_without_options(
      argc, argv, "12_segmented_segment_timeline",
      "Where the balanced segments kernel's time goes: the warps' timer stamps on the benchmark's four\n"
      "segment shapes (f32 sum); it takes no options.",
      "results/h200/experiments/segment_timeline.md", [] { return run(); });
}
