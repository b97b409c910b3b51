// The machine description published next to the benchmark results (results/<gpu>/machine.txt):
// what the driver reports, plus a measured device-to-device copy bandwidth, the practical DRAM
// ceiling a reduction can be held against.
#pragma once

#include <cstdio>
#include <string>

#include "device_buffer.hpp"
#include "device_info.hpp"
#include "timing.hpp"

namespace red::bench {

// cudaMemcpy device-to-device of 1 GiB, median of 20; bytes counted read + written.
inline double measure_copy_gbps() {
  const std::size_t bytes = std::size_t{1} << 30;
  DeviceBuffer src(bytes), dst(bytes);
  src.fill(1);
  TimingConfig cfg;
  cfg.repetitions = 20;
  Timing t = time_on_stream(
      [&] { CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, nullptr)); }, nullptr,
      cfg);
  return 2.0 * bytes / (t.median_us * 1e3);
}

struct MachineLine {
  std::string key, value;
};

inline std::vector<MachineLine> machine_description(const DeviceInfo& d, double copy_gbps) {
  auto num = [](double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.1f", v);
    return std::string(b);
  };
  return {
      {"gpu", d.name},
      {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
      {"sm_count", std::to_string(d.sm_count)},
      {"l2_bytes", std::to_string(d.l2_bytes)},
      {"memory_bytes", std::to_string(d.total_memory)},
      {"sm_clock_mhz", std::to_string(d.sm_clock_khz / 1000)},
      {"memory_clock_mhz", std::to_string(d.memory_clock_khz / 1000)},
      {"bus_width_bits", std::to_string(d.bus_width_bits)},
      {"dram_gbps", num(d.dram_gbps)},
      {"dram_gbps_formula", "2 x memory clock x bus width / 8 (cudaDeviceGetAttribute)"},
      {"copy_gbps", num(copy_gbps)},
      {"copy_gbps_method", "cudaMemcpyAsync device-to-device of 1 GiB, median of 20, read + write bytes"},
      {"fp32_gflops", num(d.fp32_gflops)},
      {"driver_version", std::to_string(d.driver_version / 1000) + "." + std::to_string(d.driver_version % 1000 / 10)},
      {"cuda_runtime_version",
       std::to_string(d.runtime_version / 1000) + "." + std::to_string(d.runtime_version % 1000 / 10)},
  };
}

}  // namespace red::bench
