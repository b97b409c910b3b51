// What the timeline experiments (experiments/11_batched/column_timeline.cu and
// experiments/12_segmented/segment_timeline.cu) share: calls of a kernel with its timer stamps
// compiled in, each timed cold between events as common/timing.hpp times a call, and every
// figure taken as its median over the stamped calls.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "runner.hpp"
#include "timing.hpp"

namespace ch11 {

// The GPU's global timer, in nanoseconds: the stamps the experiments' kernels write.
__device__ __forceinline__ unsigned long long global_timer() {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// The q-quantile of v (nearest rank, common/timing.hpp).
inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return red::percentile(v, q);
}

// One experiment's calls. `stamp(on)` turns the stamps on (the experiment's array cleared) for the
// calls that follow, or off; `call()` enqueues one call on the stream, stamped or not; `results()`
// are its results' bytes; `figures(us)` reads a stamped call's stamps, given its time between the
// events.
struct StampedCalls {
  std::function<void(bool)> stamp;
  std::function<void()> call;
  std::function<std::vector<unsigned char>()> results;
  std::function<std::vector<double>(double)> figures;
};

// `unstamped` calls, then `stamped` ones, each after an L2 scrub; returns each figure's median over
// the stamped calls. `same` turns false if a stamped call's results differ from the unstamped
// ones' in any bit (the stamps must change nothing the kernels compute).
inline std::vector<double> median_figures(const StampedCalls& calls, const red::L2Scrubber& scrubber, red::Stream& stream,
                                          int unstamped, int stamped, bool& same) {
  red::Event before, after;
  std::vector<unsigned char> reference;
  std::vector<std::vector<double>> per_call;
  for (int call = 0; call < unstamped + stamped; ++call) {
    const bool on = call >= unstamped;
    calls.stamp(on);
    scrubber.scrub(stream.get());
    CUDA_CHECK(cudaEventRecord(before.get(), stream.get()));
    calls.call();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(after.get(), stream.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, before.get(), after.get()));
    const std::vector<unsigned char> got = calls.results();
    if (!on) {
      reference = got;
      continue;
    }
    if (got != reference) same = false;
    per_call.push_back(calls.figures(ms * 1e3));
  }
  calls.stamp(false);
  std::vector<double> medians;
  for (std::size_t row = 0; !per_call.empty() && row < per_call[0].size(); ++row) {
    std::vector<double> v;
    for (const auto& f : per_call) v.push_back(f[row]);
    std::sort(v.begin(), v.end());
    medians.push_back(red::median(v));
  }
  return medians;
}

// The table's body: row r named names[r], then a figure a column, printed with format(r) (a
// printf format such as " %.1f |").
inline void print_figure_rows(const char* const* names, std::size_t rows, const std::vector<std::vector<double>>& columns,
                              const std::function<const char*(std::size_t)>& format) {
  for (std::size_t row = 0; row < rows; ++row) {
    std::printf("| %s |", names[row]);
    for (const auto& column : columns) std::printf(format(row), column[row]);
    std::printf("\n");
  }
}

}  // namespace ch11
