// The library's answer: cub::DeviceReduce::TransformReduce with the chapter's own operator as the
// functors (the combine as the reduction, chapter 09's CombinePairs; the load as the transform)
// and the same accumulator type, so the two differ in their kernels only. CUB documents that it
// does not support non-commutative operators (cub/device/device_reduce.cuh, "Does not support
// binary reduction operators that are non-commutative"); an operator whose load needs the
// element's index (argmin) reads a counting iterator and the input together (chapter 09's PairAt).
#pragma once

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <type_traits>

#include "09_cub_comparison/reduce.cuh"  // ch09::CombinePairs, ch09::PairAt: an operator as CUB's functors
#include "13_custom_ops/ops.cuh"

namespace ch13 {

template <class Op>
inline constexpr bool kNeedsIndex = std::is_same_v<typename Op::Acc, red::ValueIndex<float>>;

// CUB's temp bytes for n elements (its first phase), then the call; the aggregate, as an Op::Acc,
// at `out` (Op::store is not applied: the benchmark times the reduction alone). The input is a
// plain pointer where the load ignores the index, so that CUB vectorises its loads as it does for
// any pointer.
template <class Op>
cudaError_t cub_transform_reduce(void* temp, std::size_t& bytes, const typename Op::In* in, std::size_t n,
                                 typename Op::Acc* out, cudaStream_t stream) {
  if constexpr (kNeedsIndex<Op>) {
    const thrust::counting_iterator<long long> index(0);
    return cub::DeviceReduce::TransformReduce(temp, bytes, index, out, static_cast<long long>(n), ch09::CombinePairs<Op>{},
                                              ch09::PairAt<Op>{in}, Op::identity(), stream);
  } else {
    return cub::DeviceReduce::TransformReduce(temp, bytes, in, out, static_cast<long long>(n), ch09::CombinePairs<Op>{},
                                              red::LoadElement<Op>{}, Op::identity(), stream);
  }
}

}  // namespace ch13
