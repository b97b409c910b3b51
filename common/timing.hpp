// CUDA-event timing, by one rule for the chapter programs and the benchmark alike.
//
// L2: an input at or under the L2 size can stay in L2 from one call to the next, as it would in a
// program that reduces it repeatedly; it is measured that way (hot) and labelled L2-resident. A
// larger input is measured cold: before every timed call a kernel reads a buffer of twice the L2
// size, cleared once beforehand, so L2 holds none of the input and no dirty line whose write-back
// would land inside the timed call.
//
// Two figures per call:
//   steady state  the GPU time of one call among calls queued back to back: the host queues a
//                 batch behind a kernel that holds the stream until it has finished queueing, so
//                 no host work falls between the events around each call. Median, p10 and p90.
//   latency       one call from an idle GPU, between events recorded just before and after the
//                 host makes it: the host's dispatch (argument checks, size queries, launches)
//                 falls inside. Median.
// And two more where a call is short enough for launches to matter (TimingConfig::back_to_back):
//   back to back  200 calls made in a loop between two events, no hold, no scrub: total / 200.
//                 Whichever is slower sets it, the host's dispatch or the GPU's work, as in a
//                 program that reduces in a loop.
//   graph         the same 200 calls captured into one CUDA graph and launched at once: the GPU's
//                 side alone, with the host's dispatch paid at capture.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "device_buffer.hpp"
#include "device_info.hpp"

namespace red {

// A CUDA event (timing enabled) destroyed with its owner.
class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Microseconds between two events that have completed.
double elapsed_us(const Event& start, const Event& stop);

inline bool l2_resident(std::size_t bytes, const DeviceInfo& dev) { return bytes <= dev.l2_bytes; }

// Evicts everything from L2 by reading a buffer twice its size (a kernel; the buffer was cleared
// once, and the memset had completed, at construction).
class L2Scrubber {
 public:
  explicit L2Scrubber(const DeviceInfo& dev);
  void scrub(cudaStream_t stream) const;

 private:
  DeviceBuffer buffer_, sink_;
};

// Launches an empty kernel of `ordinal` one-thread blocks: in a profile of many cases, the mark
// where case number `ordinal` starts (reduction_bench --profile).
void mark_profiled_case(int ordinal, cudaStream_t stream);

// Launches a kernel that does nothing, one block of one thread: the floor under every call's time,
// which the benchmark measures beside the chapters (bench.hpp, register_floor).
void launch_empty_kernel(cudaStream_t stream);

struct TimingConfig {
  int warmup = 3;
  int repetitions = 20;                  // steady-state samples, and as many one-call samples
  int batch = 16;                        // calls queued behind one hold of the stream
  const L2Scrubber* scrubber = nullptr;  // set: cold, scrub before every timed call
  bool back_to_back = false;             // also measure back_to_back_us and graph_us
};

struct Timing {
  double median_us = 0;  // steady state, per call
  double p10_us = 0;
  double p90_us = 0;
  double latency_us = 0;  // one call, host dispatch included (median)
  int repetitions = 0;
  int batches_released_late = 0;  // batches whose hold ran out before the host had queued them
  double back_to_back_us = 0;     // per call of calls made in a loop (0: not measured)
  double graph_us = 0;            // per call of the same calls as one CUDA graph (0: not measured,
                                  // or the call cannot be captured)
};

// Microseconds per call of `calls` calls made back to back between two events on `stream`,
// launched directly (graph = false) or captured into one CUDA graph first. A call the graph
// cannot capture (one that synchronises, say) gives 0. `stream` must not be the legacy default
// stream when graph is set (it cannot be captured).
double back_to_back_us(const std::function<void()>& call, cudaStream_t stream, int calls, bool graph);

// Of values sorted ascending: the nearest-rank p-quantile (p in [0, 1]) and the median (the mean of
// the two middle values for an even count); 0 for none.
double percentile(const std::vector<double>& sorted, double p);
double median(const std::vector<double>& sorted);

// Times `call()`, which enqueues its work on `stream`.
Timing time_on_stream(const std::function<void()>& call, cudaStream_t stream, const TimingConfig& cfg);

}  // namespace red
