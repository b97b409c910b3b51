// CUDA-event timing: warm-up, then the median of repetitions, optionally with L2 scrubbing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

#include "device_buffer.hpp"
#include "device_info.hpp"

namespace red {

// Below about four times the L2 size an input can stay in L2 between repetitions, so a timing
// measures L2, not DRAM. Such rows are labelled (or scrubbed), never shown as DRAM figures.
inline bool l2_resident(std::size_t bytes, const DeviceInfo& dev) { return bytes < 4 * dev.l2_bytes; }

// Evicts the input from L2 by writing a buffer twice the L2 size (outside the timed region).
class L2Scrubber {
 public:
  explicit L2Scrubber(const DeviceInfo& dev) : buffer_(2 * dev.l2_bytes) {}
  void scrub(cudaStream_t stream) const { buffer_.fill(0x5A, stream); }

 private:
  DeviceBuffer buffer_;
};

struct TimingConfig {
  int warmup = 3;
  int repetitions = 20;
  const L2Scrubber* scrubber = nullptr;  // scrub before every timed call when set
};

struct Timing {
  double median_us = 0;
  int repetitions = 0;
};

// Times `call()`, which enqueues its work on `stream`, with events recorded on that stream just
// before and after it.
Timing time_on_stream(const std::function<void()>& call, cudaStream_t stream, const TimingConfig& cfg);

}  // namespace red
