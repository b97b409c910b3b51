// Chapter 11 - many reductions at once: rows, columns and irregular segments.
//
// Idea: the shape decides how work maps to threads. One reduction per row of a [B, L] matrix can
// be a thread's (L tiny), a group of lanes' (short rows), a block's (long rows) or several blocks'
// (a few very long rows), and only the mapping changes: every one reads the row with the same
// 16-byte loads (lane_accumulate, or rows_aligned where every row starts on a 16-byte boundary)
// and combines the lanes with cooperative groups' reduce, as in chapter 10. Columns are read across
// the row, a thread per 16 bytes of columns, each summing its columns down a chunk of rows, then a
// second pass over the chunks. Segments are mapped like rows by their mean length, and then by each
// one's own: a medium one goes to a warp of its own, a long one is cut into chunks of equal size,
// each chunk reduced by a block and the chunks combined in order (load balancing).
// Cost: the input read once; rows: one kernel (blocks_per_row: and a pass over B x K partials);
// columns: one kernel, and a pass over K x L partials; segments: a memset of the chunks' marks and
// four kernels (the last three do almost nothing without medium and long segments). Deterministic:
// every partial is combined in a fixed order that depends on the shape alone.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "06_warp_shuffle/reduce.cuh"  // ch06::block_reduce
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
constexpr unsigned kColumnUnroll = 8;  // rows each thread of columns_tiled has in flight

// ---- reading a range: the loads every mapping shares ------------------------------------------

template <class T>
struct alignas(16) Vec16 {
  static constexpr unsigned kCount = 16 / sizeof(T);
  T e[kCount];
};

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
  std::size_t v = lane;
  for (; v + (kUnroll - 1) * lanes < vectors; v += kUnroll * lanes) {
    V x[kUnroll];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) x[u] = body[v + u * lanes];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u)
#pragma unroll
      for (unsigned j = 0; j < kCount; ++j)
        acc = Op::combine(acc, Op::load(x[u].e[j], first_index + head + (v + u * lanes) * kCount + j));
  }
  for (; v < vectors; v += lanes) {
    const V x = body[v];
#pragma unroll
    for (unsigned j = 0; j < kCount; ++j) acc = Op::combine(acc, Op::load(x.e[j], first_index + head + v * kCount + j));
  }
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

// Result i: a float (sum, max) or an int32 index (argmax, -1 for an empty range).
template <class Op>
__device__ void store_result(void* out, std::size_t i, const typename Op::Acc& a) {
  if constexpr (Op::op == red::Op::argmax)
    static_cast<int*>(out)[i] = a.index == Op::kNoIndex ? -1 : static_cast<int>(a.index);
  else
    static_cast<float*>(out)[i] = static_cast<float>(a);
}

// ---- rows -------------------------------------------------------------------------------------------

// A group of G lanes per row (G = 1: a thread per row), kBlock / G rows per block at a time, the
// grid striding over the rows.
template <class Op, class T, unsigned G>
__global__ void __launch_bounds__(kBlock)
    rows_by_group(const T* in, std::size_t rows, std::size_t cols, std::size_t stride, void* out) {
  constexpr unsigned kGroups = kBlock / G;
  const unsigned lane = threadIdx.x % G;
  for (std::size_t r = std::size_t{blockIdx.x} * kGroups + threadIdx.x / G; r < rows; r += std::size_t{gridDim.x} * kGroups) {
    const typename Op::Acc acc = group_reduce<Op, G>(lane_accumulate<Op>(in + r * stride, cols, 0, lane, G));
    if (lane == 0) store_result<Op>(out, r, acc);
  }
}

// The same for aligned rows (every row starts on a 16-byte boundary, L a multiple of a vector, at
// most kVecs vectors a lane): no head or tail to handle, and kRows rows per trip, their loads all
// issued before the first is added. A row of 8 floats is two loads: without the trips a thread
// would have two loads in flight, too few to cover the memory's latency.
template <class Op, class T, unsigned G, unsigned kVecs, unsigned kRows>
__global__ void __launch_bounds__(kBlock)
    rows_aligned(const T* in, std::size_t rows, std::size_t vectors, std::size_t stride, void* out) {
  using V = Vec16<T>;
  constexpr unsigned kGroups = kBlock / G, kCount = V::kCount;
  const unsigned lane = threadIdx.x % G;
  const std::size_t step = std::size_t{gridDim.x} * kGroups;
  for (std::size_t first = std::size_t{blockIdx.x} * kGroups + threadIdx.x / G; first < rows; first += step * kRows) {
    V x[kRows][kVecs];
#pragma unroll
    for (unsigned q = 0; q < kRows; ++q)
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u) {
        const std::size_t r = first + q * step, v = lane + u * G;
        if (r < rows && v < vectors) x[q][u] = reinterpret_cast<const V*>(in + r * stride)[v];
      }
#pragma unroll
    for (unsigned q = 0; q < kRows; ++q) {
      const std::size_t r = first + q * step;
      if (r >= rows) break;  // the same for the whole group
      typename Op::Acc acc = Op::identity();
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u)
        if (lane + u * G < vectors)
#pragma unroll
          for (unsigned j = 0; j < kCount; ++j) acc = Op::combine(acc, Op::load(x[q][u].e[j], (lane + u * G) * kCount + j));
      acc = group_reduce<Op, G>(acc);
      if (lane == 0) store_result<Op>(out, r, acc);
    }
  }
}

// K blocks per row, block k taking columns [k * chunk, (k + 1) * chunk): with K = 1 a block per row
// writes the result; with K > 1 it writes a partial, and rows_combine adds the K in order.
template <class Op, class T>
__global__ void __launch_bounds__(kBlock)
    rows_by_blocks(const T* in, std::size_t cols, std::size_t stride, std::size_t chunk, unsigned K, void* out,
                   typename Op::Acc* partials) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kBlock / 32];
  const std::size_t r = blockIdx.x / K;
  const unsigned k = blockIdx.x % K;
  const std::size_t begin = std::min(cols, k * chunk), end = std::min(cols, begin + chunk);
  const Acc acc = ch06::block_reduce<Op>(lane_accumulate<Op>(in + r * stride + begin, end - begin, begin, threadIdx.x, kBlock), per_warp);
  if (threadIdx.x != 0) return;
  if (K == 1)
    store_result<Op>(out, r, acc);
  else
    partials[blockIdx.x] = acc;
}

// A warp per row over its K partials: lane j takes partials j, j + 32, ..., then the warp's tree.
template <class Op>
__global__ void __launch_bounds__(kBlock) rows_combine(const typename Op::Acc* partials, std::size_t rows, unsigned K, void* out) {
  using Acc = typename Op::Acc;
  const std::size_t r = (std::size_t{blockIdx.x} * kBlock + threadIdx.x) / 32;
  if (r >= rows) return;  // whole warps leave together
  const unsigned lane = threadIdx.x % 32;
  Acc acc = Op::identity();
  for (unsigned j = lane; j < K; j += 32) acc = Op::combine(acc, partials[r * K + j]);
  acc = group_reduce<Op, 32>(acc);
  if (lane == 0) store_result<Op>(out, r, acc);
}

// ---- columns --------------------------------------------------------------------------------------------
//
// kVector: each thread reads 16 bytes of a row (kCount columns) per row, which needs every row to
// start on a 16-byte boundary and cols to be a multiple of kCount; else one column per thread.
// A block lays P threads across the row (P = min(vectors per row, kBlock)) and R = kBlock / P rows
// deep; thread (x, y) sums its columns down rows y, y + R, ... of the block's chunk of rows, then
// the R threads of each column meet in shared memory, pairwise in a fixed tree. blockIdx.y is
// the chunk: with one chunk the block writes the results, else partial k of each column, which
// columns_combine adds in order.
template <class Op, class T, bool kVector>
__global__ void __launch_bounds__(kBlock)
    columns_tiled(const T* in, std::size_t rows, std::size_t cols, std::size_t stride, std::size_t chunk_rows,
                  void* out, typename Op::Acc* partials) {
  using Acc = typename Op::Acc;
  constexpr unsigned kCount = kVector ? Vec16<T>::kCount : 1;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Acc* tree = reinterpret_cast<Acc*>(shared_bytes);  // [kBlock][kCount]
  const std::size_t vectors = cols / kCount;
  const unsigned P = static_cast<unsigned>(std::min<std::size_t>(vectors, kBlock)), R = kBlock / P;
  const unsigned x = threadIdx.x % P, y = threadIdx.x / P;
  const std::size_t v = std::size_t{blockIdx.x} * P + x;
  const bool active = y < R && v < vectors;
  const std::size_t first = std::size_t{blockIdx.y} * chunk_rows, last = std::min(rows, first + chunk_rows);
  Acc acc[kCount];
#pragma unroll
  for (unsigned j = 0; j < kCount; ++j) acc[j] = Op::identity();
  if (active) {
    std::size_t r = first + y;
    for (; r + (kColumnUnroll - 1) * R < last; r += kColumnUnroll * R) {
      Vec16<T> x4[kColumnUnroll];
      T x1[kColumnUnroll];
#pragma unroll
      for (unsigned u = 0; u < kColumnUnroll; ++u) {
        if constexpr (kVector)
          x4[u] = reinterpret_cast<const Vec16<T>*>(in + (r + u * R) * stride)[v];
        else
          x1[u] = in[(r + u * R) * stride + v];
      }
#pragma unroll
      for (unsigned u = 0; u < kColumnUnroll; ++u)
#pragma unroll
        for (unsigned j = 0; j < kCount; ++j)
          acc[j] = Op::combine(acc[j], Op::load(kVector ? x4[u].e[j] : x1[u], r + u * R));
    }
    for (; r < last; r += R)
#pragma unroll
      for (unsigned j = 0; j < kCount; ++j) {
        const T e = kVector ? reinterpret_cast<const Vec16<T>*>(in + r * stride)[v].e[j] : in[r * stride + v];
        acc[j] = Op::combine(acc[j], Op::load(e, r));
      }
  }
#pragma unroll
  for (unsigned j = 0; j < kCount; ++j) tree[threadIdx.x * kCount + j] = acc[j];
  __syncthreads();
  for (unsigned h = 1; h < R; h *= 2) {
    if (y % (2 * h) == 0 && y + h < R)
#pragma unroll
      for (unsigned j = 0; j < kCount; ++j)
        tree[threadIdx.x * kCount + j] = Op::combine(tree[threadIdx.x * kCount + j], tree[(threadIdx.x + h * P) * kCount + j]);
    __syncthreads();
  }
  if (y != 0 || v >= vectors) return;
#pragma unroll
  for (unsigned j = 0; j < kCount; ++j) {
    const std::size_t c = v * kCount + j;
    if (gridDim.y == 1)
      store_result<Op>(out, c, tree[threadIdx.x * kCount + j]);
    else
      partials[std::size_t{blockIdx.y} * cols + c] = tree[threadIdx.x * kCount + j];
  }
}

// The chunks' partials of each column: a block per 32 columns, its 8 warps taking chunks k, k + 8,
// ... (each warp's load reads 32 neighbouring columns: 128 contiguous bytes), then the 8 meet in
// shared memory in a fixed tree. Coalesced however many chunks and columns there are.
template <class Op>
__global__ void __launch_bounds__(kBlock)
    columns_combine(const typename Op::Acc* partials, std::size_t cols, unsigned chunks, void* out) {
  using Acc = typename Op::Acc;
  constexpr unsigned kWarps = kBlock / 32;
  __shared__ Acc tree[kWarps][32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::size_t c = std::size_t{blockIdx.x} * 32 + lane;
  Acc acc = Op::identity();
  if (c < cols)
    for (unsigned k = warp; k < chunks; k += kWarps) acc = Op::combine(acc, partials[k * cols + c]);
  tree[warp][lane] = acc;
  __syncthreads();
  for (unsigned h = kWarps / 2; h > 0; h /= 2) {
    if (warp < h) tree[warp][lane] = Op::combine(tree[warp][lane], tree[warp + h][lane]);
    __syncthreads();
  }
  if (warp == 0 && c < cols) store_result<Op>(out, c, tree[0][lane]);
}

// The baseline: a thread per column walks down every row, one element at a time.
template <class Op, class T>
__global__ void __launch_bounds__(kBlock)
    columns_naive(const T* in, std::size_t rows, std::size_t cols, std::size_t stride, void* out) {
  const std::size_t c = std::size_t{blockIdx.x} * kBlock + threadIdx.x;
  if (c >= cols) return;
  typename Op::Acc acc = Op::identity();
  for (std::size_t r = 0; r < rows; ++r) acc = Op::combine(acc, Op::load(in[r * stride + c], r));
  store_result<Op>(out, c, acc);
}

// ---- segments -----------------------------------------------------------------------------------------
//
// Segment s is [offsets[s], offsets[s + 1]) clamped to [0, n]: a bad offsets array (decreasing, or
// past n) reads nothing outside the input; the program checks offsets on the host and refuses them.
__device__ inline void segment_bounds(const std::int64_t* offsets, std::size_t s, std::size_t n, std::size_t& begin,
                                      std::size_t& end) {
  const std::int64_t b = offsets[s], e = offsets[s + 1];
  begin = static_cast<std::size_t>(min(max(b, std::int64_t{0}), static_cast<std::int64_t>(n)));
  end = static_cast<std::size_t>(min(max(e, static_cast<std::int64_t>(begin)), static_cast<std::int64_t>(n)));
}

// Three lengths, three mappings. A group of G lanes per segment, as rows_by_group, takes the
// segments up to short_length (0: every segment). A longer one up to a chunk's length is listed for
// a warp of its own (segments_medium: the list's order depends on timing, but each segment's
// result does not, since one warp reduces it the same way whatever its place). A segment longer
// than a chunk is marked, for every chunk of `chunk` elements it touches, as that chunk's slot 0
// (the segment holding the chunk's first element) or slot 1 (one that begins inside it), and the
// two kernels after segments_medium reduce it chunk by chunk.
template <class Op, class T, unsigned G, bool kAligned>
__global__ void __launch_bounds__(kBlock)
    segments_by_group(const T* in, const std::int64_t* offsets, std::size_t segments, std::size_t n,
                      std::size_t short_length, std::size_t chunk, void* out, std::uint32_t* chunk_segment,
                      std::uint32_t* medium, unsigned* medium_count) {
  constexpr unsigned kGroups = kBlock / G;
  const unsigned lane = threadIdx.x % G;
  for (std::size_t s = std::size_t{blockIdx.x} * kGroups + threadIdx.x / G; s < segments;
       s += std::size_t{gridDim.x} * kGroups) {
    std::size_t begin, end;
    segment_bounds(offsets, s, n, begin, end);
    if (short_length != 0 && end - begin > chunk) {
      for (std::size_t c = begin / chunk + lane; c <= (end - 1) / chunk; c += G)
        chunk_segment[2 * c + (c * chunk < begin ? 1 : 0)] = static_cast<std::uint32_t>(s + 1);
      continue;
    }
    if (short_length != 0 && end - begin > short_length) {
      if (lane == 0) medium[atomicAdd(medium_count, 1u)] = static_cast<std::uint32_t>(s);
      continue;
    }
    const typename Op::Acc acc =
        group_reduce<Op, G>(kAligned ? lane_accumulate_masked<Op>(in, n, begin, end, lane, G)
                                     : lane_accumulate<Op>(in + begin, end - begin, 0, lane, G));
    if (lane == 0) store_result<Op>(out, s, acc);
  }
}

// The listed segments, a warp each: the grid's warps stride over the list, whose length the group
// kernel left in *count.
template <class Op, class T, bool kAligned>
__global__ void __launch_bounds__(kBlock)
    segments_medium(const T* in, const std::int64_t* offsets, std::size_t n, const std::uint32_t* medium,
                    const unsigned* count, void* out) {
  const unsigned lane = threadIdx.x % 32, warps = gridDim.x * (kBlock / 32);
  for (unsigned i = blockIdx.x * (kBlock / 32) + threadIdx.x / 32; i < *count; i += warps) {
    const std::uint32_t s = medium[i];
    std::size_t begin, end;
    segment_bounds(offsets, s, n, begin, end);
    const typename Op::Acc acc =
        group_reduce<Op, 32>(kAligned ? lane_accumulate_masked<Op>(in, n, begin, end, lane, 32)
                                      : lane_accumulate<Op>(in + begin, end - begin, 0, lane, 32));
    if (lane == 0) store_result<Op>(out, s, acc);
  }
}

// Each block takes chunks c, c + gridDim.x, ...: its share of the (at most two) long segments that
// touch chunk c. A long segment is longer than a chunk, so at most one ends and one begins inside
// any chunk.
template <class Op, class T>
__global__ void __launch_bounds__(kBlock)
    segments_long_chunks(const T* in, const std::int64_t* offsets, std::size_t n, std::size_t chunk, std::size_t chunks,
                         const std::uint32_t* chunk_segment, typename Op::Acc* partials) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kBlock / 32];
  for (std::size_t c = blockIdx.x; c < chunks; c += gridDim.x)  // most chunks hold no long segment
    for (unsigned slot = 0; slot < 2; ++slot) {
      const std::uint32_t marked = chunk_segment[2 * c + slot];
      if (marked == 0) continue;  // the same for the whole block
      std::size_t begin, end;
      segment_bounds(offsets, marked - 1, n, begin, end);
      const std::size_t lo = std::max(begin, c * chunk), hi = std::min(end, (c + 1) * chunk);
      const Acc acc =
          ch06::block_reduce<Op>(lane_accumulate<Op>(in + lo, hi - lo, lo - begin, threadIdx.x, kBlock), per_warp);
      if (threadIdx.x == 0) partials[2 * c + slot] = acc;
    }
}

// For each of its chunks c, a block owns the long segment that begins in c, if any, and combines its partials
// in chunk order: its own, then slot 0 of every later chunk up to the one holding its last element.
template <class Op>
__global__ void __launch_bounds__(kBlock)
    segments_long_combine(const std::int64_t* offsets, std::size_t n, std::size_t chunk, std::size_t chunks,
                          const std::uint32_t* chunk_segment, const typename Op::Acc* partials, void* out) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kBlock / 32];
  for (std::size_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    std::uint32_t marked = chunk_segment[2 * c + 1];
    unsigned slot = 1;
    if (marked == 0) {
      marked = chunk_segment[2 * c];
      slot = 0;
      if (marked == 0) continue;
      std::size_t begin, end;
      segment_bounds(offsets, marked - 1, n, begin, end);
      if (begin != c * chunk) continue;  // it began in an earlier chunk, whose block owns it
    }
    std::size_t begin, end;
    segment_bounds(offsets, marked - 1, n, begin, end);
    const std::size_t last = (end - 1) / chunk, count = last - c + 1;
    Acc acc = Op::identity();
#pragma unroll 8
    for (std::size_t j = threadIdx.x; j < count; j += kBlock)  // independent loads: 8 in flight
      acc = Op::combine(acc, partials[j == 0 ? 2 * c + slot : 2 * (c + j)]);
    acc = ch06::block_reduce<Op>(acc, per_warp);
    if (threadIdx.x == 0) store_result<Op>(out, marked - 1, acc);
  }
}

// ---- the launcher ------------------------------------------------------------------------------------

// Streaming multiprocessors of the current device (asked once per device).
inline unsigned sm_count() {
  return red::per_device<unsigned>([](int device) {
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return static_cast<unsigned>(sms);
  });
}

inline unsigned pow2_at_least(std::size_t x) {
  unsigned p = 1;
  while (p < x && p < 32) p *= 2;
  return p;
}

// The segments' scratch: the medium list's length, the chunks' marks (both zeroed every call),
// then the medium list and the chunks' partials.
template <class Acc>
struct SegmentScratch {
  unsigned* medium_count;
  std::uint32_t* chunk_segment;
  std::size_t zeroed;
  std::uint32_t* medium;
  Acc* partials;
  std::size_t bytes;
};
template <class Acc>
SegmentScratch<Acc> segment_scratch(void* base, std::size_t chunks, std::size_t segments) {
  red::ScratchCarver carve(base);
  SegmentScratch<Acc> s{};
  s.medium_count = carve.take<unsigned>(1);
  s.chunk_segment = carve.take<std::uint32_t>(2 * chunks);
  s.zeroed = carve.bytes();
  s.medium = carve.take<std::uint32_t>(segments);
  s.partials = carve.take<Acc>(2 * chunks);
  s.bytes = carve.bytes();
  return s;
}

// What one call launches: the strategy and its sizes, and the scratch it needs.
struct Plan {
  Strategy strategy = Strategy::automatic;
  unsigned lanes = 1;             // rows and segments: lanes per row or segment (group kernels)
  unsigned split = 1;             // blocks_per_row: blocks per row; columns: chunks of rows
  std::size_t chunk = 0;          // blocks_per_row: columns per block; columns: rows per chunk;
                                  // segments: elements per chunk of a long segment
  std::size_t long_length = 0;    // segments: longer than this goes to a block of its own, longer
                                  // than `chunk` is split into chunks (0: neither, the naive mapping)
  std::size_t chunks = 0;         // segments: chunks of the input
  bool vector = false;            // columns: 16-byte loads across the row; rows: rows_aligned
                                  // (every row on a 16-byte boundary, at most 2 vectors a lane, or
                                  // 8 with a whole warp);
                                  // segments: masked 16-byte loads (the input on a 16-byte boundary)
  std::size_t scratch_bytes = 0;
};

// The launcher's choice. Rows by their length in 16-byte vectors V: up to 2 a thread per row; up to
// 512 a group of lanes with about two vectors each (at most a warp); longer, blocks, as many per
// row as it takes to give every SM a few when the rows are few. Segments by their mean length,
// the same way, and a long segment (more than 64 vectors a lane) split into chunks.
template <class Op, class T>
Plan plan(const BatchedCall& c) {
  using Acc = typename Op::Acc;
  constexpr std::size_t kCount = Vec16<T>::kCount;
  const Shape& s = c.shape;
  const std::size_t resident = std::size_t{sm_count()} * (2048 / kBlock);  // blocks the GPU holds at once
  Plan p;
  p.strategy = c.strategy;
  if (s.layout == Layout::rows) {
    const std::size_t V = red::ceil_div(s.cols, kCount);
    if (p.strategy == Strategy::automatic)
      p.strategy = V <= 2 ? Strategy::thread_per_row : V <= 512 ? Strategy::group_per_row : Strategy::blocks_per_row;
    if (p.strategy == Strategy::group_per_row) p.lanes = std::max(2u, pow2_at_least(red::ceil_div(V, 2)));
    if (p.strategy == Strategy::thread_per_row || p.strategy == Strategy::group_per_row)
      p.vector = s.cols % kCount == 0 && s.stride % kCount == 0 &&
                 reinterpret_cast<std::uintptr_t>(c.input) % 16 == 0 && V <= (p.lanes == 32 ? 8 : 2) * p.lanes;
    if (p.strategy == Strategy::blocks_per_row || p.strategy == Strategy::block_per_row) {
      const std::size_t most = std::max<std::size_t>(1, V / (kBlock * kUnroll));  // a full trip each
      const std::size_t wanted = p.strategy == Strategy::block_per_row ? 1 : red::ceil_div(2 * resident, std::max<std::size_t>(s.rows, 1));
      p.split = static_cast<unsigned>(std::min(most, wanted));
      p.chunk = red::ceil_div(red::ceil_div(s.cols, p.split), kCount) * kCount;
      p.split = static_cast<unsigned>(std::max<std::size_t>(1, red::ceil_div(s.cols, p.chunk)));
      p.strategy = p.split == 1 ? Strategy::block_per_row : Strategy::blocks_per_row;
      if (p.split > 1) p.scratch_bytes = s.rows * p.split * sizeof(Acc);
    }
    if (p.strategy != Strategy::thread_per_row && p.strategy != Strategy::group_per_row &&
        p.strategy != Strategy::block_per_row && p.strategy != Strategy::blocks_per_row)
      throw std::invalid_argument("11_batched: strategy " + name(c.strategy) + " does not reduce rows");
  } else if (s.layout == Layout::columns) {
    if (p.strategy == Strategy::automatic) p.strategy = Strategy::columns_tiled;
    if (p.strategy == Strategy::columns_tiled) {
      p.vector = s.cols % kCount == 0 && s.stride % kCount == 0 && reinterpret_cast<std::uintptr_t>(c.input) % 16 == 0;
      const std::size_t V = s.cols / (p.vector ? kCount : 1);
      const std::size_t across = std::max<std::size_t>(1, std::min<std::size_t>(V, kBlock)), deep = kBlock / across;
      const std::size_t blocks_x = std::max<std::size_t>(1, red::ceil_div(V, across));
      const std::size_t wanted = red::ceil_div(2 * resident, blocks_x);
      const std::size_t most = std::max<std::size_t>(1, s.rows / (deep * 2 * kColumnUnroll));  // two trips a thread
      p.split = static_cast<unsigned>(std::min<std::size_t>({wanted, most, 65535}));
      p.chunk = std::max<std::size_t>(1, red::ceil_div(s.rows, p.split));
      p.split = static_cast<unsigned>(std::max<std::size_t>(1, red::ceil_div(s.rows, p.chunk)));
      if (p.split > 1) p.scratch_bytes = std::size_t{p.split} * s.cols * sizeof(Acc);
    } else if (p.strategy != Strategy::columns_naive) {
      throw std::invalid_argument("11_batched: strategy " + name(c.strategy) + " does not reduce columns");
    }
  } else {
    if (p.strategy == Strategy::automatic) p.strategy = Strategy::segments_grouped;
    if (p.strategy != Strategy::segments_grouped && p.strategy != Strategy::segments_naive)
      throw std::invalid_argument("11_batched: strategy " + name(c.strategy) + " does not reduce segments");
    // Up to about 8 vectors a lane: masked loads cost little per vector, so a thread takes a whole
    // short segment (rows_aligned's two vectors a lane need rows on 16-byte boundaries).
    const std::size_t mean = s.segments ? s.n / s.segments : 0;
    p.vector = reinterpret_cast<std::uintptr_t>(c.input) % 16 == 0;
    p.lanes = pow2_at_least(red::ceil_div(mean, (p.vector ? 8 : 2) * kCount));
    if (p.strategy == Strategy::segments_grouped && s.n > 0) {
      // More than 16 vectors a lane: a warp of its own. More than 4 vectors a thread of a block
      // (32 a lane of that warp): chunks of that size, a block each.
      p.long_length = std::size_t{p.lanes} * kCount * 16;
      p.chunk = std::size_t{kBlock} * kCount * 4;
      p.chunks = red::ceil_div(s.n, p.chunk);
      p.scratch_bytes = segment_scratch<Acc>(nullptr, p.chunks, s.segments).bytes;
    }
  }
  return p;
}

template <class Op, class T, unsigned G>
void launch_rows_by_group(const BatchedCall& c, const Plan& p) {
  const Shape& s = c.shape;
  const std::size_t blocks = std::min<std::size_t>(red::ceil_div(s.rows, kBlock / G), std::size_t{sm_count()} * 8);
  if (p.vector) {  // two vectors a lane and 4 rows a trip, or a warp with 8 vectors a lane
    const std::size_t V = s.cols / Vec16<T>::kCount;
    if (V <= 2 * G)
      rows_aligned<Op, T, G, 2, 4><<<static_cast<unsigned>(blocks), kBlock, 0, c.stream>>>(
          static_cast<const T*>(c.input), s.rows, V, s.stride, c.output);
    else if constexpr (G == 32)
      rows_aligned<Op, T, G, 8, 1><<<static_cast<unsigned>(blocks), kBlock, 0, c.stream>>>(
          static_cast<const T*>(c.input), s.rows, V, s.stride, c.output);
    return;
  }
  rows_by_group<Op, T, G><<<static_cast<unsigned>(blocks), kBlock, 0, c.stream>>>(static_cast<const T*>(c.input), s.rows,
                                                                                    s.cols, s.stride, c.output);
}

template <class Op, class T, unsigned G>
void launch_segments_by_group(const BatchedCall& c, const Plan& p, std::uint32_t* chunk_segment, std::uint32_t* medium,
                              unsigned* medium_count) {
  const Shape& s = c.shape;
  const std::size_t blocks = std::min<std::size_t>(red::ceil_div(s.segments, kBlock / G), std::size_t{sm_count()} * 8);
  if (p.vector)
    segments_by_group<Op, T, G, true><<<static_cast<unsigned>(blocks), kBlock, 0, c.stream>>>(
        static_cast<const T*>(c.input), s.offsets, s.segments, s.n, p.long_length, p.chunk, c.output, chunk_segment,
        medium, medium_count);
  else
    segments_by_group<Op, T, G, false><<<static_cast<unsigned>(blocks), kBlock, 0, c.stream>>>(
        static_cast<const T*>(c.input), s.offsets, s.segments, s.n, p.long_length, p.chunk, c.output, chunk_segment,
        medium, medium_count);
}

// Calls f(std::integral_constant<unsigned, G>) for the group size G = lanes (1, 2, ..., 32).
template <class F>
void with_lanes(unsigned lanes, F&& f) {
  switch (lanes) {
    case 1: return f(std::integral_constant<unsigned, 1>{});
    case 2: return f(std::integral_constant<unsigned, 2>{});
    case 4: return f(std::integral_constant<unsigned, 4>{});
    case 8: return f(std::integral_constant<unsigned, 8>{});
    case 16: return f(std::integral_constant<unsigned, 16>{});
    default: return f(std::integral_constant<unsigned, 32>{});
  }
}

// The longest chain of roundings one result of `length` elements goes through (sums; the tests'
// and the program's error bound): a lane's share added serially, the loaded vector, the trees of
// the group or block, and the partials of a split row, a chunked column or a long segment.
inline std::size_t sum_depth(const Plan& p, const Shape& s, std::size_t length, std::size_t per_vector) {
  const std::size_t block_tree = 8, warp_tree = 5;
  switch (p.strategy) {
    case Strategy::thread_per_row:
    case Strategy::group_per_row:
      return red::ceil_div(length, p.lanes) + per_vector + warp_tree;
    case Strategy::block_per_row:
    case Strategy::blocks_per_row:
      return red::ceil_div(p.chunk, kBlock) + per_vector + block_tree + red::ceil_div(p.split, 32) + warp_tree;
    case Strategy::columns_tiled:
      return red::ceil_div(p.chunk, kBlock / std::min<std::size_t>(kBlock, std::max<std::size_t>(1, s.cols))) + block_tree + p.split;
    case Strategy::columns_naive:
      return length;
    default: {  // segments: a group's share, a warp's (medium), or a long segment's chunks and partials
      if (p.long_length == 0) return red::ceil_div(length, p.lanes) + per_vector + warp_tree;
      if (length <= p.long_length) return red::ceil_div(length, p.lanes) + per_vector + warp_tree;
      if (length <= p.chunk) return red::ceil_div(length, 32) + per_vector + warp_tree;
      return red::ceil_div(p.chunk, kBlock) + per_vector + block_tree + red::ceil_div(red::ceil_div(length, p.chunk) + 1, kBlock) +
             block_tree;
    }
  }
}

template <class Op, class T>
std::size_t scratch_bytes(const BatchedCall& c) {
  return plan<Op, T>(c).scratch_bytes;
}

// One call on c.stream. The shape must be valid (why_invalid); the scratch at least scratch_bytes.
template <class Op, class T>
void launch(const BatchedCall& c) {
  using Acc = typename Op::Acc;
  const Shape& s = c.shape;
  const Plan p = plan<Op, T>(c);
  const T* in = static_cast<const T*>(c.input);
  if (outputs(s) == 0) return;
  switch (p.strategy) {
    case Strategy::thread_per_row:
      launch_rows_by_group<Op, T, 1>(c, p);
      break;
    case Strategy::group_per_row:
      with_lanes(p.lanes, [&](auto g) { launch_rows_by_group<Op, T, decltype(g)::value>(c, p); });
      break;
    case Strategy::block_per_row:
    case Strategy::blocks_per_row: {
      Acc* partials = static_cast<Acc*>(c.scratch);
      rows_by_blocks<Op, T><<<static_cast<unsigned>(s.rows * p.split), kBlock, 0, c.stream>>>(in, s.cols, s.stride, p.chunk,
                                                                                           p.split, c.output, partials);
      if (p.split > 1)
        rows_combine<Op><<<static_cast<unsigned>(red::ceil_div(s.rows * 32, kBlock)), kBlock, 0, c.stream>>>(
            partials, s.rows, p.split, c.output);
      break;
    }
    case Strategy::columns_tiled: {
      Acc* partials = static_cast<Acc*>(c.scratch);
      const std::size_t kc = p.vector ? Vec16<T>::kCount : 1, V = s.cols / kc;
      const std::size_t across = std::max<std::size_t>(1, std::min<std::size_t>(V, kBlock));
      const dim3 grid(static_cast<unsigned>(std::max<std::size_t>(1, red::ceil_div(V, across))), p.split);
      const std::size_t shared = kBlock * kc * sizeof(Acc);
      if (p.vector)
        columns_tiled<Op, T, true><<<grid, kBlock, shared, c.stream>>>(in, s.rows, s.cols, s.stride, p.chunk, c.output, partials);
      else
        columns_tiled<Op, T, false><<<grid, kBlock, shared, c.stream>>>(in, s.rows, s.cols, s.stride, p.chunk, c.output, partials);
      if (p.split > 1)
        columns_combine<Op><<<static_cast<unsigned>(red::ceil_div(s.cols, 32)), kBlock, 0, c.stream>>>(partials, s.cols,
                                                                                                p.split, c.output);
      break;
    }
    case Strategy::columns_naive:
      columns_naive<Op, T><<<static_cast<unsigned>(red::ceil_div(s.cols, kBlock)), kBlock, 0, c.stream>>>(in, s.rows, s.cols,
                                                                                                  s.stride, c.output);
      break;
    default: {  // segments
      const SegmentScratch<Acc> scratch = segment_scratch<Acc>(c.scratch, p.chunks, s.segments);
      std::uint32_t* chunk_segment = scratch.chunk_segment;
      Acc* partials = scratch.partials;
      if (p.long_length > 0) CUDA_CHECK(cudaMemsetAsync(c.scratch, 0, scratch.zeroed, c.stream));
      with_lanes(p.lanes, [&](auto g) {
        launch_segments_by_group<Op, T, decltype(g)::value>(c, p, chunk_segment, scratch.medium, scratch.medium_count);
      });
      if (p.long_length > 0) {
        const unsigned blocks = sm_count() * (2048 / kBlock);
        if (p.vector)
          segments_medium<Op, T, true><<<blocks, kBlock, 0, c.stream>>>(in, s.offsets, s.n, scratch.medium,
                                                                        scratch.medium_count, c.output);
        else
          segments_medium<Op, T, false><<<blocks, kBlock, 0, c.stream>>>(in, s.offsets, s.n, scratch.medium,
                                                                         scratch.medium_count, c.output);
      }
      if (p.chunks > 0 && p.long_length > 0) {
        const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(p.chunks, std::size_t{sm_count()} * (2048 / kBlock)));
        segments_long_chunks<Op, T><<<blocks, kBlock, 0, c.stream>>>(in, s.offsets, s.n, p.chunk, p.chunks, chunk_segment,
                                                                     partials);
        segments_long_combine<Op><<<blocks, kBlock, 0, c.stream>>>(s.offsets, s.n, p.chunk, p.chunks, chunk_segment, partials,
                                                                   c.output);
      }
    }
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch11
