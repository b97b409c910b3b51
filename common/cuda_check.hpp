// One way to turn a CUDA error into an exception that names the call, the file and the line.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace red {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// No GPU, no driver, or a driver too old for this toolkit: the program cannot run at all.
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void cuda_check(cudaError_t code, const char* expr, const char* file, int line);

// True when at least one CUDA device is usable; never throws.
bool gpu_available();
// Throws NoGpuError with the driver's reason when gpu_available() is false.
void require_gpu();

}  // namespace red

// CUDA_CHECK(cudaMalloc(...)): throws red::CudaError on failure.
#define CUDA_CHECK(expr) ::red::cuda_check((expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: catches bad launch configurations at the launch site.
#define CUDA_CHECK_LAUNCH() ::red::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
