// Chapter 09 - cub::DeviceReduce, used as a reader should use it.
//
// Idea: the library call, with CUB's two-phase temp-storage protocol: a first call with a null
// temp pointer only reports the bytes it needs (our scratch_bytes), the second call reduces.
// Sums of 16-bit floats go through TransformReduce, which widens each element to float before
// adding: Sum on __half input would accumulate in __half.
#pragma once

#include <cub/device/device_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/limits>

#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch09 {

struct WidenToFloat {
  template <class T>
  __host__ __device__ float operator()(T x) const {
    return red::to_wide(x);
  }
};

// Calls the CUB algorithm for Op; d_temp == nullptr asks for the size only. CUB picks a faster
// 32-bit offset type when n fits, so n is passed as int there and as int64 beyond.
template <class Op, class N>
cudaError_t cub_reduce(void* d_temp, std::size_t& temp_bytes, const void* input, void* output, N n, cudaStream_t s) {
  using T = typename Op::In;
  const T* in = static_cast<const T*>(input);
  if constexpr (Op::op == red::Op::sum && !std::is_same_v<T, red::widen_t<T>>) {
    return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, in, static_cast<float*>(output), n,
                                              cuda::std::plus<float>{}, WidenToFloat{}, 0.0f, s);
  } else if constexpr (Op::op == red::Op::sum) {
    return cub::DeviceReduce::Sum(d_temp, temp_bytes, in, static_cast<typename Op::Acc*>(output), n, s);
  } else if constexpr (Op::op == red::Op::max) {
    return cub::DeviceReduce::Max(d_temp, temp_bytes, in, static_cast<T*>(output), n, s);
  } else if constexpr (Op::op == red::Op::min) {
    return cub::DeviceReduce::Min(d_temp, temp_bytes, in, static_cast<T*>(output), n, s);
  } else {  // argmax: value at offset 0, index at offset 8, as every chapter writes it
    auto* out = static_cast<char*>(output);
    return cub::DeviceReduce::ArgMax(d_temp, temp_bytes, in, reinterpret_cast<T*>(out),
                                     reinterpret_cast<long long*>(out + red::kResultIndexOffset),
                                     static_cast<std::int64_t>(n), s);
  }
}

template <class Op>
cudaError_t cub_call(void* d_temp, std::size_t& temp_bytes, const red::ReduceCall& c) {
  if (c.n <= static_cast<std::size_t>(cuda::std::numeric_limits<int>::max()))
    return cub_reduce<Op>(d_temp, temp_bytes, c.input, c.output, static_cast<int>(c.n), c.stream);
  return cub_reduce<Op>(d_temp, temp_bytes, c.input, c.output, static_cast<std::int64_t>(c.n), c.stream);
}

template <class Op>
std::size_t scratch_bytes(std::size_t n) {
  return red::scratch_query(n, cub_call<Op>);
}

template <class Op>
void launch(const red::ReduceCall& c) {
  // CUB's empty-input answers differ from this project's identities (its Max of nothing is
  // -FLT_MAX, not -inf), so n == 0 keeps the common convention.
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  std::size_t bytes = c.scratch_bytes;
  CUDA_CHECK(cub_call<Op>(c.scratch, bytes, c));
}

}  // namespace ch09
