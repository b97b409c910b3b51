#include "cuda_check.hpp"

namespace red {

void cuda_check(cudaError_t code, const char* expr, const char* file, int line) {
  if (code == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw CudaError(code, std::string(file) + ":" + std::to_string(line) + ": " + expr +
                            " failed: " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}

namespace {
cudaError_t device_count(int& count) {
  count = 0;
  return cudaGetDeviceCount(&count);
}
}  // namespace

bool gpu_available() {
  int count = 0;
  return device_count(count) == cudaSuccess && count > 0;
}

void require_gpu() {
  int count = 0;
  cudaError_t err = device_count(count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw NoGpuError(std::string("no usable CUDA GPU: ") + cudaGetErrorString(err));
  }
  if (count == 0) throw NoGpuError("no usable CUDA GPU: the driver reports no devices");
}

}  // namespace red
