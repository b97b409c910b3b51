// The measuring method (common/timing.hpp) on a GPU: the steady state leaves the host's work out,
// the one-call latency keeps it in, and the L2 scrub leaves a fitting input cold.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "device_buffer.hpp"
#include "device_info.hpp"
#include "timing.hpp"

using namespace red;

namespace {
__global__ void read_words(const float4* in, std::size_t words, float* out) {
  float sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 v = in[i];
    sum += v.x + v.y + v.z + v.w;
  }
  if (sum == 1.0f) *out = sum;  // never for a zeroed input: keeps the loads, writes nothing
}
}  // namespace

TEST_CASE("timing: the steady state leaves the host's work out, the one-call latency keeps it in") {
  DeviceBuffer out(sizeof(float));
  const auto host_work = std::chrono::microseconds(300);
  // A call whose host side takes 300 us after it has queued a tiny kernel.
  auto call = [&] {
    read_words<<<1, 32>>>(nullptr, 0, static_cast<float*>(out.get()));
    std::this_thread::sleep_for(host_work);
  };
  TimingConfig cfg;
  cfg.repetitions = 24;
  const Timing t = time_on_stream(call, nullptr, cfg);
  INFO("steady ", t.median_us, " us, p10 ", t.p10_us, ", p90 ", t.p90_us, "; latency ", t.latency_us, " us");
  CHECK(t.batches_released_late == 0);
  CHECK(t.p10_us <= t.median_us);
  CHECK(t.median_us <= t.p90_us);
  CHECK(t.median_us < 100.0);   // a one-warp kernel between the events, not the host's sleep
  CHECK(t.latency_us >= 300.0);  // the sleep falls between the events
}

TEST_CASE("timing: an input that fits in L2 is hot without the scrubber and cold with it") {
  const DeviceInfo dev = query_device();
  const std::size_t bytes = dev.l2_bytes / 3;  // fits in L2 with room to spare
  DeviceBuffer in(bytes / 16 * 16), out(sizeof(float));
  in.fill(0);
  auto call = [&] {
    read_words<<<4 * dev.sm_count, 256>>>(static_cast<const float4*>(in.get()), in.bytes() / 16,
                                          static_cast<float*>(out.get()));
  };
  TimingConfig hot;
  hot.repetitions = 48;
  const L2Scrubber scrubber(dev);
  TimingConfig cold = hot;
  cold.scrubber = &scrubber;
  const Timing h = time_on_stream(call, nullptr, hot), c = time_on_stream(call, nullptr, cold);
  INFO("hot ", h.median_us, " us, cold ", c.median_us, " us for ", bytes, " bytes");
  // From L2 the read is markedly faster than from DRAM; a scrub that left the input in L2 would
  // make the two equal.
  CHECK(c.median_us > 1.2 * h.median_us);
  CHECK(l2_resident(bytes, dev));
  CHECK(l2_resident(dev.l2_bytes, dev));
  CHECK_FALSE(l2_resident(dev.l2_bytes + 1, dev));
}
