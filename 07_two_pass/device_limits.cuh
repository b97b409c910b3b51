// How many blocks of a kernel the GPU holds at once, and whether a kernel may be launched before
// the one ahead of it ends: asked once per (device, kernel) and remembered, so that a launch costs
// no extra API call; and the launch that uses the second (launch_early). Chapter 07's fixed grid
// is sized by the first; chapters 10, 11 and 13 use both as ch07::.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "cuda_check.hpp"
#include "per_device.hpp"

namespace ch07 {

struct DeviceLimits {
  unsigned max_blocks = 0;    // blocks resident at once: SMs x blocks per SM (at most kMaxPerSm)
  bool programmatic = false;  // a kernel may be launched before the one ahead of it ends (below)
};

// For `kernel` in blocks of kThreads threads, at most kMaxPerSm blocks an SM counted (8: 2048
// threads of 256 on sm_80 and sm_90).
template <auto kKernel, unsigned kThreads = 256, unsigned kMaxPerSm = 8>
DeviceLimits device_limits() {
  return red::per_device<DeviceLimits>([](int device) {
    int sms = 0, major = 0, per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, kThreads, 0));
    // The early launch needs the GPU (sm_90+) and the code: a kernel waits for the one ahead only
    // where it was compiled for sm_90+ (#if __CUDA_ARCH__ >= 900). A build for older GPUs alone
    // runs on an H100/H200 from its PTX, compiled for the older architecture: no wait, so no early
    // launch. The kernels of one compilation share a PTX version; this kernel's stands for them.
    cudaFuncAttributes compiled{};
    CUDA_CHECK(cudaFuncGetAttributes(&compiled, kKernel));
    DeviceLimits limits;
    limits.max_blocks = static_cast<unsigned>(sms) * std::max(1u, std::min(kMaxPerSm, unsigned(per_sm)));
    limits.programmatic = major >= 9 && compiled.ptxVersion >= 90;
    return limits;
  });
}

// kernel<<<grid, block, shared, stream>>>(args...), with early = true (and sm_90+) launched with
// programmatic dependent launch: it may start before the kernel ahead of it on the stream ends,
// and waits for it inside (cudaGridDependencySynchronize). Chapters 10 and 11 launch with it too.
template <class... Params, class... Args>
cudaError_t launch_early(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared, cudaStream_t stream,
                         bool early, Args&&... args) {
  cudaLaunchAttribute early_launch{};
  early_launch.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early_launch.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = &early_launch;
  config.numAttrs = early ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace ch07
