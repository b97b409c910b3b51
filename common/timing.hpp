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
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

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

struct TimingConfig {
  int warmup = 3;
  int repetitions = 20;                  // steady-state samples, and as many one-call samples
  int batch = 16;                        // calls queued behind one hold of the stream
  const L2Scrubber* scrubber = nullptr;  // set: cold, scrub before every timed call
};

struct Timing {
  double median_us = 0;  // steady state, per call
  double p10_us = 0;
  double p90_us = 0;
  double latency_us = 0;  // one call, host dispatch included (median)
  int repetitions = 0;
  int batches_released_late = 0;  // batches whose hold ran out before the host had queued them
};

// Times `call()`, which enqueues its work on `stream`.
Timing time_on_stream(const std::function<void()>& call, cudaStream_t stream, const TimingConfig& cfg);

}  // namespace red
