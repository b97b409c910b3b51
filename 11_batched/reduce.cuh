// Chapter 11 - many reductions at once: rows, columns and irregular segments.
//
// Idea: the shape decides how work maps to threads. One reduction per row of a [B, L] matrix can
// be a thread's (L tiny), a group of lanes' (short rows), a block's (long rows) or several blocks'
// (a few very long rows), and only the mapping changes: every one reads the row with the same
// 16-byte loads (lane_accumulate, or rows_aligned where every row starts on a 16-byte boundary)
// and combines the lanes with cooperative groups' reduce, as in chapter 10. Columns are read across
// the row, a thread per 16 bytes of columns, each summing its columns down a chunk of rows, then
// the same kernel over the chunks' partials. Segments are not mapped by segment at all: the
// elements are split evenly among blocks whatever the segments' lengths (load balancing), each block
// marking where its segments end, its threads closing the segments at the marks they meet and
// handing on the partials of those that cross a thread, tile or block.
// Cost: the input read once; rows: one kernel (blocks_per_row: and a pass over B x K partials);
// columns: one kernel, and a pass over K x L partials; segments: the offsets read about once more,
// a kernel over the elements and one over the blocks' partials. Deterministic: every partial is
// combined in a fixed order that depends on the shape alone.
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
// A block of kColumnBlock threads lays P threads across the row (P = min(vectors per row, 32): a
// warp reads 32 neighbouring 16-byte vectors, 512 contiguous bytes) and R = kColumnBlock / P rows
// deep. Thread (x, y) sums its columns down rows y, y + R, ... of the block's chunk of rows, then
// the R threads of each column meet: by shuffles within a warp, then pairwise in a fixed tree in
// shared memory across the warps. blockIdx.y is the chunk: with one chunk the block writes the
// results, else partial k of each column into a [chunks, cols] matrix, which the same kernel then
// reduces over its columns (CombineOp: the partials are already accumulators). kVector: 16-byte loads (kCount columns a thread), which
// needs every row on a 16-byte boundary and cols a multiple of kCount; else a column a thread.
constexpr unsigned kColumnBlock = 512;
constexpr unsigned kColumnTree = 9;  // log2(kColumnBlock): the levels of a column's meeting
static_assert(1u << kColumnTree == kColumnBlock, "kColumnTree is log2(kColumnBlock)");
// Rows each thread has in flight. A block of 512 threads at up to 64 registers leaves room for two
// on an SM, so that one block's meeting overlaps the other's loads (one block of 1024 threads
// holding 8 vectors would fill an SM alone). With one element a load, 8 in flight are only 32
// bytes: that kernel is held to 32 registers, 4 blocks an SM, to keep twice the threads busy
// (argmax's index pairs would spill there: it stays at 2).
constexpr unsigned kColumnUnroll = 8;

template <class Op>
struct CombineOp {  // Op over its own accumulators: the second pass over partials
  using Acc = typename Op::Acc;
  static constexpr red::Op op = Op::op;
  __device__ static Acc identity() { return Op::identity(); }
  __device__ static Acc load(const Acc& a, std::size_t) { return a; }
  __device__ static Acc combine(const Acc& a, const Acc& b) { return Op::combine(a, b); }
};

// Shared memory for the column tree: kCount accumulators a thread if that is at most 48 KB, else one.
template <class Acc>
constexpr std::size_t columns_tree_bytes(std::size_t count) {
  return kColumnBlock * count * sizeof(Acc) <= 48 * 1024 ? kColumnBlock * count * sizeof(Acc) : kColumnBlock * sizeof(Acc);
}

template <class Op, class T, bool kVector>
__global__ void __launch_bounds__(kColumnBlock, kVector || sizeof(typename Op::Acc) > 4 ? 2 : 4)
    columns_tiled(const T* in, std::size_t rows, std::size_t cols, std::size_t stride, unsigned across,
                  std::size_t chunk_rows, void* out, typename Op::Acc* partials) {
  using Acc = typename Op::Acc;
  constexpr unsigned kCount = kVector ? Vec16<T>::kCount : 1;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Acc* tree = reinterpret_cast<Acc*>(shared_bytes);  // [kColumnBlock][kAtOnce]
  const std::size_t vectors = cols / kCount;
  const unsigned P = across, R = kColumnBlock / P;
  const unsigned x = threadIdx.x % P, y = threadIdx.x / P;
  const std::size_t v = std::size_t{blockIdx.x} * P + x;
  const bool active = y < R && v < vectors;
  const std::size_t first = std::size_t{blockIdx.y} * chunk_rows, last = std::min(rows, first + chunk_rows);
  Acc acc[kCount];
#pragma unroll
  for (unsigned j = 0; j < kCount; ++j) acc[j] = Op::identity();
  if (active) {
    // Trips of kColumnUnroll rows, every load of a trip issued before the first add; then one last
    // trip with the rows past the chunk left out, so that no row is read on its own (a chunk's few
    // leftover rows one after another would cost a memory latency each).
    const auto trip = [&](std::size_t r, auto guarded) {
      Vec16<T> x4[kColumnUnroll];
      T x1[kColumnUnroll];
#pragma unroll
      for (unsigned u = 0; u < kColumnUnroll; ++u) {
        if (guarded && r + u * R >= last) continue;
        if constexpr (kVector)
          x4[u] = reinterpret_cast<const Vec16<T>*>(in + (r + u * R) * stride)[v];
        else
          x1[u] = in[(r + u * R) * stride + v];
      }
#pragma unroll
      for (unsigned u = 0; u < kColumnUnroll; ++u)
        if (!guarded || r + u * R < last)
#pragma unroll
          for (unsigned j = 0; j < kCount; ++j)
            acc[j] = Op::combine(acc[j], Op::load(kVector ? x4[u].e[j] : x1[u], r + u * R));
    };
    std::size_t r = first + y;
    for (; r + (kColumnUnroll - 1) * R < last; r += kColumnUnroll * R) trip(r, std::false_type{});
    if (r < last) trip(r, std::true_type{});
  }
  // The R threads of a column meet. First within a warp: its 32 / P threads of each column, by
  // shuffles (no barrier). Then across the warps, in a fixed tree in shared memory: all kCount
  // columns at once when their accumulators fit (columns_tree_bytes), else one at a time.
  // Only when P divides 32: then every warp holds whole rows, and a column's threads in it are
  // lanes x, x + P, x + 2P, ...
  const unsigned per_warp = P < 32 && 32 % P == 0 ? 32 / P : 1;  // rows of a column in one warp
  for (unsigned h = P; h < P * per_warp; h *= 2)
#pragma unroll
    for (unsigned j = 0; j < kCount; ++j) acc[j] = Op::combine(acc[j], shfl_down(acc[j], h));
  constexpr unsigned kAtOnce = columns_tree_bytes<Acc>(kCount) == kColumnBlock * kCount * sizeof(Acc) ? kCount : 1;
  const bool warp_head = y % per_warp == 0;  // holds its warp's share of its column after the shuffles
#pragma unroll
  for (unsigned j0 = 0; j0 < kCount; j0 += kAtOnce) {
    if (warp_head)
#pragma unroll
      for (unsigned j = 0; j < kAtOnce; ++j) tree[threadIdx.x * kAtOnce + j] = acc[j0 + j];
    __syncthreads();
    for (unsigned h = per_warp; h < R; h *= 2) {
      if (y % (2 * h) == 0 && y + h < R)
#pragma unroll
        for (unsigned j = 0; j < kAtOnce; ++j)
          tree[threadIdx.x * kAtOnce + j] =
              Op::combine(tree[threadIdx.x * kAtOnce + j], tree[(threadIdx.x + h * P) * kAtOnce + j]);
      __syncthreads();
    }
#pragma unroll
    for (unsigned j = 0; j < kAtOnce; ++j) acc[j0 + j] = tree[threadIdx.x * kAtOnce + j];
    if (kAtOnce < kCount) __syncthreads();
  }
  if (y != 0 || v >= vectors) return;
#pragma unroll
  for (unsigned j = 0; j < kCount; ++j) {
    const std::size_t c = v * kCount + j;
    if (gridDim.y == 1)
      store_result<Op>(out, c, acc[j]);
    else
      partials[std::size_t{blockIdx.y} * cols + c] = acc[j];
  }
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
// Segment s is elements [offsets[s], offsets[s + 1]) of the input; offsets are nondecreasing and
// within [0, n] (the program checks them on the host before a call).
//
// The naive mapping: a group of G lanes per segment, G from the mean length, as rows_by_group. It
// is fast while every segment is about the mean; one segment with half the elements leaves a
// single group reading them while the rest of the GPU waits.
template <class Op, class T, unsigned G, bool kAligned>
__global__ void __launch_bounds__(kBlock)
    segments_by_group(const T* in, const std::int64_t* offsets, std::size_t segments, std::size_t n, void* out) {
  constexpr unsigned kGroups = kBlock / G;
  const unsigned lane = threadIdx.x % G;
  for (std::size_t s = std::size_t{blockIdx.x} * kGroups + threadIdx.x / G; s < segments;
       s += std::size_t{gridDim.x} * kGroups) {
    const std::size_t begin = static_cast<std::size_t>(offsets[s]), end = static_cast<std::size_t>(offsets[s + 1]);
    const typename Op::Acc acc =
        group_reduce<Op, G>(kAligned ? lane_accumulate_masked<Op>(in, n, begin, end, lane, G)
                                     : lane_accumulate<Op>(in + begin, end - begin, 0, lane, G));
    if (lane == 0) store_result<Op>(out, s, acc);
  }
}

// The balanced mapping: split the elements, not the segments. The elements from offsets[0] to
// offsets[segments] are cut into equal block ranges, and a block reads its range in tiles of
// kBlock x kSegmentItems: each thread kSegmentItems consecutive elements, so every block reads the
// same number of bytes whatever the lengths. For each tile the block first marks, in shared
// memory, where the tile's segments end (one bit per element, and which segment), reading the
// offsets in order, kBlock at a time. Then each thread walks its elements and closes a segment at
// every marked end. A segment that began in an earlier thread, tile or block is finished from the
// partials before it: a segmented scan over the block's threads, a carry from tile to tile, and a
// last kernel over the blocks' partials, always combined in the same order (the result's bits
// depend on the shape only).
//
// Which tile closes a segment: the one holding its last element. A tile [t0, t1) owns the ends e
// with t0 < e <= t1; the first tile also owns the ends equal to offsets[0] (empty segments at the
// very start). An empty segment gets its identity from the thread that reads its end.
constexpr unsigned kSegmentItems = 16;  // a thread's elements in a tile: 4 (f32) or 2 (f16) 16-byte loads
constexpr unsigned kSegmentTile = kBlock * kSegmentItems;
constexpr unsigned kWarpsPerBlock = kBlock / 32;
constexpr std::size_t kNoSegment = ~std::size_t{0};

// What a block leaves for whoever finishes its first and last segments.
template <class Acc>
struct Pieces {
  std::size_t head;  // a segment that began before the block's range and ends in it, or kNoSegment
  Acc head_acc;      // its elements in the range
  std::size_t tail;  // the segment still open at the range's end if it has elements in it, or kNoSegment
  Acc tail_acc;      // its elements in the range
};

// A segment's result. The balanced kernels index an argmax by its position in the input; the
// result is its position in the segment.
template <class Op>
__device__ void store_segment(void* out, const std::int64_t* offsets, std::size_t s, typename Op::Acc a) {
  if constexpr (Op::op == red::Op::argmax)
    if (a.index != red::ArgMax<float>::kNoIndex) a.index -= offsets[s];
  store_result<Op>(out, s, a);
}

// The first segment s >= from whose end is past element p (the segment holding p, once the ends at
// or before p are closed), found by a whole warp: 32 probes at a time, each step narrowing the
// range 31-fold (5 dependent loads for 2^24 segments instead of 24). Every lane gets the answer.
__device__ inline std::size_t warp_segment_after(const std::int64_t* offsets, std::size_t segments, std::size_t from,
                                                 std::size_t p) {
  const unsigned lane = threadIdx.x % 32;
  std::size_t a_lo = from, a_hi = segments;  // the answer is in [a_lo, a_hi]
  while (a_lo < a_hi) {
    const std::size_t step = (a_hi - a_lo + 30) / 31;
    const std::size_t c = std::min(a_lo + lane * step, a_hi);
    const bool past = c >= segments || static_cast<std::size_t>(offsets[c + 1]) > p;
    const unsigned k = __ffs(__ballot_sync(0xffffffffu, past)) - 1;  // lane 31 probes a_hi: always past
    const std::size_t ck = __shfl_sync(0xffffffffu, c, k), before = __shfl_sync(0xffffffffu, c, k == 0 ? 0 : k - 1);
    if (k == 0) return ck;
    a_lo = before + 1;
    a_hi = ck;
  }
  return a_hi;
}

// A tile's partials of the segments its threads close, by position: thread t's j-th element at
// [j][t], so that a warp's lanes writing their j-th elements hit 32 different banks. An argmax
// keeps its value and the index's offset from the thread's first element (a closed segment's
// elements in a thread are fewer than kSegmentItems), so the array stays 5 bytes an element.
template <class Op, class Acc = typename Op::Acc>
struct ClosedPartials {
  Acc v[kSegmentItems][kBlock];
  __device__ void put(unsigned j, Acc a, std::size_t) { v[j][threadIdx.x] = a; }
  __device__ Acc get(unsigned j, std::size_t) const { return v[j][threadIdx.x]; }
};
template <class Op, class W>
struct ClosedPartials<Op, red::ValueIndex<W>> {
  W value[kSegmentItems][kBlock];
  unsigned char offset[kSegmentItems][kBlock];
  __device__ void put(unsigned j, red::ValueIndex<W> a, std::size_t g) {
    value[j][threadIdx.x] = a.value;
    offset[j][threadIdx.x] = static_cast<unsigned char>(a.index - static_cast<long long>(g));
  }
  __device__ red::ValueIndex<W> get(unsigned j, std::size_t g) const {
    return {value[j][threadIdx.x], static_cast<long long>(g + offset[j][threadIdx.x])};
  }
};

// A block's range of elements, tile by tile: the segments it closes that began inside it written,
// its first and last segments' partials left in records[blockIdx.x]. The ranges are per_block
// elements (a whole number of tiles) from offsets[0] rounded down to a thread's share, so that
// every thread's loads are aligned; a range past the last segment's end is empty. With no elements
// at all, every segment is empty and the blocks write the identities.
template <class Op, class T, bool kAligned>
__global__ void __launch_bounds__(kBlock, 3)  // 80 registers: this tile's and the next tile's elements
    segments_balanced(const T* in, const std::int64_t* offsets, std::size_t segments, std::size_t per_block, void* out,
                      Pieces<typename Op::Acc>* records) {
  using Acc = typename Op::Acc;
  using V = Vec16<T>;
  constexpr unsigned kItems = kSegmentItems, kTile = kSegmentTile, kVecs = kItems * sizeof(T) / 16;
  static_assert(32 % kItems == 0, "a thread's marks lie in one 32-bit word");
  // Two barriers a tile: the marks are complete before the walk, and the warps' totals before the
  // fold. What the fold reads alternates between two copies, so that the next tile's writes need
  // no barrier of their own.
  __shared__ unsigned closes[2][kTile / 32];  // bit p: a segment ends with element t0 + p ...
  __shared__ unsigned closer[kTile];          // ... and which one
  __shared__ ClosedPartials<Op> partials;
  __shared__ Acc warp_value[2][kWarpsPerBlock];
  __shared__ unsigned warp_closes[2][kWarpsPerBlock];
  __shared__ Acc carry[2];            // the open segment's elements in the tiles before
  __shared__ bool block_closed[2];    // whether the block has closed a segment before the tile
  __shared__ Pieces<Acc> record;
  const std::size_t first = static_cast<std::size_t>(offsets[0]), last = static_cast<std::size_t>(offsets[segments]);
  if (first == last) {
    for (std::size_t s = std::size_t{blockIdx.x} * kBlock + threadIdx.x; s < segments; s += std::size_t{gridDim.x} * kBlock)
      store_result<Op>(out, s, Op::identity());
    return;
  }
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const std::size_t origin = first / kItems * kItems;
  const std::size_t block_lo = origin + std::size_t{blockIdx.x} * per_block;
  const std::size_t block_hi = std::min(last, block_lo + per_block);
  if (block_lo >= block_hi) {
    if (tid == 0) records[blockIdx.x] = {kNoSegment, Op::identity(), kNoSegment, Op::identity()};
    return;
  }
  if (tid == 0) {
    record = {kNoSegment, Op::identity(), kNoSegment, Op::identity()};
    carry[0] = Op::identity();
    block_closed[0] = false;
  }
  for (unsigned i = tid; i < kTile / 16; i += kBlock) closes[i / (kTile / 32)][i % (kTile / 32)] = 0;
  // This thread's elements of the tile at t0 (16-byte loads where they are all in the segments).
  const auto load = [&](std::size_t t0, T(&x)[kItems]) {
    const std::size_t g = t0 + std::size_t{tid} * kItems;
    if (kAligned && g >= first && g + kItems <= last) {
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u) {
        const V v = reinterpret_cast<const V*>(in + g)[u];
#pragma unroll
        for (unsigned j = 0; j < V::kCount; ++j) x[u * V::kCount + j] = v.e[j];
      }
    } else {
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j)
        if (g + j >= first && g + j < last) x[j] = in[g + j];
    }
  };
  // The segments' ends are read kBlock at a time, two such chunks held ahead: thread i holds the
  // ends of segments base + i (a) and base + kBlock + i (b), as positions from block_lo, and
  // whether the segment is empty. When a tile has used all of chunk a, b takes its place and the
  // chunk after it is loaded, a chunk ahead of its use. `cursor` is the first segment whose end
  // has not been marked yet.
  struct End {
    unsigned at;  // the end - block_lo; ~0u past the last segment, ~0u - 1 past the block
    bool empty;
  };
  const auto load_end = [&](std::size_t s) {
    if (s >= segments) return End{~0u, false};
    const std::size_t b = static_cast<std::size_t>(offsets[s]), e = static_cast<std::size_t>(offsets[s + 1]);
    return End{static_cast<unsigned>(std::min<std::size_t>(e - block_lo, ~0u - 1)), b == e};
  };
  std::size_t cursor = blockIdx.x == 0 ? 0 : warp_segment_after(offsets, segments, 0, block_lo);
  std::size_t base = cursor;
  End a = load_end(base + tid), b = load_end(base + kBlock + tid);
  __syncthreads();

  // One tile: x holds its elements, and the next tile's are loaded into `next`.
  unsigned buf = 0;
  const auto tile = [&](std::size_t t0, T(&x)[kItems], T(&next)[kItems]) {
    const std::size_t t1 = std::min(block_hi, t0 + kTile);
    if (t1 < block_hi) load(t1, next);
    // 1. Mark the ends the tile owns: those at or before r1 not marked yet. Past a tile's last
    // end, every later one is too (the ends are sorted).
    const unsigned r0 = static_cast<unsigned>(t0 - block_lo), r1 = static_cast<unsigned>(t1 - block_lo);
    const auto mark = [&](End e, std::size_t s) {
      if (e.empty) {
        store_result<Op>(out, s, Op::identity());
      } else {
        const unsigned p = e.at - 1 - r0;
        atomicOr(&closes[buf][p / 32], 1u << (p % 32));
        closer[p] = static_cast<unsigned>(s);  // segments < 2^32 - 2 (why_invalid)
      }
    };
    for (;;) {
      const bool a_in = a.at <= r1, b_in = b.at <= r1;
      if (a_in && base + tid >= cursor) mark(a, base + tid);
      if (b_in) mark(b, base + kBlock + tid);
      const unsigned in_a = static_cast<unsigned>(__syncthreads_count(a_in));
      if (in_a < kBlock) {
        cursor = base + in_a;
        break;
      }
      const unsigned in_b = static_cast<unsigned>(__syncthreads_count(b_in));
      a = b;  // chunk a used up: b moves up, and the next chunk is loaded
      base += kBlock;
      b = load_end(base + kBlock + tid);
      cursor = base + in_b;
      if (in_b < kBlock) break;
    }
    // 2. Walk: at every marked end, the partial so far is put aside and a new one begins. The
    // first one put aside belongs to a segment that began before this thread (its head); the
    // others are whole and written now; `acc` ends as the partial of the segment still open.
    const std::size_t g = t0 + std::size_t{tid} * kItems;
    const unsigned word = closes[buf][tid * kItems / 32];
    const unsigned bits = kItems == 32 ? word : (word >> (tid * kItems % 32)) & ((1u << kItems) - 1);
    Acc acc = Op::identity();
    const bool full = g >= first && g + kItems <= t1;
    const bool warp_closes_none = !__any_sync(0xffffffffu, bits);  // every lane asks, before the branch
    if (full && warp_closes_none) {
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j) acc = Op::combine(acc, Op::load(x[j], g + j));  // no ends in the warp
    } else if (full) {
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j) {
        acc = Op::combine(acc, Op::load(x[j], g + j));
        if (bits >> j & 1u) {
          partials.put(j, acc, g);
          acc = Op::identity();
        }
      }
    } else {  // the first or last thread with elements of the segments: only those in [first, t1)
      const unsigned lo = first > g ? static_cast<unsigned>(std::min<std::size_t>(first - g, kItems)) : 0;
      const unsigned hi = t1 > g ? static_cast<unsigned>(std::min<std::size_t>(t1 - g, kItems)) : 0;
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j) {
        if (j < lo || j >= hi) continue;
        acc = Op::combine(acc, Op::load(x[j], g + j));
        if (bits >> j & 1u) {
          partials.put(j, acc, g);
          acc = Op::identity();
        }
      }
    }
    unsigned head = 0;
    Acc head_acc = Op::identity();
    if (bits) {
      const unsigned j1 = __ffs(bits) - 1;
      head = closer[tid * kItems + j1];
      head_acc = partials.get(j1, g);
      for (unsigned rest = bits & (bits - 1); rest; rest &= rest - 1) {
        const unsigned j = __ffs(rest) - 1;
        store_segment<Op>(out, offsets, closer[tid * kItems + j], partials.get(j, g));
      }
    }
    // 3. A segmented scan over the warp's lanes: a lane's open partial, combined with those of the
    // lanes before it back to the last lane that closed a segment.
    const unsigned ballot = __ballot_sync(0xffffffffu, bits != 0);
    const unsigned closed_upto = ballot & (0xffffffffu >> (31 - lane));  // lanes 0..lane that closed
    const int start = closed_upto ? 31 - __clz(closed_upto) : -1;
    Acc value = acc;
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
      const Acc other = shfl_up(value, d);
      if (static_cast<int>(lane) - static_cast<int>(d) >= start && lane >= d) value = Op::combine(other, value);
    }
    const Acc value_before = shfl_up(value, 1);
    if (lane == 31) {
      warp_value[buf][warp] = value;
      warp_closes[buf][warp] = ballot;
    }
    __syncthreads();
    // 4. Finish each thread's head. Behind the first closing lane of a warp are the warps before
    // it and the tiles before this one: that lane folds their totals in order.
    if (bits) {
      const bool first_in_warp = (ballot & ((1u << lane) - 1)) == 0;
      Acc before = value_before;
      bool closed_before = !first_in_warp;
      if (first_in_warp) {
        Acc incoming = carry[buf];
        closed_before = block_closed[buf];
        for (unsigned w = 0; w < warp; ++w) {
          incoming = warp_closes[buf][w] ? warp_value[buf][w] : Op::combine(incoming, warp_value[buf][w]);
          closed_before = closed_before || warp_closes[buf][w] != 0;
        }
        before = lane == 0 ? incoming : Op::combine(incoming, value_before);
      }
      const Acc total = Op::combine(before, head_acc);
      if (!closed_before && static_cast<std::size_t>(offsets[head]) < block_lo) {
        record.head = head;  // began in an earlier block: the last kernel finishes it
        record.head_acc = total;
      } else {
        store_segment<Op>(out, offsets, head, total);
      }
    }
    if (tid == 0) {  // the carry and flag for the next tile
      Acc running = carry[buf];
      bool any = block_closed[buf];
      for (unsigned w = 0; w < kWarpsPerBlock; ++w) {
        running = warp_closes[buf][w] ? warp_value[buf][w] : Op::combine(running, warp_value[buf][w]);
        any = any || warp_closes[buf][w] != 0;
      }
      carry[buf ^ 1] = running;
      block_closed[buf ^ 1] = any;
    }
    for (unsigned i = tid; i < kTile / 32; i += kBlock) closes[buf][i] = 0;  // for the tile after next
    buf ^= 1;
  };
  T xa[kItems] = {}, xb[kItems] = {};
  load(block_lo, xa);
  for (std::size_t t0 = block_lo;;) {  // two tiles a trip, so that the two arrays swap roles without copies
    tile(t0, xa, xb);
    if ((t0 += kTile) >= block_hi) break;
    tile(t0, xb, xa);
    if ((t0 += kTile) >= block_hi) break;
  }
  __syncthreads();  // the record and the last carry are complete
  // The tail: the segment open after the block's last element, if some of its elements are in the
  // block (the carry holds them). cursor is the first segment whose end is past the block.
  if (tid == 0) {
    if (cursor < segments && static_cast<std::size_t>(offsets[cursor]) < block_hi) {
      record.tail = cursor;
      record.tail_acc = carry[buf];
    }
    records[blockIdx.x] = record;
  }
}

// The segments that began in an earlier block: a warp per block that closed one (its head)
// combines the tails of the blocks from the one where the segment began, in order, then the head.
template <class Op>
__global__ void __launch_bounds__(kBlock)
    segments_balanced_finish(const std::int64_t* offsets, std::size_t segments, std::size_t per_block, unsigned items,
                             std::size_t blocks, const Pieces<typename Op::Acc>* records, void* out) {
  using Acc = typename Op::Acc;
  const std::size_t b = (std::size_t{blockIdx.x} * kBlock + threadIdx.x) / 32;
  const std::size_t first = static_cast<std::size_t>(offsets[0]);
  if (b >= blocks || first == static_cast<std::size_t>(offsets[segments])) return;  // whole warps leave together
  const std::size_t s = records[b].head;
  if (s == kNoSegment) return;
  const unsigned lane = threadIdx.x % 32;
  const std::size_t origin = first / items * items;
  const std::size_t from = (static_cast<std::size_t>(offsets[s]) - origin) / per_block;  // the block where s began
  Acc acc = Op::identity();
#pragma unroll 16
  for (std::size_t k = from + lane; k < b; k += 32)  // independent loads, 16 in flight
    acc = Op::combine(acc, records[k].tail_acc);
  acc = group_reduce<Op, 32>(acc);
  if (lane == 0) store_segment<Op>(out, offsets, s, Op::combine(acc, records[b].head_acc));
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

// Blocks of `kernel` (kThreads threads) one SM holds at once on the current device.
template <unsigned kThreads, class Kernel>
unsigned blocks_per_sm(Kernel kernel, std::size_t shared = 0) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, shared));
  return static_cast<unsigned>(std::max(blocks, 1));
}

// Blocks of kKernel the whole GPU holds at once (asked once per device and kernel). A grid of
// this many runs in one wave: a grid that strides over its work with more blocks than this runs
// in two, and between them every SM waits for its slowest block of the first.
template <unsigned kThreads, auto kKernel, std::size_t kShared = 0>
std::size_t resident_blocks() {
  return red::per_device<std::size_t>(
      [](int) { return std::size_t{sm_count()} * blocks_per_sm<kThreads>(kKernel, kShared); });
}

// What one call launches: the strategy and its sizes, and the scratch it needs.
struct Plan {
  Strategy strategy = Strategy::automatic;
  unsigned lanes = 1;     // rows, segments_naive: lanes per row or segment (group kernels)
  unsigned split = 1;     // blocks_per_row: blocks per row; columns: chunks of rows;
                          // segments_balanced: blocks
  std::size_t chunk = 0;  // blocks_per_row: columns per block; columns: rows per chunk;
                          // segments_balanced: elements per block
  unsigned across = 1;    // columns: threads across a row (first pass; the second pass's is
                          // across_partials)
  unsigned across_partials = 1;
  bool vector = false;    // rows: rows_aligned (every row on a 16-byte boundary, at most 2 vectors
                          // a lane, or 8 with a whole warp); columns: 16-byte loads across the row
                          // (and across the partials); segments: 16-byte loads (input on a 16-byte
                          // boundary)
  bool vector_partials = false;
  std::size_t scratch_bytes = 0;
};

// The launcher's choice. Rows by their length in 16-byte vectors V: up to 2 a thread per row; up to
// 512 a group of lanes with about two vectors each (at most a warp); longer, a block per row, or
// several when the rows are too few to fill the GPU in one wave. Columns: chunks of rows enough to
// fill the GPU once. Segments: the balanced mapping.
template <class Op, class T>
Plan plan(const BatchedCall& c) {
  using Acc = typename Op::Acc;
  constexpr std::size_t kCount = Vec16<T>::kCount;
  const Shape& s = c.shape;
  const bool aligned = reinterpret_cast<std::uintptr_t>(c.input) % 16 == 0;
  Plan p;
  p.strategy = c.strategy;
  if (s.layout == Layout::rows) {
    const std::size_t resident = resident_blocks<kBlock, rows_by_blocks<Op, T>>();
    const std::size_t V = red::ceil_div(s.cols, kCount);
    if (p.strategy == Strategy::automatic)
      p.strategy = V <= 2 ? Strategy::thread_per_row : V <= 512 ? Strategy::group_per_row : Strategy::blocks_per_row;
    if (p.strategy == Strategy::group_per_row) p.lanes = std::max(2u, pow2_at_least(red::ceil_div(V, 2)));
    if (p.strategy == Strategy::thread_per_row || p.strategy == Strategy::group_per_row)
      p.vector = s.cols % kCount == 0 && s.stride % kCount == 0 && aligned && V <= (p.lanes == 32 ? 8 : 2) * p.lanes;
    if (p.strategy == Strategy::blocks_per_row || p.strategy == Strategy::block_per_row) {
      const std::size_t most = std::max<std::size_t>(1, V / (kBlock * kUnroll));  // a full trip each
      // Too few rows for the GPU: one wave of blocks, as many per row as fit.
      const std::size_t wanted = p.strategy == Strategy::block_per_row ? 1 : std::max<std::size_t>(1, resident / std::max<std::size_t>(s.rows, 1));
      p.split = static_cast<unsigned>(std::min(most, wanted));
      // Whole trips of the block's loads (kUnroll vectors a thread) in every block but a row's last.
      const std::size_t trip = kBlock * kUnroll * kCount;
      p.chunk = red::ceil_div(red::ceil_div(s.cols, p.split), trip) * trip;
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
      p.vector = s.cols % kCount == 0 && s.stride % kCount == 0 && aligned;
      const std::size_t V = s.cols / (p.vector ? kCount : 1);
      // At least 32 vectors across (512 contiguous bytes a warp) when the row has them; more when
      // the rows are too few to give every thread a full trip down them.
      std::size_t deep_wanted = 1;
      while (deep_wanted * 2 <= std::min<std::size_t>(kColumnBlock, s.rows / kColumnUnroll)) deep_wanted *= 2;
      p.across = static_cast<unsigned>(
          std::max<std::size_t>(1, std::min<std::size_t>(V, std::max<std::size_t>(32, kColumnBlock / deep_wanted))));
      const std::size_t deep = kColumnBlock / p.across, blocks_x = std::max<std::size_t>(1, red::ceil_div(V, p.across));
      const std::size_t resident = p.vector ? resident_blocks<kColumnBlock, columns_tiled<Op, T, true>, columns_tree_bytes<Acc>(kCount)>()
                                            : resident_blocks<kColumnBlock, columns_tiled<Op, T, false>, columns_tree_bytes<Acc>(1)>();
      const std::size_t wanted = std::max<std::size_t>(1, resident / blocks_x);         // one wave
      const std::size_t most = std::max<std::size_t>(1, s.rows / (deep * kColumnUnroll));  // a full trip each
      p.split = static_cast<unsigned>(std::min<std::size_t>({wanted, most, 65535}));
      p.chunk = std::max<std::size_t>(1, red::ceil_div(s.rows, p.split));
      p.split = static_cast<unsigned>(std::max<std::size_t>(1, red::ceil_div(s.rows, p.chunk)));
      if (p.split > 1) {
        p.scratch_bytes = std::size_t{p.split} * s.cols * sizeof(Acc);
        constexpr std::size_t kAccCount = 16 % sizeof(Acc) == 0 ? 16 / sizeof(Acc) : 0;
        p.vector_partials = kAccCount > 0 && s.cols % kAccCount == 0;
        const std::size_t V2 = s.cols / (p.vector_partials ? kAccCount : 1);
        p.across_partials = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(V2, 32)));
      }
    } else if (p.strategy != Strategy::columns_naive) {
      throw std::invalid_argument("11_batched: strategy " + name(c.strategy) + " does not reduce columns");
    }
  } else {
    if (p.strategy == Strategy::automatic) p.strategy = Strategy::segments_balanced;
    if (p.strategy != Strategy::segments_balanced && p.strategy != Strategy::segments_naive)
      throw std::invalid_argument("11_batched: strategy " + name(c.strategy) + " does not reduce segments");
    p.vector = aligned;
    if (p.strategy == Strategy::segments_naive) {
      // A group sized to the mean length, about 8 masked vectors a lane (2 without 16-byte loads).
      const std::size_t mean = s.segments ? s.n / s.segments : 0;
      p.lanes = pow2_at_least(red::ceil_div(mean, (p.vector ? 8 : 2) * kCount));
    } else if (s.segments > 0) {
      // Two waves of blocks, each a whole number of tiles.
      p.lanes = 32;
      const std::size_t tile = kSegmentTile;
      const unsigned occupancy = red::per_device<unsigned>([](int) {
        return blocks_per_sm<kBlock>(segments_balanced<Op, T, true>);
      });
      const std::size_t wanted = 2 * std::size_t{sm_count()} * occupancy;
      // The elements that belong to segments are known on the device only: size the ranges for
      // all n, plus the rounding of the ranges' origin (a range past the last segment's end is empty).
      const std::size_t n = s.n + kSegmentItems;
      p.chunk = red::ceil_div(red::ceil_div(n, wanted), tile) * tile;
      p.split = static_cast<unsigned>(red::ceil_div(n, p.chunk));
      if (s.n == 0) p.split = static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(s.segments, kBlock), 1024));
      p.scratch_bytes = std::size_t{p.split} * sizeof(Pieces<Acc>);
    }
  }
  return p;
}

template <class Op, class T, unsigned G>
void launch_rows_by_group(const BatchedCall& c, const Plan& p) {
  const Shape& s = c.shape;
  // One wave: at most the blocks the GPU holds at once.
  const auto blocks = [&](std::size_t resident) {
    return static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(s.rows, kBlock / G), resident));
  };
  if (p.vector) {  // two vectors a lane and 4 rows a trip, or a warp with 8 vectors a lane
    const std::size_t V = s.cols / Vec16<T>::kCount;
    if (V <= 2 * G)
      rows_aligned<Op, T, G, 2, 4><<<blocks(resident_blocks<kBlock, rows_aligned<Op, T, G, 2, 4>>()), kBlock, 0, c.stream>>>(
          static_cast<const T*>(c.input), s.rows, V, s.stride, c.output);
    else if constexpr (G == 32)
      rows_aligned<Op, T, G, 8, 1><<<blocks(resident_blocks<kBlock, rows_aligned<Op, T, G, 8, 1>>()), kBlock, 0, c.stream>>>(
          static_cast<const T*>(c.input), s.rows, V, s.stride, c.output);
    return;
  }
  rows_by_group<Op, T, G><<<blocks(resident_blocks<kBlock, rows_by_group<Op, T, G>>()), kBlock, 0, c.stream>>>(
      static_cast<const T*>(c.input), s.rows, s.cols, s.stride, c.output);
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
    case Strategy::columns_tiled: {
      const std::size_t tree = kColumnTree;
      const std::size_t deep = kColumnBlock / p.across, deep_partials = kColumnBlock / p.across_partials;
      return red::ceil_div(p.chunk, deep) + tree + (p.split > 1 ? red::ceil_div(p.split, deep_partials) + tree : 0);
    }
    case Strategy::columns_naive:
      return length;
    case Strategy::segments_naive:
      return red::ceil_div(length, p.lanes) + per_vector + warp_tree;
    default: {  // segments_balanced: a thread's share, the
                // threads' scan, the carry through the warps' totals of every tile of a block,
                // and the blocks a long segment spans (the finishing warp's tree)
      const std::size_t thread = kSegmentItems, tiles = red::ceil_div(p.chunk, kSegmentTile);
      const std::size_t blocks = red::ceil_div(length, p.chunk) + 1;
      return std::min(length, thread + warp_tree + tiles * kWarpsPerBlock + 2 + red::ceil_div(blocks, 32) + warp_tree + 1);
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
      const std::size_t kc = p.vector ? Vec16<T>::kCount : 1;
      const dim3 grid(static_cast<unsigned>(red::ceil_div(s.cols / kc, p.across)), p.split);
      const std::size_t shared = columns_tree_bytes<Acc>(kc);
      if (p.vector)
        columns_tiled<Op, T, true><<<grid, kColumnBlock, shared, c.stream>>>(in, s.rows, s.cols, s.stride, p.across, p.chunk,
                                                                             c.output, partials);
      else
        columns_tiled<Op, T, false><<<grid, kColumnBlock, shared, c.stream>>>(in, s.rows, s.cols, s.stride, p.across, p.chunk,
                                                                              c.output, partials);
      if (p.split > 1) {  // the [split, cols] partials reduced over their columns, in one chunk
        const std::size_t kc2 = p.vector_partials ? 16 / sizeof(Acc) : 1;
        const dim3 grid2(static_cast<unsigned>(red::ceil_div(s.cols / kc2, p.across_partials)), 1);
        const std::size_t shared2 = columns_tree_bytes<Acc>(kc2);
        if constexpr (16 % sizeof(Acc) == 0) {
          if (p.vector_partials) {
            columns_tiled<CombineOp<Op>, Acc, true><<<grid2, kColumnBlock, shared2, c.stream>>>(
                partials, p.split, s.cols, s.cols, p.across_partials, p.split, c.output, nullptr);
            break;
          }
        }
        columns_tiled<CombineOp<Op>, Acc, false><<<grid2, kColumnBlock, shared2, c.stream>>>(
            partials, p.split, s.cols, s.cols, p.across_partials, p.split, c.output, nullptr);
      }
      break;
    }
    case Strategy::columns_naive:
      columns_naive<Op, T><<<static_cast<unsigned>(red::ceil_div(s.cols, kBlock)), kBlock, 0, c.stream>>>(in, s.rows, s.cols,
                                                                                                  s.stride, c.output);
      break;
    case Strategy::segments_naive:
      with_lanes(p.lanes, [&](auto g) {
        constexpr unsigned G = decltype(g)::value;
        const unsigned blocks = static_cast<unsigned>(
            std::min<std::size_t>(red::ceil_div(s.segments, kBlock / G), std::size_t{sm_count()} * 8));
        if (p.vector)
          segments_by_group<Op, T, G, true><<<blocks, kBlock, 0, c.stream>>>(in, s.offsets, s.segments, s.n, c.output);
        else
          segments_by_group<Op, T, G, false><<<blocks, kBlock, 0, c.stream>>>(in, s.offsets, s.segments, s.n, c.output);
      });
      break;
    default: {  // segments_balanced
      auto* records = static_cast<Pieces<Acc>*>(c.scratch);
      if (p.vector)
        segments_balanced<Op, T, true><<<p.split, kBlock, 0, c.stream>>>(in, s.offsets, s.segments, p.chunk, c.output, records);
      else
        segments_balanced<Op, T, false><<<p.split, kBlock, 0, c.stream>>>(in, s.offsets, s.segments, p.chunk, c.output, records);
      if (p.split > 1)
        segments_balanced_finish<Op><<<static_cast<unsigned>(red::ceil_div(std::size_t{p.split} * 32, kBlock)), kBlock, 0,
                                       c.stream>>>(s.offsets, s.segments, p.chunk, kSegmentItems, p.split, records,
                                                   c.output);
    }
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch11
