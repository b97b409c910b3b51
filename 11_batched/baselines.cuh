// The library answer to chapter 11, measured beside it in the same run: cub::DeviceSegmentedReduce,
// a result per segment given begin and end offsets. Rows are segments too: row r is [r * stride,
// r * stride + cols), given to CUB as offset iterators (no offsets array to read). CUB has no
// reduction over columns.
//   sum  DeviceSegmentedReduce::Reduce with a float sum over the inputs widened to float (CUB's Sum
//        of __half would accumulate in __half: chapter 09's pitfall)
//   max  DeviceSegmentedReduce::Reduce with a float max over the widened inputs
// Results are floats, as the chapter's. NaN: CUB's max compares with <, so a NaN does not always
// win: the benchmark checks the baseline's sums only, and times its max as shipped.
#pragma once

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/limits>

#include "11_batched/batched.hpp"
#include "cuda_check.hpp"
#include "reduce_ops.cuh"

namespace ch11 {

template <class T>
struct Widen {
  __host__ __device__ float operator()(T x) const { return red::to_wide(x); }
};

// Row r's first element and one past its last, as CUB's offset iterators read them.
struct RowBegin {
  long long stride;
  __host__ __device__ long long operator()(long long r) const { return r * stride; }
};
struct RowEnd {
  long long stride, cols;
  __host__ __device__ long long operator()(long long r) const { return r * stride + cols; }
};

struct FloatMax {
  __host__ __device__ float operator()(float a, float b) const { return a < b ? b : a; }
};

// cub::DeviceSegmentedReduce over the call's rows or segments (op sum or max); temp == nullptr
// writes the bytes it needs into temp_bytes.
template <class T>
cudaError_t cub_segmented(void* temp, std::size_t& temp_bytes, const BatchedCall& c) {
  const auto in = thrust::make_transform_iterator(static_cast<const T*>(c.input), Widen<T>{});
  float* out = static_cast<float*>(c.output);
  const Shape& s = c.shape;
  const auto run = [&](auto begins, auto ends, auto count) {
    if (c.op == red::Op::max)
      return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, in, out, count, begins, ends, FloatMax{},
                                                -cuda::std::numeric_limits<float>::infinity(), c.stream);
    return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, in, out, count, begins, ends, cuda::std::plus<float>{},
                                              0.0f, c.stream);
  };
  if (s.layout == Layout::segments)
    return run(s.offsets, s.offsets + 1, static_cast<long long>(s.segments));
  const thrust::counting_iterator<long long> rows(0);
  return run(thrust::make_transform_iterator(rows, RowBegin{static_cast<long long>(s.stride)}),
             thrust::make_transform_iterator(rows, RowEnd{static_cast<long long>(s.stride), static_cast<long long>(s.cols)}),
             static_cast<long long>(s.rows));
}

}  // namespace ch11
