// 11_batched_column_timeline: where the tuned columns kernel's time goes. The tuned launcher's plan
// for each shape, run by this file's stamped copy of its kernel (ch11::columns_tiled with timer
// stamps): thread 0 of every block reads the GPU's global timer when the block begins, when its own
// share of the strip is read, when the block's columns have met, when it has its ticket (or, with
// one chunk a strip, has written its results), and the last block of each strip when it has
// combined the strip's partials and written the results. What a column reduction pays on top of
// reading the matrix lies in the last two: the ticket, and the combine after it.
//
// The shapes are the benchmark's that the tiled kernel takes: f32 sum over B x L = 2^26 elements,
// L = 8 to 65536. The input is all ones, so every result is exactly B. Each shape is called cold
// (the L2 scrubbed first, as common/timing.hpp times a call), 3 times by the shipped kernel
// (ch11::launch_tuned), then kCalls times by the stamped copy; every figure is the median over the
// stamped calls of that call's figure, in microseconds from the first block's start. The stamped
// calls' results must equal the shipped kernel's bit for bit. It prints one Markdown table, a
// column a shape; results/h200/experiments/column_timeline.md holds the H200's output.
//
//   11_batched_column_timeline
//
// Exit codes: 0 done, 1 a result is wrong or a stamped call's results differ from the shipped
// kernel's, 2 bad arguments, 3 no GPU, 4 a CUDA error.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "11_batched/variants.cuh"
#include "experiments/11_batched/timeline_experiment.hpp"
#include "command_line.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace {

using Op = red::Sum<float>;
constexpr std::size_t kTotal = std::size_t{1} << 26;
constexpr int kCalls = 5;

// What thread 0 of a block stamps: the GPU's global timer (ns) at these points, the SM it ran on,
// and whether it combined its strip's partials.
struct ColumnTimeline {
  enum Point : unsigned {
    entry,       // the block has begun
    loads_done,  // thread 0's last trip has been added (its share of the strip is read)
    met,         // the block's columns have met (the tree is done: every thread's loads are in)
    ticket,      // the block has its ticket (chunked strips), or has written its results
    finished,    // the strip's last block has combined the partials and written the results
  };
  unsigned long long at[5];
  unsigned sm;
  unsigned last;
};
using Point = ColumnTimeline::Point;

// ch11::columns_tiled for f32 sums with 16-byte loads and kTrip rows a trip, the same code with
// thread 0's stamps into timeline[blockIdx.y x gridDim.x + blockIdx.x] between its steps.
template <unsigned kTrip>
__global__ void __launch_bounds__(ch11::kColumnBlock, ch11::kColumnMinBlocks<float, float, true>)
    columns_tiled_stamped(const float* in, std::size_t rows, std::size_t cols, unsigned across, void* out,
                          unsigned* tickets, float* partials, ColumnTimeline* timeline) {
  ColumnTimeline& mine = timeline[std::size_t{blockIdx.y} * gridDim.x + blockIdx.x];
  const auto mark = [&](Point point) {
    if (threadIdx.x == 0) mine.at[point] = ch11::global_timer();
  };
  mark(Point::entry);
  if (threadIdx.x == 0) asm volatile("mov.u32 %0, %%smid;" : "=r"(mine.sm));
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  float* tree = reinterpret_cast<float*>(shared_bytes);
  const unsigned P = across;
  const std::size_t vectors = cols / 4, v0 = std::size_t{blockIdx.x} * P;
  float acc[4];
  const std::size_t tile = std::size_t{kTrip} * (ch11::kColumnBlock / P);
  ch11::column_trips<Op, float, true, kTrip>(in, std::size_t{blockIdx.y} * tile, rows, vectors, cols, P, v0, acc, gridDim.y);
  mark(Point::loads_done);
  ch11::column_meet<Op>(P, acc, tree);
  mark(Point::met);
  const std::size_t v = v0 + threadIdx.x;  // for the threads with y == 0
  const bool holds = threadIdx.x < P && v < vectors;
  if (gridDim.y == 1) {
    if (holds)
#pragma unroll
      for (unsigned j = 0; j < 4; ++j) ch11::store_result<Op>(out, v * 4 + j, acc[j]);
    mark(Point::ticket);
    return;
  }
  if (holds)
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) partials[std::size_t{blockIdx.y} * cols + v * 4 + j] = acc[j];
  const bool last = ch11::last_to_arrive(tickets + blockIdx.x, gridDim.y);
  mark(Point::ticket);
  if (!last) return;
  ch11::finish_column_strip<Op, true>(partials, gridDim.y, cols, v0 * 4, std::min(cols, (v0 + P) * 4), out, tree);
  mark(Point::finished);
  if (threadIdx.x == 0) mine.last = 1;
}

constexpr std::size_t kBlocksRow = 2;  // a count, printed whole
const char* const kRows[] = {
    "the call, between events around it (us)",
    "GB/s (the input read once plus the results written)",
    "blocks (strips x chunks)",
    "last block begun",
    "a block's own rows read (thread 0): first block",
    "a block's own rows read: median block",
    "a block's own rows read: last block",
    "a block's columns met: last block",
    "ticket taken (one chunk: results written): last block",
    "a strip's partials combined and written: last strip",
    "from the last block's rows read to the last result written",
};

// One stamped call's figures, in the order of kRows.
std::vector<double> figures(const std::vector<ColumnTimeline>& t, double call_us, double gbps) {
  unsigned long long start = ~0ull;
  for (const auto& b : t) start = std::min(start, b.at[Point::entry]);
  const auto us = [&](unsigned long long ns) { return ns ? static_cast<double>(ns - start) / 1e3 : 0.0; };
  std::vector<double> entry, loads, met, ticket, finished;
  for (const auto& b : t) {
    entry.push_back(us(b.at[Point::entry]));
    loads.push_back(us(b.at[Point::loads_done]));
    met.push_back(us(b.at[Point::met]));
    ticket.push_back(us(b.at[Point::ticket]));
    if (b.last) finished.push_back(us(b.at[Point::finished]));
  }
  const double last_result = finished.empty() ? ch11::quantile(ticket, 1.0) : ch11::quantile(finished, 1.0);
  return {call_us,
          gbps,
          static_cast<double>(t.size()),
          ch11::quantile(entry, 1.0),
          ch11::quantile(loads, 0.0),
          ch11::quantile(loads, 0.5),
          ch11::quantile(loads, 1.0),
          ch11::quantile(met, 1.0),
          ch11::quantile(ticket, 1.0),
          finished.empty() ? 0.0 : ch11::quantile(finished, 1.0),
          last_result - ch11::quantile(loads, 1.0)};
}

int run() {
  const red::DeviceInfo dev = red::query_device();
  const red::L2Scrubber scrubber(dev);
  red::Stream stream;
  const std::vector<float> ones(kTotal, 1.0f);
  red::DeviceBuffer in(kTotal * 4), out(kTotal / 8 * 4);
  in.upload(ones.data(), kTotal * 4);
  const std::vector<std::size_t> lengths = {8, 32, 128, 1024, 8192, 65536};
  std::vector<std::vector<double>> columns;
  bool right = true;
  for (const std::size_t L : lengths) {
    const std::size_t B = kTotal / L;
    ch11::BatchedCall c;
    c.input = in.get();
    c.shape.layout = ch11::Layout::columns;
    c.shape.rows = B;
    c.shape.cols = c.shape.stride = L;
    const ch11::Plan p = ch11::plan_tuned<Op, float>(c);
    if (p.strategy != ch11::Strategy::columns_tiled || !p.vector || p.trip != 8)
      throw std::logic_error("column_timeline: the launcher no longer tiles these columns with 16-byte loads, 8 rows a trip");
    red::DeviceBuffer scratch(std::max<std::size_t>(p.scratch_bytes, 1));
    scratch.zero_prefix(p.zeroed_scratch_bytes);  // the strips' counters, zero before the first call
    c.output = out.get();
    c.scratch = scratch.get();
    c.scratch_bytes = scratch.bytes();
    c.stream = stream.get();
    const std::size_t strips = red::ceil_div(L / 4, std::size_t{p.across}), blocks = strips * p.split;
    red::DeviceBuffer stamps(blocks * sizeof(ColumnTimeline));
    bool stamped = false;
    ch11::StampedCalls calls;
    calls.stamp = [&](bool on) {
      stamped = on;
      CUDA_CHECK(cudaMemsetAsync(stamps.get(), 0, stamps.bytes(), stream.get()));
    };
    calls.call = [&] {
      if (!stamped) return ch11::launch_tuned<Op, float>(c);  // the shipped kernel
      auto* partials = reinterpret_cast<float*>(static_cast<unsigned char*>(scratch.get()) + p.zeroed_scratch_bytes);
      columns_tiled_stamped<8><<<dim3(static_cast<unsigned>(strips), p.split), ch11::kColumnBlock,
                                 ch11::columns_tree_bytes<float>(4), stream.get()>>>(
          static_cast<const float*>(in.get()), B, L, p.across, out.get(), static_cast<unsigned*>(scratch.get()), partials,
          static_cast<ColumnTimeline*>(stamps.get()));
    };
    calls.results = [&] {
      std::vector<float> got(L);
      out.download(got.data(), L * 4);
      for (std::size_t i = 0; i < L; ++i)
        if (got[i] != float(B)) {
          std::fprintf(stderr, "L = %zu: column %zu is %g, not %zu\n", L, i, got[i], B);
          right = false;
          break;
        }
      std::vector<unsigned char> bytes(L * 4);
      std::memcpy(bytes.data(), got.data(), bytes.size());
      return bytes;
    };
    calls.figures = [&](double us) {
      std::vector<ColumnTimeline> host(blocks);
      stamps.download(host.data(), stamps.bytes());
      return figures(host, us, static_cast<double>(ch11::counted_bytes(c.shape, 4)) / us / 1e3);
    };
    bool same = true;
    columns.push_back(ch11::median_figures(calls, scrubber, stream, 3, kCalls, same));
    if (!same) {
      std::fprintf(stderr, "L = %zu: a stamped call's results differ from the shipped kernel's\n", L);
      right = false;
    }
  }
  std::printf("# Where the tiled columns kernel's time goes: f32 sum, B x L = 2^26, microseconds from the first "
              "block's start\n\n");
  std::printf("Device: %s. Each figure is the median over %d calls, each cold (the L2 scrubbed before it), of that "
              "call's figure; the blocks' timer stamps are read by thread 0 of each block of a stamped copy of "
              "ch11::columns_tiled.\n\n",
              dev.name.c_str(), kCalls);
  std::printf("| |");
  for (const std::size_t L : lengths) std::printf(" L = %zu (B = %zu) |", L, kTotal / L);
  std::printf("\n|---|");
  for (std::size_t i = 0; i < lengths.size(); ++i) std::printf("---:|");
  std::printf("\n");
  ch11::print_figure_rows(kRows, std::size(kRows), columns,
                          [](std::size_t row) { return row == kBlocksRow ? " %.0f |" : " %.1f |"; });
  return right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return red::experiment_without_options(
      argc, argv, "11_batched_column_timeline",
      "Where the tiled columns kernel's time goes: the blocks' timer stamps on the benchmark's column\n"
      "shapes (f32 sum, L = 8 to 65536); it takes no options.",
      "results/h200/experiments/column_timeline.md", [] { return run(); });
}
