// The library answers to a dot product, measured beside chapter 08's kernels in the same run:
//   cublas_sdot           cublasSdot_64 (f32), result written to device memory
//   cub_transform_reduce  cub::DeviceReduce::TransformReduce over the indices 0..n-1, each mapped to
//                         float(a_i) * float(b_i), summed in float (f32, f16, bf16)
// Both are library calls with their own accumulation order; neither promises bitwise reproducible
// results across library versions. cuBLAS may keep a workspace of its own.
#pragma once

#include <cublas_v2.h>
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_reduce.cuh>
#include <cuda/functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "chapter_builder.cuh"
#include "cub_order.hpp"
#include "multipass.cuh"
#include "per_device.hpp"
#include "reduce_ops.cuh"

namespace ch08 {

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(status));
}

// One handle per device, made on first use and kept for the life of the program. A handle holds
// one stream and one workspace: cublasSetStream followed by the call must not interleave with
// another host thread's pair, so each pair runs under the handle's lock. The call only queues
// work, so the lock is held for microseconds, never for the GPU's time.
struct CublasHandle {
  cublasHandle_t handle = nullptr;
  std::shared_ptr<std::mutex> lock;
};

inline CublasHandle cublas_handle() {
  return red::per_device<CublasHandle>([](int) {
    CublasHandle h{nullptr, std::make_shared<std::mutex>()};
    check_cublas(cublasCreate(&h.handle), "cublasCreate");
    check_cublas(cublasSetPointerMode(h.handle, CUBLAS_POINTER_MODE_DEVICE), "cublasSetPointerMode");
    return h;
  });
}

inline void launch_cublas_sdot(const red::ReduceCall& c) {
  if (c.n == 0) return red::launch_store_identity<red::Dot<float>>(c.output, c.stream);
  const CublasHandle h = cublas_handle();
  std::lock_guard<std::mutex> one_caller(*h.lock);
  check_cublas(cublasSetStream(h.handle, c.stream), "cublasSetStream");
  check_cublas(cublasSdot_64(h.handle, static_cast<std::int64_t>(c.n), static_cast<const float*>(c.input), 1,
                             static_cast<const float*>(c.input2), 1, static_cast<float*>(c.output)),
               "cublasSdot_64");
}

template <class T>
struct ProductAt {
  const T* a;
  const T* b;
  __host__ __device__ float operator()(long long i) const { return red::to_wide(a[i]) * red::to_wide(b[i]); }
};

template <class T>
cudaError_t cub_dot(void* temp, std::size_t& temp_bytes, const red::ReduceCall& c) {
  return cub::DeviceReduce::TransformReduce(
      temp, temp_bytes, thrust::counting_iterator<long long>(0), static_cast<float*>(c.output),
      static_cast<std::int64_t>(c.n), cuda::std::plus<float>{},
      ProductAt<T>{static_cast<const T*>(c.input), static_cast<const T*>(c.input2)}, 0.0f, c.stream);
}

template <class T>
std::size_t cub_dot_scratch(std::size_t n) {
  return red::remembered_scratch_query<&cub_dot<T>>(n);
}

inline const red::Chapter& cublas_sdot() {
  static const red::Chapter ch = red::make_chapter<red::Ops<red::Dot>, red::Types<float>>(
      "08_dot_product", "cublasSdot_64 (f32), the library baseline",
      [](auto) {
        return red::Launcher{&red::no_scratch, &launch_cublas_sdot};
      },
      // cuBLAS's order of additions is its own and unpublished: n - 1 holds for any order. The
      // exact-data check (runner.hpp) is what catches a wrong answer there.
      [](std::size_t n) { return n > 0 ? n - 1 : 0; }, "cublas_sdot");
  return ch;
}

template <class T>
void launch_cub_dot(const red::ReduceCall& c) {
  if (c.n == 0) return red::launch_store_identity<red::Dot<T>>(c.output, c.stream);
  std::size_t bytes = c.scratch_bytes;
  CUDA_CHECK(cub_dot<T>(c.scratch, bytes, c));
}

inline const red::Chapter& cub_transform_reduce() {
  static const red::Chapter ch = red::make_chapter<red::Ops<red::Dot>, red::Types<float, __half, __nv_bfloat16>>(
      "08_dot_product", "cub::DeviceReduce::TransformReduce of a_i * b_i in float",
      [](auto op) {
        using T = typename decltype(op)::In;
        return red::Launcher{&cub_dot_scratch<T>, &launch_cub_dot<T>};
      },
      red::cub_sum_depth, "cub_transform_reduce");  // CUB's order (common/cub_order.hpp)
  return ch;
}

}  // namespace ch08
