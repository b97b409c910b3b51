// Chapter 09 - cub::DeviceReduce, used as a reader should use it.
//
// Idea: the library call, with CUB's two-phase temp-storage protocol: a first call with a null
// temp pointer only reports the bytes it needs (our scratch_bytes), the second call reduces.
// Sums of 16-bit floats go through TransformReduce, which widens each element to float before
// adding: Sum on __half input would accumulate in __half. Max, min and argmax go through Reduce
// with this project's operators, because the library's own Max/Min/ArgMax answer differently for
// -inf and NaN (below).
#pragma once

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>

#include <cub/device/device_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/limits>
#include <type_traits>

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

// ---- max, min and argmax with this project's semantics --------------------------------------
//
// cub::DeviceReduce::Max/Min/ArgMax compare with < and >, and start from numeric_limits::lowest()
// (max()) even for a non-empty input: the last step is `*d_out = reduction_op(init, aggregate)`
// (cub/device/dispatch/kernels/reduce.cuh, finalize_and_store_aggregate). With cuda::maximum,
// (a < b) ? b : a, a NaN aggregate on the right is dropped, so Max never returns NaN and returns
// lowest() (-3.4e38 for f32) where the input is all -inf or its NaN reached the aggregate. This
// chapter wants the answers every other chapter gives (NaN propagates, -inf is a value), so it
// calls DeviceReduce::Reduce with this project's operators and identities instead. The calls as
// shipped stay below (Builtin), for the tests that pin down what they do and for the benchmark.

// Max and min on the input type: compared as in red::Max/Min (16-bit floats in float, a NaN wins),
// returning one of the two inputs, so the result is exact and of the input's type.
template <bool kMax>
struct NanExtremum {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    const auto x = red::to_wide(a), y = red::to_wide(b);
    return ((kMax ? x > y : x < y) || x != x) ? a : b;
  }
};

// The identity of max (min) as an input value: -inf (+inf) for floats, lowest (max) for integers.
template <class Op>
typename Op::In identity_as_input() {
  using T = typename Op::In;
  if constexpr (std::is_same_v<T, __half>)
    return __float2half(Op::identity());
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16(Op::identity());
  else
    return static_cast<T>(Op::identity());
}

// Argmax: element i as this project's (value, index) pair, combined with red::ArgMax, stored
// through red::ArgMax::store (index -1 for "none", the value narrowed back to the input's type).
template <class Op>
struct PairAt {
  const typename Op::In* in;
  __device__ typename Op::Acc operator()(long long i) const { return Op::load(in[i], static_cast<std::size_t>(i)); }
};
template <class Op>
struct CombinePairs {
  __device__ typename Op::Acc operator()(const typename Op::Acc& a, const typename Op::Acc& b) const {
    return Op::combine(a, b);
  }
};
template <class Op>
struct StoreResult {
  void* out;
  template <class Index>
  __device__ void operator()(Index, const typename Op::Acc& v) const {
    Op::store(out, v);
  }
};

// Calls the CUB algorithm for Op; d_temp == nullptr asks for the size only. CUB picks a faster
// 32-bit offset type when n fits, so n is passed as int there and as int64 beyond. kBuiltin: the
// library's own Max/Min/ArgMax, with its semantics (above).
// [excerpt: cub-call]
template <class Op, bool kBuiltin, class N>
cudaError_t cub_reduce(void* d_temp, std::size_t& temp_bytes, const void* input, void* output, N n, cudaStream_t s) {
  using T = typename Op::In;
  const T* in = static_cast<const T*>(input);
  if constexpr (Op::op == red::Op::sum && !std::is_same_v<T, red::widen_t<T>>) {
    return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, in, static_cast<float*>(output), n,
                                              cuda::std::plus<float>{}, WidenToFloat{}, 0.0f, s);
  } else if constexpr (Op::op == red::Op::sum) {
    return cub::DeviceReduce::Sum(d_temp, temp_bytes, in, static_cast<typename Op::Acc*>(output), n, s);
  } else if constexpr (kBuiltin && Op::op == red::Op::max) {
    return cub::DeviceReduce::Max(d_temp, temp_bytes, in, static_cast<T*>(output), n, s);
  } else if constexpr (kBuiltin && Op::op == red::Op::min) {
    return cub::DeviceReduce::Min(d_temp, temp_bytes, in, static_cast<T*>(output), n, s);
  } else if constexpr (kBuiltin) {  // argmax: value at offset 0, index at offset 8, as every chapter writes it
    auto* out = static_cast<char*>(output);
    return cub::DeviceReduce::ArgMax(d_temp, temp_bytes, in, reinterpret_cast<T*>(out),
                                     reinterpret_cast<long long*>(out + red::kResultIndexOffset),
                                     static_cast<std::int64_t>(n), s);
  } else if constexpr (Op::op == red::Op::max || Op::op == red::Op::min) {
    return cub::DeviceReduce::Reduce(d_temp, temp_bytes, in, static_cast<T*>(output), n,
                                     NanExtremum<Op::op == red::Op::max>{}, identity_as_input<Op>(), s);
  } else {  // argmax over the indices, each turned into its (value, index) pair
    return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, thrust::counting_iterator<long long>(0),
                                              thrust::make_tabulate_output_iterator(StoreResult<Op>{output}),
                                              static_cast<std::int64_t>(n), CombinePairs<Op>{}, PairAt<Op>{in},
                                              Op::identity(), s);
  }
}
// [end: cub-call]

// [excerpt: two-phase]
template <class Op, bool kBuiltin = false>
cudaError_t cub_call(void* d_temp, std::size_t& temp_bytes, const red::ReduceCall& c) {
  if (c.n <= static_cast<std::size_t>(cuda::std::numeric_limits<int>::max()))
    return cub_reduce<Op, kBuiltin>(d_temp, temp_bytes, c.input, c.output, static_cast<int>(c.n), c.stream);
  return cub_reduce<Op, kBuiltin>(d_temp, temp_bytes, c.input, c.output, static_cast<std::int64_t>(c.n), c.stream);
}

template <class Op, bool kBuiltin = false>
std::size_t scratch_bytes(std::size_t n) {
  return red::remembered_scratch_query<&cub_call<Op, kBuiltin>>(n);
}

template <class Op, bool kBuiltin = false>
void launch(const red::ReduceCall& c) {
  // CUB's empty-input answers differ from this project's identities (its Max of nothing is
  // -FLT_MAX, not -inf), so n == 0 keeps the common convention.
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  std::size_t bytes = c.scratch_bytes;
  CUDA_CHECK((cub_call<Op, kBuiltin>(c.scratch, bytes, c)));
}
// [end: two-phase]

}  // namespace ch09
