#include "device_info.hpp"

#include <cctype>

#include "cuda_check.hpp"

namespace red {

int fp32_lanes_per_sm(int major, int minor) {
  if (major == 7) return 64;                     // Volta, Turing
  if (major == 8) return minor == 0 ? 64 : 128;  // A100: 64; Ampere consumer and Ada: 128
  if (major >= 9) return 128;                    // Hopper, Blackwell
  return 0;
}

DeviceInfo query_device(int device) {
  require_gpu();
  DeviceInfo d;
  d.device = device;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  auto attr = [device](cudaDeviceAttr a) {
    int v = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  // CUDA 13 removed clockRate and memoryClockRate from cudaDeviceProp; the attributes remain.
  d.sm_count = attr(cudaDevAttrMultiProcessorCount);
  d.l2_bytes = static_cast<std::size_t>(attr(cudaDevAttrL2CacheSize));
  d.sm_clock_khz = attr(cudaDevAttrClockRate);
  d.memory_clock_khz = attr(cudaDevAttrMemoryClockRate);
  d.bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaMemGetInfo(&d.free_memory, &d.total_memory));
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  d.dram_gbps = 2.0 * d.memory_clock_khz * 1e3 * (d.bus_width_bits / 8.0) / 1e9;
  d.fp32_gflops = 2.0 * d.sm_count * fp32_lanes_per_sm(d.cc_major, d.cc_minor) * d.sm_clock_khz * 1e3 / 1e9;
  return d;
}

std::string gpu_folder_name(const std::string& device_name) {
  std::string s = device_name;
  for (const char* prefix : {"NVIDIA ", "GeForce ", "Tesla "})
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::string(prefix).size());
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "unknown_gpu" : out;
}

}  // namespace red
