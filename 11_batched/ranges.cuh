// Chapter 11's loads and combines that every mapping shares (rows, columns, and chapter 12's segments): a
// range of a row read with 16-byte loads by a lane of a group, the group's reduce, a result's
// store; and the GPU's timer for the timeline experiments. The lesson is reduce.cuh.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include "06_warp_shuffle/reduce.cuh"  // ch06::block_reduce
#include "07_two_pass/reduce.cuh"     // ch07::device_limits (whether a kernel may be launched early)
#include "10_single_pass/reduce.cuh"  // ch10::take_ticket
#include "11_batched/batched.hpp"
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "per_device.hpp"
#include "reduce_ops.cuh"

namespace ch11 {

namespace cg = cooperative_groups;

constexpr unsigned kBlock = 256;  // threads per block of every kernel here
constexpr unsigned kUnroll = 4;   // 16-byte loads each lane has in flight in a row's body

// ---- reading a range: the loads every mapping shares ------------------------------------------

template <class T>
struct alignas(16) Vec16 {
  static constexpr unsigned kCount = 16 / sizeof(T);
  T e[kCount];
};

// A 16-byte load, marked evict-first (__ldcs, ld.global.cs) when kStreaming: data read once, that
// should not push out of the caches what is read again (12_segmented/variants.cuh says why).
template <bool kStreaming, class T>
__device__ __forceinline__ Vec16<T> load_vector(const Vec16<T>* p) {
  if constexpr (!kStreaming) {
    return *p;
  } else {
    const uint4 w = __ldcs(reinterpret_cast<const uint4*>(p));
    Vec16<T> v;
    memcpy(&v, &w, sizeof v);
    return v;
  }
}

// One lane's share of elements p[0, len) among `lanes` lanes, as an accumulator. Element i has the
// index first_index + i (argmax reports it). The body is read in aligned 16-byte vectors, kUnroll
// of them in flight per lane; the elements before the first 16-byte boundary (head) and after
// the last (tail) one at a time: any start, any length, and no read outside the range.
template <class Op, class T>
__device__ typename Op::Acc lane_accumulate(const T* p, std::size_t len, std::size_t first_index, unsigned lane,
                                            unsigned lanes) {
  using Acc = typename Op::Acc;
  using V = Vec16<T>;
  constexpr unsigned kCount = V::kCount;
  Acc acc = Op::identity();
  const unsigned misalign = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) % 16) / sizeof(T);
  const std::size_t head = std::min<std::size_t>(len, misalign ? kCount - misalign : 0);
  for (std::size_t i = lane; i < head; i += lanes) acc = Op::combine(acc, Op::load(p[i], first_index + i));
  const V* body = reinterpret_cast<const V*>(p + head);
  const std::size_t vectors = (len - head) / kCount;
  // Whole trips, then one last trip with the vectors past the end left out: its loads are issued
  // together too, not one memory latency after another.
  const auto trip = [&](std::size_t v, auto guarded) {
    V x[kUnroll];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u)
      if (!guarded || v + u * lanes < vectors) x[u] = body[v + u * lanes];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u)
      if (!guarded || v + u * lanes < vectors)
#pragma unroll
        for (unsigned j = 0; j < kCount; ++j)
          acc = Op::combine(acc, Op::load(x[u].e[j], first_index + head + (v + u * lanes) * kCount + j));
  };
  std::size_t v = lane;
  for (; v + (kUnroll - 1) * lanes < vectors; v += kUnroll * lanes) trip(v, std::false_type{});
  if (v < vectors) trip(v, std::true_type{});
  for (std::size_t i = head + vectors * kCount + lane; i < len; i += lanes)
    acc = Op::combine(acc, Op::load(p[i], first_index + i));
  return acc;
}

// The same for elements [begin, end) of an input `in` of n elements that starts on a 16-byte
// boundary, when the range itself does not: every aligned vector that overlaps the range is
// loaded whole, and the elements outside the range are masked out. A short segment is then a few
// 16-byte loads instead of up to three single-element loads at each end. Neighbours' elements are
// read but not added; only a vector that would run past the input's end is read element by element.
template <class Op, class T>
__device__ typename Op::Acc lane_accumulate_masked(const T* in, std::size_t n, std::size_t begin, std::size_t end,
                                                   unsigned lane, unsigned lanes) {
  using Acc = typename Op::Acc;
  using V = Vec16<T>;
  constexpr unsigned kCount = V::kCount;
  Acc acc = Op::identity();
  if (begin >= end) return acc;
  const std::size_t first = begin / kCount, last = (end - 1) / kCount;  // vectors overlapping the range
  const auto add = [&](const V& x, std::size_t v) {
#pragma unroll
    for (unsigned j = 0; j < kCount; ++j) {
      const std::size_t i = v * kCount + j;
      if (i >= begin && i < end) acc = Op::combine(acc, Op::load(x.e[j], i - begin));
    }
  };
  const auto load = [&](std::size_t v) {
    if ((v + 1) * kCount <= n) return reinterpret_cast<const V*>(in)[v];
    V x{};  // the input's last, partial vector: element by element
    for (unsigned j = 0; v * kCount + j < n; ++j) x.e[j] = in[v * kCount + j];
    return x;
  };
  std::size_t v = first + lane;
  for (; v + (kUnroll - 1) * lanes <= last; v += kUnroll * lanes) {
    V x[kUnroll];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) x[u] = load(v + u * lanes);
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) add(x[u], v + u * lanes);
  }
  for (; v <= last; v += lanes) add(load(v), v);
  return acc;
}

// A group of G lanes of one warp (G = 1, 2, ..., 32) combines its lanes' accumulators: valid in
// every lane.
template <class Op, unsigned G>
__device__ typename Op::Acc group_reduce(typename Op::Acc v) {
  if constexpr (G == 1) {
    return v;
  } else {
    using Acc = typename Op::Acc;
    const auto group = cg::tiled_partition<G>(cg::this_thread_block());
    return cg::reduce(group, v, [](const Acc& a, const Acc& b) { return Op::combine(a, b); });
  }
}

// __shfl_up_sync and __shfl_down_sync over a whole warp for every accumulator type (an argmax pair
// as its two members).
template <class Acc>
__device__ Acc shfl_up(Acc v, unsigned delta) {
  if constexpr (ch06::is_value_index<Acc>::value)
    return Acc{__shfl_up_sync(0xffffffffu, v.value, delta), __shfl_up_sync(0xffffffffu, v.index, delta)};
  else
    return __shfl_up_sync(0xffffffffu, v, delta);
}
template <class Acc>
__device__ Acc shfl_down(Acc v, unsigned delta) {
  if constexpr (ch06::is_value_index<Acc>::value)
    return Acc{__shfl_down_sync(0xffffffffu, v.value, delta), __shfl_down_sync(0xffffffffu, v.index, delta)};
  else
    return __shfl_down_sync(0xffffffffu, v, delta);
}

// Result i: a float (sum, max) or an int32 index (argmax, -1 for an empty range).
template <class Op>
__device__ void store_result(void* out, std::size_t i, const typename Op::Acc& a) {
  if constexpr (Op::op == red::Op::argmax)
    static_cast<int*>(out)[i] = a.index == red::ArgMax<float>::kNoIndex ? -1 : static_cast<int>(a.index);
  else
    static_cast<float*>(out)[i] = static_cast<float>(a);
}

}  // namespace ch11
