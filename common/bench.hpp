// Google Benchmark glue: one benchmark per (chapter, op, dtype, n), timed with CUDA events
// (manual time = the steady-state median, common/timing.hpp), with the counters the results CSV
// is made of.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chapter.hpp"

namespace red::bench {

struct Case {
  Op op;
  DType dtype;
  std::size_t n;
  // Elements past a 16-byte boundary where the input starts. A case with an offset is named after
  // its kernel with "_offsetK" added, labelled a variant of it, and carries the counter param_offset.
  std::size_t offset = 0;
};

// Registers `ch` for each case. Benchmark names are "<chapter>/<kernel>/<op>/<dtype>/<n>"; counters:
// n, bytes, time_us, time_p10_us, time_p90_us, latency_us, gbps, pct_peak, l2_resident, reps, and
// for inputs no larger than L2 b2b_us and graph_us (timing.hpp: back to back, and in a graph). Inputs are generated on the host once per
// (dtype, n, op) and shared by consecutive benchmarks, so register cases grouped by size.
void register_chapter(const Chapter& ch, const std::vector<Case>& cases);

// A case that brings its own set-up and check (chapter 11's batched shapes): prepare(stream) runs
// when the case starts and returns the call to time and what to report beside it.
struct TimedCase {
  std::function<void()> call;                // enqueues one call on the stream prepare was given
  std::string wrong;                         // non-empty: the call's results failed their check
  double elements = 0, bytes = 0;            // the n and bytes counters (bytes: read once + written)
  bool reads_known = true;                   // false: a call may stop before reading `bytes` (an early
                                             // exit); gbps and pct_peak are then 0 and the counter
                                             // reads_unknown 1, for tools/bench_csv.py to fill from a
                                             // profiler's count (scripts/early_exit_bytes.sh)
  int repetitions = 0;                       // 0: by bytes, as the chapters' cases
  std::string variant_of;                    // the label "variant of K", if a variant
  std::map<std::string, double> counters;    // extra counters (layout_id, segments, length, param_*)
  std::shared_ptr<void> keep;                // what the call needs alive (buffers), freed after timing
};
void register_timed(const std::string& label, double planned_bytes, std::function<TimedCase(cudaStream_t)> prepare);

// Registers "floor/empty_kernel/none/none/0": an empty kernel (timing.hpp, launch_empty_kernel)
// timed as the cases are, every figure included: the least any call can cost on this GPU and
// host, which the tables subtract to show each call's work.
void register_floor();

// Profile mode (reduction_bench --profile, for Nsight Compute with --profile-from-start off): each
// case runs its checks, evicts L2 where the input is larger than L2, then makes ONE call between
// cudaProfilerStart and cudaProfilerStop, so the profiler sees exactly the kernels of one call.
// Nothing is timed; the rows carry no counters.
void set_profile_mode(bool on);

// Call after benchmark::Initialize (which reads --benchmark_filter) and before running: from then
// on every case prints to stderr, as it starts, its place in the run and the time left.
void start_progress();

}  // namespace red::bench
