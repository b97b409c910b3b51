// What the programs of many reductions at once (11_batched, 12_segmented) share after their call
// has been checked: timing it as the flat chapters' programs do, and the report's last part (the
// check and the time) as JSON fields or as text lines.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "device_info.hpp"
#include "json_report.hpp"
#include "timing.hpp"

namespace red {

struct TimedCall {
  Timing timing;
  double gbps = 0;  // counted bytes over the median call
};

// `call` timed on `stream` back to back, `repeat` times: cold (the L2 scrubbed before each call)
// unless `counted_bytes` fit in L2, when it is timed hot.
inline TimedCall time_call(const std::function<void()>& call, std::size_t counted_bytes, const DeviceInfo& dev,
                           int repeat, cudaStream_t stream) {
  std::optional<L2Scrubber> scrubber;
  if (!l2_resident(counted_bytes, dev)) scrubber.emplace(dev);
  TimingConfig cfg;
  cfg.repetitions = repeat;
  cfg.scrubber = scrubber ? &*scrubber : nullptr;
  TimedCall t;
  t.timing = time_on_stream(call, stream, cfg);
  t.gbps = static_cast<double>(counted_bytes) / (t.timing.median_us * 1e3);
  return t;
}

// The check (any struct with checked, failed, worst_ratio and first_failure) and the time, last in
// a program's JSON object.
template <class Check>
void add_check_and_time(Json& j, const Check& check, const TimedCall& t) {
  j["outputs_checked"] = check.checked;
  j["failed"] = check.failed;
  j["worst_error_over_bound"] = json_number(check.worst_ratio);
  j["passed"] = check.failed == 0;
  j["time_us"] = json_number(t.timing.median_us);
  j["gbps"] = json_number(t.gbps);
}

// The same as the report's last two lines of text.
template <class Check>
void print_check_and_time(const Check& check, const TimedCall& t, int repeat) {
  std::printf("  checked:   %zu results against float64, worst error %.3g of its bound: %s\n", check.checked,
              check.worst_ratio, check.failed == 0 ? "PASS" : ("FAIL (" + check.first_failure + ")").c_str());
  std::printf("  time:      %.2f us per call (steady state, median of %d), %.1f GB/s\n", t.timing.median_us, repeat,
              t.gbps);
}

}  // namespace red
