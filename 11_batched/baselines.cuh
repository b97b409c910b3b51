// The library answer to chapters 11 and 12, measured beside them in the same run: cub::DeviceSegmentedReduce,
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

// cub::DeviceSegmentedReduce of `count` segments [begins[k], ends[k]) of the input (op sum or
// max), into `out`; temp == nullptr writes the bytes it needs into temp_bytes. Chapter 12 passes
// its offsets, the rows below pass their starts and ends.
template <class T, class Begins, class Ends>
cudaError_t cub_segmented(void* temp, std::size_t& temp_bytes, red::Op op, const void* input, Begins begins, Ends ends,
                          long long count, void* output, cudaStream_t stream) {
  const auto in = thrust::make_transform_iterator(static_cast<const T*>(input), Widen<T>{});
  float* out = static_cast<float*>(output);
  if (op == red::Op::max)
    return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, in, out, count, begins, ends, FloatMax{},
                                              -cuda::std::numeric_limits<float>::infinity(), stream);
  return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, in, out, count, begins, ends, cuda::std::plus<float>{},
                                            0.0f, stream);
}

// The same over the call's rows: row r is the segment [r * stride, r * stride + cols).
template <class T>
cudaError_t cub_segmented(void* temp, std::size_t& temp_bytes, const BatchedCall& c) {
  const Shape& s = c.shape;
  const thrust::counting_iterator<long long> rows(0);
  return cub_segmented<T>(temp, temp_bytes, c.op, c.input,
                          thrust::make_transform_iterator(rows, RowBegin{static_cast<long long>(s.stride)}),
                          thrust::make_transform_iterator(rows, RowEnd{static_cast<long long>(s.stride), static_cast<long long>(s.cols)}),
                          static_cast<long long>(s.rows), c.output, c.stream);
}

}  // namespace ch11
