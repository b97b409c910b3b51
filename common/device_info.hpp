// What the harness and the benchmark need to know about the GPU, read from the driver.
#pragma once

#include <cstddef>
#include <string>

namespace red {

struct DeviceInfo {
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t total_memory = 0;
  std::size_t free_memory = 0;
  int sm_clock_khz = 0;
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  int driver_version = 0, runtime_version = 0;
  // memory clock x bus width x 2 (double data rate), in GB/s (1e9 bytes per second).
  double dram_gbps = 0;
  // SMs x fp32 lanes per SM x 2 (an FMA is two flops) x SM clock, in GFLOP/s.
  double fp32_gflops = 0;
};

// Throws NoGpuError when there is no GPU.
DeviceInfo query_device(int device = 0);

// FP32 lanes per SM for the compute capabilities this project knows; 0 when unknown.
int fp32_lanes_per_sm(int cc_major, int cc_minor);

// "NVIDIA H200" -> "h200": the folder name under results/.
std::string gpu_folder_name(const std::string& device_name);

}  // namespace red
