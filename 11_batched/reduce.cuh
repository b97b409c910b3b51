// Chapter 11 - many reductions at once: rows, columns and irregular segments.
//
// Idea: the shape decides how work maps to threads. One reduction per row of a [B, L] matrix can
// be a thread's (L tiny), a group of lanes' (short rows), a block's (long rows) or several blocks'
// (a few very long rows), and only the mapping changes: every one reads the row with the same
// 16-byte loads (lane_accumulate, or rows_aligned where every row starts on a 16-byte boundary)
// and combines the lanes with cooperative groups' reduce, as in chapter 10. Columns are read across
// the row, a thread per 16 bytes of columns, each summing its columns down a chunk of rows; the
// last chunk of a strip of columns to finish combines the strip's partials. Segments are not mapped
// by segment at all: the elements are split among warps in ranges of equal cost (an element 1, a
// segment's end a fixed number) whatever the segments' lengths (load balancing), each warp
// marking where its window's segments end, its lanes closing the segments at the marks they meet
// and handing on the partials of those that cross a lane, window or warp.
// Cost: the input read once; rows: one kernel (blocks_per_row: the last block of a row adds its K
// partials, after a ticket); columns: one kernel (with several chunks of rows, K x L partials and
// a ticket per strip); segments: the offsets read about twice more (marking, then writing), a
// kernel over the elements and one over the warps' partials. Deterministic: every partial is
// combined in a fixed order that depends on the shape alone.
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
// should not push out of the caches what is read again (SegmentTuning::kStreamingLoads says why).
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

// Whether this block drew the last of `count` tickets at `ticket`, in every thread of the block:
// chapter 10's acq_rel ticket, taken by thread 0 once every thread of the block has stored what
// it leaves for the last block. The last block reads those stores after it, and sets the counter
// back to zero for the next call (every block of this call has taken its ticket by then).
__device__ inline bool last_to_arrive(unsigned* ticket, unsigned count) {
  __shared__ bool last;
  __syncthreads();  // the block's stores before thread 0's release
  if (threadIdx.x == 0) {
    last = ch10::take_ticket<ch10::Tuning>(ticket) == count - 1;
    if (last) *ticket = 0;
  }
  __syncthreads();
  return last;
}

// K blocks per row, block k taking columns [k * chunk, (k + 1) * chunk): with K = 1 (kSplit false)
// a block per row writes the result; with K > 1 each writes a partial, and the row's last block
// to finish adds the K in order, a warp of it (lane j takes partials j, j + 32, ..., then the
// warp's tree): one launch. The counters, one per row, are zero before the first call and after
// every call (Plan::zeroed_scratch_bytes).
template <class Op, class T, bool kSplit>
__global__ void __launch_bounds__(kBlock)
    rows_by_blocks(const T* in, std::size_t cols, std::size_t stride, std::size_t chunk, unsigned K, void* out,
                   typename Op::Acc* partials, unsigned* tickets) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kBlock / 32];
  const std::size_t r = blockIdx.x / K;
  const unsigned k = blockIdx.x % K;
  const std::size_t begin = std::min(cols, k * chunk), end = std::min(cols, begin + chunk);
  Acc acc = ch06::block_reduce<Op>(lane_accumulate<Op>(in + r * stride + begin, end - begin, begin, threadIdx.x, kBlock), per_warp);
  if constexpr (!kSplit) {
    if (threadIdx.x == 0) store_result<Op>(out, r, acc);
  } else {
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
    if (!last_to_arrive(tickets + r, K) || threadIdx.x >= 32) return;
    const unsigned lane = threadIdx.x;
    acc = Op::identity();
    for (unsigned j = lane; j < K; j += 32) acc = Op::combine(acc, partials[r * K + j]);
    acc = group_reduce<Op, 32>(acc);
    if (lane == 0) store_result<Op>(out, r, acc);
  }
}

// The GPU's global timer, in nanoseconds (the timeline experiments' stamps).
__device__ __forceinline__ unsigned long long global_timer() {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// ---- columns --------------------------------------------------------------------------------------------
//
// A block of kColumnBlock threads lays P threads across the row (P = min(vectors per row, 32): a
// warp reads 32 neighbouring 16-byte vectors, 512 contiguous bytes; 16 or 8 where strips that wide
// are too few to fill the GPU: column_tiles) and R = kColumnBlock / P rows deep. Thread (x, y) sums
// its columns down rows y, y + R, ... of the block's chunk of rows, then the R threads of each
// column meet: by shuffles within a warp, then pairwise in a fixed tree in shared memory across the
// warps. A chunk is not one run of rows but tiles of kTrip x R rows (a trip of every thread) dealt
// out in turn: chunk k takes tiles k, k + K, k + 2K, ..., so that the K blocks of a strip move down
// the matrix side by side (kInterleaved; against one run of rows a chunk,
// results/h200/experiments/grid_tuning.md). blockIdx.y is the chunk: with one chunk the block
// writes the results; else it writes partial k of each of its columns into a [chunks, cols] matrix,
// and the last of a strip's chunks to finish reduces the strip's partials over the chunks with the
// same code (CombineOp: the partials are already accumulators), in chunk order: one launch.
// kVector: 16-byte loads (kCount columns a thread), which needs every row on a 16-byte boundary and
// cols a multiple of kCount; else a column a thread.
constexpr unsigned kColumnBlock = 512;
constexpr unsigned kColumnTree = 9;  // log2(kColumnBlock): the levels of a column's meeting
static_assert(1u << kColumnTree == kColumnBlock, "kColumnTree is log2(kColumnBlock)");
// Rows each thread has in flight: with 16-byte loads 8 (128 bytes) for 4-byte elements and
// accumulators (f32 sum and max), 4 for 16-bit inputs and argmax, whose 8 accumulators a thread,
// or index pairs, take the registers that 8 loads would need; 8 with one element a load. A block
// of 512 threads at up to 64 registers leaves room for two on an SM, so that one block's meeting
// overlaps the other's loads (one block of 1024 threads would fill an SM alone). With one element
// a load, 8 in flight are only 32 bytes: that kernel is held to 32 registers, 4 blocks an SM, to
// keep twice the threads busy (argmax's index pairs would spill there: it stays at 2).
// 11_batched_grid_tuning (grid_tuning.cu) times 8 against 4 for f32
// (results/h200/experiments/grid_tuning.md).
template <bool kVector, class T, class Acc>
constexpr unsigned kColumnUnroll = !kVector || (sizeof(T) == 4 && sizeof(Acc) == 4) ? 8 : 4;
// Below kFewRows rows, 16-byte loads take 8 rows a trip (kFewRowsUnroll) for every type: with 4, a block
// of so few rows is under 32 threads deep and 32 vectors (512 bytes of each row) across, and every
// thread has one trip. In the H200's benchmark, 64 rows of 2^20 floats ran at 3101 GB/s with 4
// (results/h200/experiments/11_columns_trip4_bench.csv), against the 8 of results/h200/bench.csv;
// from 128 rows on, the two plan the same blocks.
constexpr std::size_t kFewRows = 128;
constexpr unsigned kFewRowsUnroll = 8;

template <class Op>
struct CombineOp {  // Op over its own accumulators: the pass over the chunks' partials
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

// The partials are read in 16-byte vectors where the input was and an accumulator divides 16 bytes.
template <class Op, bool kVector>
constexpr bool kVectorPartials = kVector && 16 % sizeof(typename Op::Acc) == 0;

// Where a columns call's time goes, for 11_batched_column_timeline (column_timeline.cu): with
// kTimeline, thread 0 of each block of columns_tiled writes the GPU's global timer (ns) at these
// points into column_timeline[blockIdx.y x gridDim.x + blockIdx.x] (a device array the experiment
// sets; none: nothing is written). The lesson's kernels compile every stamp out.
struct ColumnTimeline {
  enum Point : unsigned {
    entry,       // the block has begun
    loads_done,  // thread 0's last trip has been added (its share of the strip is read)
    met,         // the block's columns have met (the tree is done: every thread's loads are in)
    ticket,      // the block has its ticket (chunked strips), or has written its results
    finished,    // the strip's last block has combined the partials and written the results
  };
  unsigned long long at[5];
  unsigned sm;    // the SM the block ran on
  unsigned last;  // 1: this block combined its strip's partials
};
static __device__ ColumnTimeline* column_timeline = nullptr;
template <bool kTimeline>
__device__ __forceinline__ void mark_column_time(ColumnTimeline::Point point) {
  if constexpr (kTimeline) {
    if (threadIdx.x != 0 || column_timeline == nullptr) return;
    column_timeline[std::size_t{blockIdx.y} * gridDim.x + blockIdx.x].at[point] = global_timer();
  }
}

// The block's strip of a [rows, vectors x kCount] matrix (row stride `stride` elements): vectors
// v0 to v0 + P - 1 across, rows [first, last) down, in tiles of kTrip x R rows (a trip of every
// thread): each tile, or with tile_step K the first and then every K-th (the tiles between are
// other blocks'). On return, the threads with y == 0 hold their columns' results in acc. Starts
// and ends with the shared tree free.
template <class Op, class T, bool kVector, unsigned kTrip = kColumnUnroll<kVector, T, typename Op::Acc>,
          bool kTimeline = false>
__device__ void column_strip(const T* in, std::size_t first, std::size_t last, std::size_t vectors, std::size_t stride,
                             unsigned P, std::size_t v0, typename Op::Acc (&acc)[kVector ? Vec16<T>::kCount : 1],
                             typename Op::Acc* tree, std::size_t tile_step = 1) {
  using Acc = typename Op::Acc;
  constexpr unsigned kCount = kVector ? Vec16<T>::kCount : 1;
  const unsigned R = kColumnBlock / P;
  const unsigned x = threadIdx.x % P, y = threadIdx.x / P;
  const std::size_t v = v0 + x;
  const bool active = y < R && v < vectors;
#pragma unroll
  for (unsigned j = 0; j < kCount; ++j) acc[j] = Op::identity();
  if (active) {
    // Trips of kTrip rows, every load of a trip issued before the first add; then one last
    // trip with the rows past the chunk left out, so that no row is read on its own (a chunk's
    // few leftover rows one after another would cost a memory latency each).
    const auto trip = [&](std::size_t r, auto guarded) {
      Vec16<T> x4[kTrip];
      T x1[kTrip];
#pragma unroll
      for (unsigned u = 0; u < kTrip; ++u) {
        if (guarded && r + u * R >= last) continue;
        if constexpr (kVector)
          x4[u] = reinterpret_cast<const Vec16<T>*>(in + (r + u * R) * stride)[v];
        else
          x1[u] = in[(r + u * R) * stride + v];
      }
#pragma unroll
      for (unsigned u = 0; u < kTrip; ++u)
        if (!guarded || r + u * R < last)
#pragma unroll
          for (unsigned j = 0; j < kCount; ++j)
            acc[j] = Op::combine(acc[j], Op::load(kVector ? x4[u].e[j] : x1[u], r + u * R));
    };
    std::size_t r = first + y;
    const std::size_t step = std::size_t{kTrip} * R * tile_step;
    for (; r + (kTrip - 1) * R < last; r += step) trip(r, std::false_type{});
    if (r < last) trip(r, std::true_type{});
  }
  mark_column_time<kTimeline>(ColumnTimeline::loads_done);
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
    __syncthreads();
  }
}

// Columns [c_lo, c_hi) of the [chunks, cols] partials, reduced over the chunks by the whole block,
// up to kColumnBlock vectors across at a time.
template <class Op, bool kVector>
__device__ void finish_column_strip(const typename Op::Acc* partials, unsigned chunks, std::size_t cols, std::size_t c_lo,
                                    std::size_t c_hi, void* out, typename Op::Acc* tree) {
  using Acc = typename Op::Acc;
  constexpr unsigned kCount = kVector ? Vec16<Acc>::kCount : 1;
  for (std::size_t c0 = c_lo; c0 < c_hi; c0 += std::size_t{kColumnBlock} * kCount) {
    const unsigned P = static_cast<unsigned>(std::min<std::size_t>((c_hi - c0 + kCount - 1) / kCount, kColumnBlock));
    Acc acc[kCount];
    column_strip<CombineOp<Op>, Acc, kVector>(partials, 0, chunks, cols / kCount, cols, P, c0 / kCount, acc, tree);
    if (threadIdx.x >= P) continue;
#pragma unroll
    for (unsigned j = 0; j < kCount; ++j)
      if (c0 + threadIdx.x * kCount + j < c_hi) store_result<Op>(out, c0 + threadIdx.x * kCount + j, acc[j]);
  }
}

// The scratch of a chunked column call or a split row call begins with a counter per strip or
// row (then the partials, 256 bytes on).
inline std::size_t tickets_bytes(std::size_t count) { return red::ceil_div(count * sizeof(unsigned), 256) * 256; }

// Blocks of the columns kernel an SM holds (its register cap: kColumnUnroll says why).
template <class T, class Acc, bool kVector>
constexpr unsigned kColumnMinBlocks = kVector || sizeof(Acc) > 4 ? 2 : 4;
// chunk_rows: the rows of a chunk that is one run of rows (kInterleaved false, the grid
// experiment's alternative); kMinBlocks other than the lesson's, its other alternatives; kTimeline:
// the stamps of ColumnTimeline, for the timeline experiment.
template <class Op, class T, bool kVector, unsigned kTrip = kColumnUnroll<kVector, T, typename Op::Acc>,
          bool kInterleaved = true, unsigned kMinBlocks = kColumnMinBlocks<T, typename Op::Acc, kVector>,
          bool kTimeline = false>
__global__ void __launch_bounds__(kColumnBlock, kMinBlocks)
    columns_tiled(const T* in, std::size_t rows, std::size_t cols, std::size_t stride, unsigned across,
                  std::size_t chunk_rows, void* out, unsigned* tickets, typename Op::Acc* partials) {
  using Acc = typename Op::Acc;
  constexpr unsigned kCount = kVector ? Vec16<T>::kCount : 1;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Acc* tree = reinterpret_cast<Acc*>(shared_bytes);
  const unsigned P = across;
  const std::size_t vectors = cols / kCount, v0 = std::size_t{blockIdx.x} * P;
  Acc acc[kCount];
  mark_column_time<kTimeline>(ColumnTimeline::entry);
  if constexpr (kTimeline) {
    if (threadIdx.x == 0 && column_timeline != nullptr)
      asm volatile("mov.u32 %0, %%smid;" : "=r"(column_timeline[std::size_t{blockIdx.y} * gridDim.x + blockIdx.x].sm));
  }
  if constexpr (kInterleaved) {
    const std::size_t tile = std::size_t{kTrip} * (kColumnBlock / P);
    column_strip<Op, T, kVector, kTrip, kTimeline>(in, std::size_t{blockIdx.y} * tile, rows, vectors, stride, P, v0, acc,
                                                   tree, gridDim.y);
  } else {
    const std::size_t first = std::size_t{blockIdx.y} * chunk_rows, last = std::min(rows, first + chunk_rows);
    column_strip<Op, T, kVector, kTrip, kTimeline>(in, first, last, vectors, stride, P, v0, acc, tree);
  }
  mark_column_time<kTimeline>(ColumnTimeline::met);
  const std::size_t v = v0 + threadIdx.x;  // for the threads with y == 0
  const bool holds = threadIdx.x < P && v < vectors;
  if (gridDim.y == 1) {
    if (holds)
#pragma unroll
      for (unsigned j = 0; j < kCount; ++j) store_result<Op>(out, v * kCount + j, acc[j]);
    mark_column_time<kTimeline>(ColumnTimeline::ticket);
    return;
  }
  if (holds)
#pragma unroll
    for (unsigned j = 0; j < kCount; ++j) partials[std::size_t{blockIdx.y} * cols + v * kCount + j] = acc[j];
  const bool last = last_to_arrive(tickets + blockIdx.x, gridDim.y);
  mark_column_time<kTimeline>(ColumnTimeline::ticket);
  if (!last) return;
  const std::size_t c_lo = v0 * kCount, c_hi = std::min(cols, (v0 + P) * kCount);
  finish_column_strip<Op, kVectorPartials<Op, kVector>>(partials, gridDim.y, cols, c_lo, c_hi, out, tree);
  mark_column_time<kTimeline>(ColumnTimeline::finished);
  if constexpr (kTimeline) {
    if (threadIdx.x == 0 && column_timeline != nullptr)
      column_timeline[std::size_t{blockIdx.y} * gridDim.x + blockIdx.x].last = 1;
  }
}

// The baseline: a thread per column walks down every row, one element at a time (also the
// launcher's choice for a few rows of very many columns, where it fills the GPU: plan, below).
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
// offsets[segments] are cut into ranges of equal cost, one per warp (warp_cost_bounds), so every
// warp has about the same work whatever the lengths; a warp reads its range in windows of 32 lanes
// x kItems, lane l taking the window's kItems consecutive elements from l * kItems. The warps never
// wait for each other. For each window the warp marks, in shared memory of its own, where the
// window's segments end (one bit per element), reading the offsets in order, 32 at a time and a
// batch ahead. Each lane walks its elements and, at every mark, puts its partial aside and starts a
// new one. A segmented scan over the lanes gives each lane what the lanes before it hold of the
// segment it closes first, and then a lane per segment closed in the window writes its result: the
// partial put aside where the segment ends, after the scan's share if it began in an earlier lane.
// A segment still open at the window's end is carried on: in a window with no end at all each lane
// just adds its elements to a partial of its own, and those are folded into the carry at the next
// window that has one. A segment that began in an earlier warp's range is finished by a last kernel
// over the warps' partials. Every partial is combined in an order fixed by the offsets (the
// result's bits depend on the shape only).
//
// Which window closes a segment: the one holding its last element. A window [w0, w1) owns the
// ends e with w0 < e <= w1; the window that begins at offsets[0] also owns the ends equal to it
// (empty segments at the very start). An empty segment gets its identity in the window that owns
// its end.
constexpr unsigned kWarpsPerBlock = kBlock / 32;
constexpr std::size_t kNoSegment = ~std::size_t{0};

// The balanced kernel's choices; 11_batched_segment_tuning (segment_tuning.cu) changes one at a time
// and times them on the benchmark's segment shapes (results/h200/experiments/segment_tuning.md).
struct SegmentTuning {
  static constexpr unsigned kItems = 16;        // a lane's consecutive elements in a window: 4 16-byte
                                                // loads of f32 (16-bit inputs: SegmentTuning16)
  static constexpr bool kDoubleBuffer = false;  // the next window's loads go into a second array at the
                                                // window's start (true), or into the same one once the
                                                // walk has used it (false: 16 registers fewer)
  static constexpr unsigned kMinBlocks = 4;     // blocks of 256 threads an SM holds: 64 registers
  static constexpr bool kStreamingLoads = true;  // the elements read evict-first: each is read once,
                                                 // while the offsets are read again (the ends, then
                                                 // the writing pass) and should stay in L1 and L2
                                                 // (the staged copies: in L2; they skip L1)
  static constexpr unsigned kWaves = 1;         // ranges for one wave of blocks (more waves: shorter
                                                // ranges, which the GPU hands out as SMs free up)
  static constexpr unsigned kSegmentCost = 32;  // what a segment's end costs a warp, in elements: the
                                                // ranges hold equal elements + kSegmentCost x ends
                                                // (0: equal elements). A window dense with ends takes
                                                // far longer than one inside a long segment
  static constexpr bool kEarlyFinish = true;    // the finishing kernel launched before the first
                                                // ends, waiting for it inside (sm_90+): its launch
                                                // overlaps the first's last warps
  static constexpr bool kEarlyProbe = true;     // the cost search's first probes loaded with offsets[0]
                                                // and offsets[segments], one trip to memory before
                                                // the others (false: once those have come)
  static constexpr bool kGuessProbe = true;     // with those, probes around where the bound would
                                                // lie if every segment cost the same
                                                // (GuessedProbes), so that where the bound lies among
                                                // them one more step of the search ends it (in a
                                                // model of the search, 2 trips to memory in all
                                                // instead of 5 for 2^21 segments of uniform
                                                // lengths); where it misses, the usual first
                                                // step's probes, loaded in the same trip, take over
  static constexpr bool kStagedLoads = true;    // a window's elements copied into shared memory
                                                // (cp.async), each copy 512 contiguous bytes a warp,
                                                // then read from there by the lanes (StagedWindow);
                                                // false: each lane loads its own 16 into registers
  static constexpr bool kTimeline = false;      // the timer read at points of each warp's range
                                                // (SegmentTimeline): for 11_batched_segment_timeline only
  static constexpr bool kPreloadBefore = true;  // the finishing kernel loads the record of the range
                                                // before a head's with the head's (one trip to
                                                // memory where the segment began there); false: the
                                                // head's record, then the tails (two trips)
  static constexpr bool kSharedBounds = true;   // each warp searches its range's first bound alone and
                                                // takes its last from the next warp of its block
                                                // (half the search's probes, a barrier); false: a
                                                // warp searches both
};

// 16-bit inputs: the same elements are half the bytes, and the warp's fixed work a window (the
// marks, the scan, the writing pass) is then spread over half the bytes. 32 elements a lane make a
// window the bytes of an f32 one, in half as many windows. They are loaded by each lane into its
// registers: copied into shared memory, the window and its 32 x 32 closed partials would take a
// block of 8 warps past the 48 KB of static shared memory. 16 registers more than 4 blocks an SM
// allow leave 3.
struct SegmentTuning16 : SegmentTuning {
  static constexpr unsigned kItems = 32;
  static constexpr bool kStagedLoads = false;
  static constexpr unsigned kMinBlocks = 3;
};
template <class T>
using SegmentPolicy = std::conditional_t<sizeof(T) == 2, SegmentTuning16, SegmentTuning>;

// Where the balanced kernels' time goes, for 11_batched_segment_timeline (segment_timeline.cu): with
// Policy::kTimeline, lane 0 of each warp writes the GPU's global timer (ns) at five points of its
// range into segment_timeline[range] (a device array the experiment sets; none: nothing is
// written), and the finishing warp of range r two more. The lesson's policy compiles every stamp out.
struct SegmentTimeline {
  enum Point : unsigned {
    entry,                // the warp has begun
    bounds,               // the cost search has found the range's bounds
    first_segment,        // the first segment's end is among the batches: the walk can begin
    first_window,         // the range's first window is done
    last_window,          // all of its windows are done
    finish_visible,       // the finishing warp of this range sees every range's record
    finish_done,          // ... and has written its segment (when the range had a head)
  };
  unsigned long long at[7];
  unsigned sm;       // the SM the warp ran on
  unsigned windows;  // the range's windows
  unsigned long long ends;  // the segment ends it marked
};
static __device__ SegmentTimeline* segment_timeline = nullptr;
template <bool kTimeline>
__device__ __forceinline__ void mark_time(std::size_t range, SegmentTimeline::Point point) {
  if constexpr (kTimeline) {
    if (threadIdx.x % 32 != 0 || segment_timeline == nullptr) return;
    segment_timeline[range].at[point] = global_timer();
  }
}

// What a warp leaves for whoever finishes its first and last segments.
template <class Acc>
struct Pieces {
  std::size_t head;        // a segment that began before the warp's range and ends in it, or kNoSegment
  std::size_t head_begin;  // its first element (offsets[head]: the finishing kernel need not read it)
  Acc head_acc;            // its elements in the range
  std::size_t tail;  // the segment still open at the range's end if it has elements in it, or kNoSegment
  Acc tail_acc;      // its elements in the range
};

// A segment's result. The balanced kernels index an argmax by its position in the input; the
// result is its position in the segment, which begins at `begin`.
template <class Op>
__device__ void store_segment(void* out, std::size_t s, std::size_t begin, typename Op::Acc a) {
  if constexpr (Op::op == red::Op::argmax)
    if (a.index != red::ArgMax<float>::kNoIndex) a.index -= static_cast<long long>(begin);
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

// Where the warps' ranges begin: along the merge of the elements (cost 1 each) and the segments'
// ends (cost c each, the end of segment s coming right after its last element), range w takes the
// costs [w x step, (w + 1) x step). A range's bound at cost t is (i, j): j the first segment whose
// end's cost is past t, and i = t - c x j elements from the origin, but no further than segment
// j's end (the cost t then falls on that end). The warp finds N bounds at once, 32 probes of each
// a step, narrowing 31-fold (as warp_segment_after); every lane gets each bound's j and the end of
// that segment (`last` for j = segments), from the probes' own loads.
template <unsigned N>
struct CostBounds {
  std::size_t j[N];
  std::size_t end[N];
};
// The search's first step probes the same segments for every bound and in every warp:
// first_probe(segments) says which one this lane probes. With have_first_end, `first_end` is the
// end the caller already loaded there, together with offsets[0] and offsets[segments]
// (SegmentTuning::kEarlyProbe), so that the search makes one trip to memory fewer after those.
__device__ inline std::size_t first_probe(std::size_t segments) {
  return std::min<std::size_t>(std::size_t{threadIdx.x % 32} * ((segments + 30) / 31), segments);
}
// SegmentTuning::kGuessProbe: for bound q, lane l probes segment c[q] (nondecreasing in l, at most
// `segments`), loaded before the search as e[q] = offsets[c[q] + 1] (anything where c[q] ==
// segments). Uniform lengths put a bound within a few hundred segments of the guess for 2^21
// segments; the heavy tail's big segment moves most bounds far from it, and those searches take
// the usual first step instead, whose probes were loaded with the guess's.
template <unsigned N>
struct GuessedProbes {
  std::size_t c[N];
  std::size_t e[N];
};
// guessed_probe: the segment this lane probes for the bound where range `range` begins: the guess,
// range x segments / ranges, from 16 spacings below it (lane 0) to 15 above (lane 31), within
// [0, segments]. The spacing is sqrt(segments) / 4, but at most 31, so that one more step of the
// search ends it where the probes bracket the bound. Doubles, not 64-bit integer division, which
// sm_90 does in software.
__device__ inline std::size_t guessed_probe(std::size_t range, std::size_t ranges, std::size_t segments) {
  const double spacing = std::max(1.0, std::min(31.0, floor(sqrt(static_cast<double>(segments)) / 4)));
  const double guess = floor(static_cast<double>(range) * (static_cast<double>(segments) / static_cast<double>(ranges)));
  const double c = guess + (static_cast<double>(threadIdx.x % 32) - 16) * spacing;
  return static_cast<std::size_t>(std::min(static_cast<double>(segments), std::max(0.0, c)));
}
template <unsigned N, bool kGuessed = false>
__device__ __forceinline__ CostBounds<N> warp_cost_bounds(const std::int64_t* offsets, std::size_t segments,
                                                          std::size_t last, std::size_t origin, std::size_t cost,
                                                          const std::size_t (&t)[N], bool have_first_end,
                                                          std::size_t first_end,
                                                          const GuessedProbes<N>* guessed = nullptr) {
  const unsigned lane = threadIdx.x % 32;
  std::size_t a[N];
  CostBounds<N> b;  // each answer in [a, b.j]
#pragma unroll
  for (unsigned q = 0; q < N; ++q) {
    a[q] = 0;
    b.j[q] = segments;
    b.end[q] = last;
  }
  [[maybe_unused]] bool preloaded[N];  // kGuessed: whether bound q's first step's probes are first_end
  if constexpr (kGuessed) {
#pragma unroll
    for (unsigned q = 0; q < N; ++q) preloaded[q] = have_first_end;
    // Where the guessed probes bracket the bound (lane k the first past it, k > 0, or lane 0's
    // probe segment 0), the search goes on between lanes k - 1 and k. Where the bound lies below
    // lane 0's probe or above lane 31's, the guess is dropped, and the first step is the usual
    // one (first_end, loaded with the guess): a miss costs no trip to memory.
#pragma unroll
    for (unsigned q = 0; q < N; ++q) {
      const std::size_t c = guessed->c[q];
      const bool past = c >= segments || guessed->e[q] - origin + cost * (c + 1) > t[q];
      const unsigned ballot = __ballot_sync(0xffffffffu, past);
      const unsigned k = ballot ? __ffs(ballot) - 1 : 0;
      const std::size_t ck = __shfl_sync(0xffffffffu, c, k), ek = __shfl_sync(0xffffffffu, guessed->e[q], k);
      const std::size_t before = __shfl_sync(0xffffffffu, c, k == 0 ? 0 : k - 1);
      if (ballot != 0 && (k > 0 || ck == 0)) {
        a[q] = k > 0 ? before + 1 : 0;
        b.j[q] = ck;
        b.end[q] = ck >= segments ? last : ek;
        preloaded[q] = false;
      }
    }
  }
  for (bool first_step = have_first_end;; first_step = false) {
    bool searching = false;
#pragma unroll
    for (unsigned q = 0; q < N; ++q) searching |= a[q] < b.j[q];
    if (!searching) break;
    std::size_t c[N], e[N];
#pragma unroll
    for (unsigned q = 0; q < N; ++q) {  // every probe's load issued before any is used
      c[q] = std::min(a[q] + lane * ((b.j[q] - a[q] + 30) / 31), b.j[q]);
      bool first = first_step;
      if constexpr (kGuessed) first = first && preloaded[q];
      e[q] = c[q] >= segments ? last : first ? first_end : static_cast<std::size_t>(offsets[c[q] + 1]);
    }
#pragma unroll
    for (unsigned q = 0; q < N; ++q) {
      if (a[q] == b.j[q]) continue;  // found (the same for the whole warp)
      const bool past = c[q] >= segments || e[q] - origin + cost * (c[q] + 1) > t[q];
      const unsigned k = __ffs(__ballot_sync(0xffffffffu, past)) - 1;  // lane 31 probes b.j: always past
      const std::size_t ck = __shfl_sync(0xffffffffu, c[q], k), ek = __shfl_sync(0xffffffffu, e[q], k);
      const std::size_t before = __shfl_sync(0xffffffffu, c[q], k == 0 ? 0 : k - 1);
      a[q] = k == 0 ? ck : before + 1;
      b.j[q] = ck;
      b.end[q] = ek;
    }
  }
  return b;
}

// A window's partials of the segments its lanes close, by position: lane l's j-th element at
// [j][l], so that the lanes writing their j-th elements hit 32 different banks. An argmax keeps its
// value and the index's offset from the lane's first element (a closed segment's elements in a
// lane are fewer than kItems), so the array stays 5 bytes an element.
template <class Op, unsigned kItems, class Acc = typename Op::Acc>
struct ClosedPartials {
  Acc v[kItems][32];
  __device__ void put(unsigned j, unsigned lane, Acc a, std::size_t) { v[j][lane] = a; }
  __device__ Acc get(unsigned j, unsigned lane, std::size_t) const { return v[j][lane]; }
};
template <class Op, unsigned kItems, class W>
struct ClosedPartials<Op, kItems, red::ValueIndex<W>> {
  W value[kItems][32];
  unsigned char offset[kItems][32];
  __device__ void put(unsigned j, unsigned lane, red::ValueIndex<W> a, std::size_t g) {
    value[j][lane] = a.value;
    offset[j][lane] = static_cast<unsigned char>(a.index - static_cast<long long>(g));
  }
  __device__ red::ValueIndex<W> get(unsigned j, unsigned lane, std::size_t g) const {
    return {value[j][lane], static_cast<long long>(g + offset[j][lane])};
  }
};

// One warp's shared memory for a window.
template <class Op, unsigned kItems>
struct WindowMarks {
  unsigned ends[kItems];                 // bit p of the window: a segment ends with element w0 + p
  ClosedPartials<Op, kItems> partials;   // what each lane put aside at each mark
  typename Op::Acc before[32];           // lane l: the elements of lanes < l (and the carry) in its first segment
};

// A window's elements as cp.async copies them (SegmentTuning::kStagedLoads). The copies take
// 16-byte vectors l, 32 + l, ... of the window in lane l, so that each copy instruction of the warp
// reads 512 contiguous bytes: 4 lines of 128 bytes. A lane loading its own kVecs vectors makes each
// load instruction of the warp touch 16 lines, and the L1 passes one line's data a cycle, on the
// same pipe as the marks, the shuffles and the shared memory of the window's work. The walk wants
// lane l's vectors l x kVecs to l x kVecs + kVecs - 1. Vector v lies at slot v ^ ((v >> 3) & (kVecs - 1)):
// the 8 lanes of a quarter warp then hit 8 different 16-byte bank groups both when the copies
// write their vectors (v's low 3 bits vary) and when the lanes read theirs (bits 3 and up vary).
template <unsigned kVecs>
struct StagedWindow {
  static_assert(kVecs == 1 || kVecs == 2 || kVecs == 4 || kVecs == 8, "the swizzle below");
  uint4 slot[32 * kVecs];
  static __device__ unsigned of(unsigned v) { return v ^ ((v >> 3) & (kVecs - 1)); }
};
struct NoStagedWindow {};

// cp.async of 16 bytes global -> shared, cached in L2 only (.cg), marked evict-first there when
// kStreaming (each element is read once: SegmentTuning::kStreamingLoads), and the waits for it.
__device__ __forceinline__ std::uint64_t evict_first_policy() {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
template <bool kStreaming>
__device__ __forceinline__ void copy16_async(void* shared, const void* global, std::uint64_t policy) {
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  if constexpr (kStreaming)
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(to), "l"(global), "l"(policy)
                 : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global) : "memory");
}
__device__ __forceinline__ void copies_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void copies_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

// The cost of a range (warp_cost_bounds): the elements from offsets[0] rounded down to a lane's
// share `items`, plus `cost` for every segment's end, shared out among `ranges` warps.
__host__ __device__ inline std::size_t range_cost_step(std::size_t first, std::size_t last, std::size_t segments,
                                                       std::size_t items, std::size_t cost, std::size_t ranges) {
  const std::size_t total = last - first / items * items + cost * segments;
  return (total + ranges - 1) / ranges;
}

// A warp's range of elements, window by window: the segments it closes written (one that began in
// an earlier range left in records[range] instead, with the partial of the segment still open at
// the range's end). The ranges hold equal costs (warp_cost_bounds) from offsets[0] rounded down to
// a lane's share, their bounds rounded down to whole windows from there, so that every lane's
// loads are aligned and no two ranges share a window. A range past the last segment's end is empty. With no
// elements at all, every segment is empty and the warps write the identities.
template <class Op, class T, bool kAligned, class Policy = SegmentPolicy<T>>
__global__ void __launch_bounds__(kBlock, Policy::kMinBlocks)
    segments_balanced(const T* in, const std::int64_t* offsets, std::size_t segments, void* out,
                      Pieces<typename Op::Acc>* records) {
  using Acc = typename Op::Acc;
  using V = Vec16<T>;
  constexpr unsigned kItems = Policy::kItems, kWindow = 32 * kItems, kVecs = kItems * sizeof(T) / 16;
  constexpr unsigned kAll = 0xffffffffu;
  static_assert(32 % kItems == 0 || kItems == 32, "a lane's marks lie in one 32-bit word");
#if __CUDA_ARCH__ >= 900
  if constexpr (Policy::kEarlyFinish) cudaTriggerProgrammaticLaunchCompletion();
#endif
  static_assert(!(Policy::kStagedLoads && Policy::kDoubleBuffer), "staged loads keep one array");
  // Copies into shared memory need an input on a 16-byte boundary: an unaligned one keeps the
  // lanes' loads into registers, one window ahead.
  constexpr bool kStaged = Policy::kStagedLoads && kAligned;
  using Staged = std::conditional_t<kStaged, StagedWindow<kVecs>, NoStagedWindow>;
  __shared__ WindowMarks<Op, kItems> shared_marks[kWarpsPerBlock];
  __shared__ Staged shared_staged[kStaged ? kWarpsPerBlock : 1];
  const unsigned lane = threadIdx.x % 32;
  WindowMarks<Op, kItems>& marks = shared_marks[threadIdx.x / 32];
  Staged& staged = shared_staged[kStaged ? threadIdx.x / 32 : 0];
  const std::size_t range = std::size_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;  // this warp's
  mark_time<Policy::kTimeline>(range, SegmentTimeline::entry);
  const std::size_t probe = first_probe(segments);  // the cost search's first probe, loaded at once
  constexpr bool kGuess = Policy::kGuessProbe && Policy::kEarlyProbe;  // guessed probes are loaded early
  const std::size_t first_end =
      Policy::kEarlyProbe && probe < segments ? static_cast<std::size_t>(offsets[probe + 1]) : 0;
  // Or the guessed probes of this warp's first bound, and of its last where it searches that too.
  [[maybe_unused]] GuessedProbes<2> guessed{};
  if constexpr (kGuess) {
    const std::size_t ranges = std::size_t{gridDim.x} * kWarpsPerBlock;
    const bool searches_last = !Policy::kSharedBounds || threadIdx.x / 32 + 1 == kWarpsPerBlock;
#pragma unroll
    for (unsigned q = 0; q < 2; ++q) {
      guessed.c[q] = q == 0 || searches_last ? guessed_probe(range + q, ranges, segments) : segments;
      guessed.e[q] = guessed.c[q] < segments ? static_cast<std::size_t>(offsets[guessed.c[q] + 1]) : 0;
    }
  }
  const std::size_t first = static_cast<std::size_t>(offsets[0]), last = static_cast<std::size_t>(offsets[segments]);
  if (first == last) {
    for (std::size_t s = std::size_t{blockIdx.x} * kBlock + threadIdx.x; s < segments; s += std::size_t{gridDim.x} * kBlock)
      store_result<Op>(out, s, Op::identity());
    return;
  }
  const std::size_t origin = first / kItems * kItems, cost = Policy::kSegmentCost;
  const std::size_t step = range_cost_step(first, last, segments, kItems, cost, std::size_t{gridDim.x} * kWarpsPerBlock);
  const std::size_t t[2] = {range * step, (range + 1) * step};
  CostBounds<2> bounds;
  if constexpr (Policy::kSharedBounds) {
    // A range ends where the next begins: each warp searches its first bound only (the block's
    // last warp both of its own), and the warps of a block pass theirs on through shared memory.
    __shared__ std::size_t block_j[kWarpsPerBlock + 1], block_end[kWarpsPerBlock + 1];
    const unsigned w = threadIdx.x / 32;
    if (w + 1 < kWarpsPerBlock) {
      const std::size_t t1[1] = {t[0]};
      const GuessedProbes<1> guessed1{{guessed.c[0]}, {guessed.e[0]}};
      const CostBounds<1> b = warp_cost_bounds<1, kGuess>(offsets, segments, last, origin, cost, t1, Policy::kEarlyProbe,
                                                          first_end, &guessed1);
      if (lane == 0) block_j[w] = b.j[0], block_end[w] = b.end[0];
    } else {
      const CostBounds<2> b = warp_cost_bounds<2, kGuess>(offsets, segments, last, origin, cost, t, Policy::kEarlyProbe,
                                                          first_end, &guessed);
      if (lane == 0) block_j[w] = b.j[0], block_end[w] = b.end[0], block_j[w + 1] = b.j[1], block_end[w + 1] = b.end[1];
    }
    __syncthreads();
    bounds = {{block_j[w], block_j[w + 1]}, {block_end[w], block_end[w + 1]}};
  } else {
    bounds = warp_cost_bounds<2, kGuess>(offsets, segments, last, origin, cost, t, Policy::kEarlyProbe, first_end,
                                         &guessed);
  }
  mark_time<Policy::kTimeline>(range, SegmentTimeline::bounds);
  // The range's elements [lo, hi): the bounds rounded down to a whole window from the origin (so
  // that the ranges share no window, and every lane's loads are aligned), but for the last
  // element's end.
  const auto cut = [&](std::size_t t, std::size_t j, std::size_t end) {
    const std::size_t i = std::min(t - cost * j, end - origin);
    return origin + i == last ? last : origin + i / kWindow * kWindow;
  };
  const std::size_t lo = cut(range * step, bounds.j[0], bounds.end[0]);
  const std::size_t hi = cut((range + 1) * step, bounds.j[1], bounds.end[1]);
  if (lo >= hi) {
    if (lane == 0) records[range] = {kNoSegment, 0, Op::identity(), kNoSegment, Op::identity()};
    return;
  }
  // This lane's elements of the window at w0 (16-byte loads where they are all in the segments).
  const auto load = [&](std::size_t w0, T(&x)[kItems]) {
    const std::size_t g = w0 + std::size_t{lane} * kItems, w1 = std::min(hi, w0 + kWindow);
    if (kAligned && g >= first && g + kItems <= w1) {
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u) {
        const V v = load_vector<Policy::kStreamingLoads>(reinterpret_cast<const V*>(in + g) + u);
#pragma unroll
        for (unsigned j = 0; j < V::kCount; ++j) x[u * V::kCount + j] = v.e[j];
      }
    } else {
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j)
        if (g + j >= first && g + j < w1) x[j] = in[g + j];
    }
  };
  // Staged loads: a whole window inside the range's elements (every window but those holding the
  // first element and the last, where those are not on a window's bound) is copied into `staged`,
  // the others loaded as above when used.
  const auto staged_window = [&](std::size_t w0) { return w0 >= first && w0 + kWindow <= hi; };
  [[maybe_unused]] const std::uint64_t policy =
      kStaged && Policy::kStreamingLoads ? evict_first_policy() : 0;
  const auto stage = [&](std::size_t w0) {
    if constexpr (kStaged) {
      if (!staged_window(w0)) return;
      const uint4* from = reinterpret_cast<const uint4*>(in + w0);
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u)
        copy16_async<Policy::kStreamingLoads>(&staged.slot[Staged::of(u * 32 + lane)], from + u * 32 + lane, policy);
      copies_commit();
    }
  };
  // x := the window at w0, from `staged` once its copies have landed; every lane has read it
  // before the next window's copies are issued.
  const auto fetch = [&](std::size_t w0, T(&x)[kItems]) {
    if constexpr (kStaged) {
      if (!staged_window(w0)) {
        load(w0, x);
        return;
      }
      copies_wait_all();
      __syncwarp();
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u) {
        const uint4 w = staged.slot[Staged::of(lane * kVecs + u)];
        V v;
        memcpy(&v, &w, sizeof v);
#pragma unroll
        for (unsigned j = 0; j < V::kCount; ++j) x[u * V::kCount + j] = v.e[j];
      }
      __syncwarp();
    }
  };
  T xa[kItems] = {}, xb[Policy::kDoubleBuffer ? kItems : 1] = {};
  if constexpr (kStaged)
    stage(lo);  // in flight while the warp looks for its first segment
  else
    load(lo, xa);

  // The segments' ends, 32 at a time: lane i holds the end of segment base + i in the current
  // batch (a or b, b_current says which) and of base + 32 + i in the other (loaded a batch ahead
  // of its use), as loaded; past the last segment, a sentinel no window reaches. `cursor` is the
  // first segment whose end has not been marked yet.
  const auto load_end = [&](std::size_t s) {
    return s < segments ? static_cast<std::size_t>(offsets[s + 1]) : ~std::size_t{0};
  };
  // The cursor starts at the first segment whose end is past lo. The range that begins at the
  // first element also owns the ends there (empty segments at the very start), which no window's
  // (w0, w1] holds: from segment 0. Elsewhere it is j0, the bound's segment, or one of the segments
  // ending between lo and the bound (less than a window), just before j0: the two batches from
  // j0 - 32 on hold it, and their loads are the ones the windows need anyway. Where they do not
  // (more than 32 segments ending between lo and the bound, or more than 31 after j0 ending on lo:
  // runs of empty segments), a search finds it.
  const std::size_t j0 = bounds.j[0];
  std::size_t base = lo == first ? 0 : j0 >= 32 ? j0 - 32 : 0, cursor = 0;
  std::size_t end_a = load_end(base + lane), end_b = load_end(base + 32 + lane);
  bool b_current = false;  // whether batch b holds the segments from base on (then a holds base + 32 on)
  if (lo != first) {
    const unsigned past_a = __ballot_sync(kAll, end_a > lo), past_b = __ballot_sync(kAll, end_b > lo);
    if (((past_a & 1u) && base > 0) || (past_a | past_b) == 0) {
      cursor = warp_segment_after(offsets, segments, past_a ? 0 : base + 64, lo);
      base = cursor;
      end_a = load_end(base + lane);
      end_b = load_end(base + 32 + lane);
    } else {
      cursor = past_a ? base + __ffs(past_a) - 1 : base + 32 + __ffs(past_b) - 1;
      if (cursor - base >= 32) {  // batch a is used up: b is current, a loads the one after
        end_a = load_end(base + 64 + lane);
        base += 32;
        b_current = true;
      }
    }
  }
  if (lane * kItems % 32 == 0) marks.ends[lane * kItems / 32] = 0;
  [[maybe_unused]] const std::size_t first_cursor = cursor;
  mark_time<Policy::kTimeline>(range, SegmentTimeline::first_segment);

  Acc carry = Op::identity();  // the open segment's elements in the windows before, but for ...
  Acc own = Op::identity();    // ... this lane's elements in the windows since with no end
  bool own_open = false;       // whether there were such windows (else `own` is the identity)
  bool head_recorded = false;  // whether the range's first segment began in an earlier range

  // One window: x holds its elements; the next window's go into `next` (the same array when the
  // loads are single-buffered: then once the walk has used x).
  const auto window = [&](std::size_t w0, T(&x)[kItems], T(&next)[kItems]) {
    const std::size_t w1 = std::min(hi, w0 + kWindow);
    if (Policy::kDoubleBuffer && w1 < hi) load(w1, next);
    if constexpr (kStaged) {  // this window from shared memory; the next one's copies fly
      fetch(w0, x);
      if (w1 < hi) stage(w1);
    }
    // 1. Mark the ends the window owns: those at or before w1 not marked yet. The ends are sorted,
    // so the lanes whose ends are in form a run from the cursor on.
    const std::size_t closes_from = cursor;
    __syncwarp();  // the last window's marks have been read
    // Marks the ends of batch e in the window; whether the batch holds the first end past it.
    const auto mark_batch = [&](std::size_t e) {
      const bool in_window = e <= w1;
      if (in_window && lane >= cursor - base && e > w0) {  // an end at w0 closes an empty segment
        const unsigned p = static_cast<unsigned>(e - w0) - 1;
        atomicOr(&marks.ends[p / 32], 1u << (p % 32));
      }
      const unsigned in = static_cast<unsigned>(__popc(__ballot_sync(kAll, in_window)));
      cursor = base + in;
      return in < 32;
    };
    // The two batches take turns as the current one (b_current), so that the batch loaded ahead is
    // never copied: a copy would wait for its load at once.
    for (;;) {
      if (!b_current) {
        if (mark_batch(end_a)) break;
        end_a = load_end(base + 64 + lane);  // batch a used up: b is current, a loads the one after
        base += 32;
        b_current = true;
      }
      if (mark_batch(end_b)) break;
      end_b = load_end(base + 64 + lane);
      base += 32;
      b_current = false;
    }
    __syncwarp();
    const unsigned word = marks.ends[lane * kItems / 32];
    const unsigned bits = kItems == 32 ? word : (word >> (lane * kItems % 32)) & ((1u << (kItems % 32)) - 1);
    const std::size_t g = w0 + std::size_t{lane} * kItems;
    const bool full = g >= first && g + kItems <= w1;
    // The first and last lanes with elements of the segments take only those in [first, w1):
    // elements j_lo to j_hi - 1 (guarded); every other lane all of its elements, with no test.
    const auto each_element = [&](auto guarded, auto&& f) {
      unsigned j_lo = 0, j_hi = kItems;
      if constexpr (decltype(guarded)::value) {
        j_lo = first > g ? static_cast<unsigned>(std::min<std::size_t>(first - g, kItems)) : 0;
        j_hi = w1 > g ? static_cast<unsigned>(std::min<std::size_t>(w1 - g, kItems)) : 0;
      }
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j)
        if (!decltype(guarded)::value || (j >= j_lo && j < j_hi)) f(j);
    };
    // 2. Walk. With no end in the window, every lane adds its elements to its own partial.
    if (cursor == closes_from) {
      const auto add = [&](unsigned j) { own = Op::combine(own, Op::load(x[j], g + j)); };
      if (full)
        each_element(std::false_type{}, add);
      else
        each_element(std::true_type{}, add);
      if (!Policy::kDoubleBuffer && !kStaged && w1 < hi) load(w1, next);
      own_open = true;
      return;
    }
    if constexpr (kItems < 32) __syncwarp();  // the lanes sharing a word have read it
    if (lane * kItems % 32 == 0) marks.ends[lane * kItems / 32] = 0;  // for the next window
    // The lanes' own partials belong to the segment open before the window: into the carry.
    if (own_open) {  // the warp's windows since the last fold had no end
      carry = Op::combine(carry, group_reduce<Op, 32>(own));
      own = Op::identity();
      own_open = false;
    }
    // At every marked end, the partial so far is put aside and a new one begins; `acc` ends as
    // the partial of the segment still open.
    Acc acc = Op::identity();
    const auto add_and_close = [&](unsigned j) {
      acc = Op::combine(acc, Op::load(x[j], g + j));
      if (bits >> j & 1u) {
        marks.partials.put(j, lane, acc, g);
        acc = Op::identity();
      }
    };
    if (full)
      each_element(std::false_type{}, add_and_close);
    else
      each_element(std::true_type{}, add_and_close);
    if (!Policy::kDoubleBuffer && !kStaged && w1 < hi)
      load(w1, next);  // x is free: the loads fly during the rest
    // 3. A segmented scan over the lanes: a lane's open partial, combined with those of the lanes
    // before it back to the last lane that closed a segment. A lane's `before` is what the lanes
    // before it hold of the segment it closes first; before the window's first closing lane, the
    // carry too.
    const unsigned closing = __ballot_sync(kAll, bits != 0);
    const unsigned closed_upto = closing & (kAll >> (31 - lane));  // lanes 0..lane that closed
    const int seg_start = closed_upto ? 31 - __clz(closed_upto) : -1;
    Acc value = acc;
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
      const Acc other = shfl_up(value, d);
      if (static_cast<int>(lane) - static_cast<int>(d) >= seg_start && lane >= d) value = Op::combine(other, value);
    }
    const Acc value_before = shfl_up(value, 1);
    const bool closed_before = (closing & ((1u << lane) - 1)) != 0;
    marks.before[lane] = closed_before ? value_before : lane == 0 ? carry : Op::combine(carry, value_before);
    const Acc window_total = shfl_down(value, 31 - lane);  // lane 31's, in every lane
    carry = closing ? window_total : Op::combine(carry, window_total);  // the segment open at the window's end
    __syncwarp();
    // 4. A lane per segment closed in the window writes its result: the partial put aside at its
    // end, after the lanes' share if it began before the lane that closes it. The range's first
    // segment, if it began in an earlier range, is left in the record for the last kernel. The
    // ends come from the current batch where it holds them, by shuffles (the batch loaded ahead
    // is not touched); those before it (where the window used a batch up) are read again, from
    // L1 or L2.
    const auto write_closed = [&](std::size_t current) {
      for (std::size_t s0 = closes_from; s0 < cursor; s0 += 32) {  // trips of the whole warp
        const std::size_t s = s0 + lane;
        const std::size_t e_held = __shfl_sync(kAll, current, static_cast<unsigned>(s - base) % 32);
        const std::size_t b_held = __shfl_sync(kAll, current, static_cast<unsigned>(s - base - 1) % 32);
        if (s >= cursor) continue;
        const std::size_t e = s >= base ? e_held : static_cast<std::size_t>(offsets[s + 1]);
        const std::size_t b = s > base ? b_held : static_cast<std::size_t>(offsets[s]);
        if (b == e) {
          store_result<Op>(out, s, Op::identity());
          continue;
        }
        const unsigned p = static_cast<unsigned>(e - w0) - 1, l = p / kItems, j = p % kItems;
        const std::size_t gl = w0 + std::size_t{l} * kItems;
        Acc total = marks.partials.get(j, l, gl);
        if (b < gl) total = Op::combine(marks.before[l], total);
        if (b < lo) {
          records[range].head = s;
          records[range].head_begin = b;
          records[range].head_acc = total;
          head_recorded = true;
        } else {
          store_segment<Op>(out, s, b, total);
        }
      }
    };
    if (b_current)
      write_closed(end_b);
    else
      write_closed(end_a);
  };
  if constexpr (Policy::kDoubleBuffer) {
    for (std::size_t w0 = lo;;) {  // two windows a trip, so that the two arrays swap roles without copies
      window(w0, xa, xb);
      if (w0 == lo) mark_time<Policy::kTimeline>(range, SegmentTimeline::first_window);
      if ((w0 += kWindow) >= hi) break;
      window(w0, xb, xa);
      if ((w0 += kWindow) >= hi) break;
    }
  } else {
    for (std::size_t w0 = lo; w0 < hi; w0 += kWindow) {
      window(w0, xa, xa);
      if (w0 == lo) mark_time<Policy::kTimeline>(range, SegmentTimeline::first_window);
    }
  }
  mark_time<Policy::kTimeline>(range, SegmentTimeline::last_window);
  if constexpr (Policy::kTimeline) {
    if (lane == 0 && segment_timeline != nullptr) {
      asm volatile("mov.u32 %0, %%smid;" : "=r"(segment_timeline[range].sm));
      segment_timeline[range].windows = static_cast<unsigned>((hi - lo + kWindow - 1) / kWindow);
      segment_timeline[range].ends = cursor - first_cursor;
    }
  }
  // The record: whether there was a head (the lane that closed it knows), and the tail, the
  // segment open after the range's last element if some of its elements are in the range (the
  // carry and the lanes' own partials hold them). cursor is the first segment whose end is past
  // the range.
  const bool any_head = __any_sync(kAll, head_recorded);
  const Acc tail_acc = Op::combine(carry, group_reduce<Op, 32>(own));
  if (lane == 0) {
    if (!any_head) {  // the whole head written: the finishing kernel loads it before it looks
      records[range].head = kNoSegment;
      records[range].head_begin = 0;
      records[range].head_acc = Op::identity();
    }
    const bool tail = cursor < segments && static_cast<std::size_t>(offsets[cursor]) < hi;
    records[range].tail = tail ? cursor : kNoSegment;
    records[range].tail_acc = tail ? tail_acc : Op::identity();
  }
}

// The segments that began in an earlier warp's range: a warp per range that closed one (its head)
// combines the tails of the ranges from the one where the segment began, in order, then the head.
// `items`: a lane's elements in a window (the ranges' origin is offsets[0] rounded down to it).
template <class Op, bool kTimeline = false, bool kPreload = true>
__global__ void __launch_bounds__(kBlock)
    segments_balanced_finish(const std::int64_t* offsets, std::size_t segments, unsigned items, unsigned cost,
                             std::size_t ranges, const Pieces<typename Op::Acc>* records, void* out) {
  using Acc = typename Op::Acc;
  // What depends on the input only is read before the wait: it overlaps the first kernel's end.
  const std::size_t r = (std::size_t{blockIdx.x} * kBlock + threadIdx.x) / 32;
  const std::size_t first = static_cast<std::size_t>(offsets[0]), last = static_cast<std::size_t>(offsets[segments]);
  const std::size_t origin = first / items * items;
  const std::size_t step = range_cost_step(first, last, segments, items, cost, ranges);
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();  // launched early: the records are complete and visible
#endif
  if (r >= ranges || first == last) return;  // whole warps leave together
  mark_time<kTimeline>(r, SegmentTimeline::finish_visible);
  const std::size_t s = records[r].head, begin = records[r].head_begin;
  const Acc head_acc = records[r].head_acc;
  // The record of the range before, loaded with the range's own: the segment most often began
  // there, and then its tail needs no second trip to memory. (No warp leaves before all five
  // loads are issued: a warp with no head goes on and writes nothing.)
  const std::size_t tail_before = kPreload && r > 0 ? records[r - 1].tail : kNoSegment;
  const Acc acc_before = kPreload && r > 0 ? records[r - 1].tail_acc : Op::identity();
  const bool head = s != kNoSegment;
  if (!kPreload && !head) return;
  const unsigned lane = threadIdx.x % 32;
  // The range where s began, or one a little before it: the one whose costs hold its first
  // element's, begin - origin elements and s ends (warp_cost_bounds), before the rounding of the
  // bounds moved them down. The ranges between have other tails. A segment can span thousands of
  // ranges (the heavy tail's largest): the records are read 16 a lane at once, both fields
  // whatever the tail, rather than a tail and then its partial, one after the other.
  const std::size_t from = (begin - origin + std::size_t{cost} * s) / step;
  constexpr unsigned kBatch = 16;
  Acc acc = Op::identity();
  if (kPreload && (!head || from + 1 >= r)) {  // only the range before can hold a tail of s: as lane 0 below
    if (lane == 0 && head && from < r && tail_before == s) acc = Op::combine(acc, acc_before);
  } else {
    for (std::size_t k0 = from + lane; k0 < r; k0 += 32 * kBatch) {
      std::size_t tail[kBatch];
      Acc part[kBatch];
#pragma unroll
      for (unsigned u = 0; u < kBatch; ++u) {
        const std::size_t k = k0 + 32 * u;
        tail[u] = k < r ? records[k].tail : kNoSegment;
        part[u] = k < r ? records[k].tail_acc : Op::identity();
      }
#pragma unroll
      for (unsigned u = 0; u < kBatch; ++u)  // in the order of k, as the lane met them
        if (tail[u] == s) acc = Op::combine(acc, part[u]);
    }
  }
  acc = group_reduce<Op, 32>(acc);
  if (!head) return;
  if (lane == 0) store_segment<Op>(out, s, begin, Op::combine(acc, head_acc));
  mark_time<kTimeline>(r, SegmentTimeline::finish_done);
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

// The counters at the scratch's start, the same bytes for every shape: one a row of blocks_per_row
// or a strip of chunked columns, and a call has more than one chunk a row or strip only where its
// rows or strips are fewer than the blocks the GPU holds at once, at most 32 an SM. Every plan
// that uses scratch puts its partials after them, so a scratch zeroed once serves calls of any
// shape (one at a time): no call's partials ever lie where another shape's counters are.
constexpr std::size_t kMaxBlocksPerSm = 32;
inline std::size_t counter_capacity() { return std::size_t{sm_count()} * kMaxBlocksPerSm; }
inline std::size_t counter_bytes() { return tickets_bytes(counter_capacity()); }

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
                          // segments_balanced: blocks (of kWarpsPerBlock ranges)
  std::size_t chunk = 0;  // blocks_per_row: columns per block; columns: rows per chunk;
                          // segments_balanced: elements per warp
  unsigned across = 1;    // columns: threads across a row (and across the partials, in the last
                          // block of a strip: across_partials)
  unsigned across_partials = 1;
  unsigned trip = 1;      // columns: rows a thread loads at once (kColumnUnroll, or kFewRowsUnroll)
  bool vector = false;    // rows: rows_aligned (every row on a 16-byte boundary, at most 2 vectors
                          // a lane, or 8 with a whole warp); columns: 16-byte loads across the row
                          // (and across the partials); segments: 16-byte loads (input on a 16-byte
                          // boundary)
  std::size_t scratch_bytes = 0;
  std::size_t zeroed_scratch_bytes = 0;  // every plan with scratch: the counters at its start
                                         // (counter_bytes, the same for every shape), zero before
                                         // the first call and after every call (the caller zeroes
                                         // them once); the partials follow them
};

// The balanced mapping's sizes (Policy: the kernel's choices): one wave of blocks, since every
// warp has the same work, and ranges of at least a window's cost. p.split blocks; p.chunk, the
// most elements a range can hold.
template <class Op, class T, class Policy = SegmentPolicy<T>>
void plan_balanced(Plan& p, const Shape& s) {
  p.lanes = 32;
  const unsigned occupancy = red::per_device<unsigned>([](int) {
    return blocks_per_sm<kBlock>(segments_balanced<Op, T, true, Policy>);
  });
  const std::size_t warps = std::size_t{sm_count()} * occupancy * kWarpsPerBlock * Policy::kWaves;
  // The elements that belong to segments are known on the device only (the kernels share out
  // their cost exactly, range_cost_step): size the grid for all n, plus the rounding of the
  // ranges' origin.
  constexpr std::size_t kWindow = 32 * Policy::kItems;
  const std::size_t total = s.n + Policy::kItems + std::size_t{Policy::kSegmentCost} * s.segments;
  const std::size_t per_warp = red::ceil_div(red::ceil_div(total, warps), kWindow) * kWindow;
  p.split = static_cast<unsigned>(red::ceil_div(red::ceil_div(total, per_warp), kWarpsPerBlock));
  if (s.n == 0) p.split = static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(s.segments, kBlock), 1024));
  // A range's cost is at most the step; its elements at most that plus one end's cost (where it
  // begins on a segment's end) plus the rounding of its first bound (less than a window).
  p.chunk = red::ceil_div(total, std::size_t{p.split} * kWarpsPerBlock) + Policy::kSegmentCost + kWindow;
  p.zeroed_scratch_bytes = counter_bytes();  // not used here, and left zero for the shapes that count
  p.scratch_bytes = p.zeroed_scratch_bytes + std::size_t{p.split} * kWarpsPerBlock * sizeof(Pieces<typename Op::Acc>);
}

// The balanced mapping's two kernels, as plan_balanced<Op, T, Policy> sized them.
template <class Op, class T, class Policy = SegmentPolicy<T>>
void launch_balanced(const BatchedCall& c, const Plan& p) {
  const Shape& s = c.shape;
  const T* in = static_cast<const T*>(c.input);
  auto* records = reinterpret_cast<Pieces<typename Op::Acc>*>(static_cast<unsigned char*>(c.scratch) + p.zeroed_scratch_bytes);
  if (p.vector)
    segments_balanced<Op, T, true, Policy><<<p.split, kBlock, 0, c.stream>>>(in, s.offsets, s.segments, c.output, records);
  else
    segments_balanced<Op, T, false, Policy><<<p.split, kBlock, 0, c.stream>>>(in, s.offsets, s.segments, c.output, records);
  const bool early = Policy::kEarlyFinish && ch07::device_limits<segments_balanced<Op, T, true, Policy>>().programmatic;
  CUDA_CHECK(ch07::launch_early(segments_balanced_finish<Op, Policy::kTimeline, Policy::kPreloadBefore>, dim3(p.split),
                                dim3(kBlock), 0, c.stream, early, s.offsets, s.segments, Policy::kItems,
                                Policy::kSegmentCost, std::size_t{p.split} * kWarpsPerBlock,
                                static_cast<const Pieces<typename Op::Acc>*>(records), c.output));
}

// How a columns call's tiles lie, for `rows` rows of `vectors` loads with `trip` rows in flight a
// thread, given the blocks of the kernel the GPU holds at once (`resident`): P loads across a
// block, 32 (512 contiguous bytes a warp with 16-byte loads) when the strips of that width fill
// the GPU's blocks on their own, else halved down to `narrowest` (8 16-byte vectors or 32 single
// elements: a 128-byte line of each row) while they do not, and more when the rows are too few to
// give every thread a full trip down them; R = kColumnBlock / P rows deep; the strips of P loads
// across the row; and the chunks of each strip, one wave of blocks in all but no more than full
// trips of the block's rows allow. Narrower strips need fewer chunks to fill the GPU, so the last
// block of each strip has fewer partials to combine after its ticket (none at L = 8192 floats,
// where the strips alone fill it): that combine is the call's tail.
constexpr unsigned kColumnWide = 32;   // loads across a strip where the strips fill the GPU
constexpr unsigned kColumnNarrow = 8;  // the narrowest strip of 16-byte vectors: 128 bytes
struct ColumnTiles {
  unsigned across, split;
  std::size_t deep, strips;
};
inline ColumnTiles column_tiles(std::size_t rows, std::size_t vectors, unsigned trip, std::size_t resident,
                                unsigned narrowest = kColumnNarrow) {
  std::size_t deep_wanted = 1;
  while (deep_wanted * 2 <= std::min<std::size_t>(kColumnBlock, rows / trip)) deep_wanted *= 2;
  std::size_t width = kColumnWide;
  while (width / 2 >= narrowest && red::ceil_div(vectors, width) < resident) width /= 2;
  ColumnTiles t;
  t.across = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(vectors, std::max<std::size_t>(width, kColumnBlock / deep_wanted))));
  t.deep = kColumnBlock / t.across;
  t.strips = std::max<std::size_t>(1, red::ceil_div(vectors, t.across));
  const std::size_t wanted = std::max<std::size_t>(1, resident / t.strips);   // one wave
  const std::size_t most = std::max<std::size_t>(1, rows / (t.deep * trip));  // a full trip each
  t.split = static_cast<unsigned>(std::min<std::size_t>({wanted, most, 65535}));
  return t;
}

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
    const std::size_t resident = resident_blocks<kBlock, rows_by_blocks<Op, T, true>>();
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
      p.chunk = std::max<std::size_t>(1, red::ceil_div(red::ceil_div(s.cols, p.split), trip)) * trip;  // cols 0: one trip
      p.split = static_cast<unsigned>(std::max<std::size_t>(1, red::ceil_div(s.cols, p.chunk)));
      p.strategy = p.split == 1 ? Strategy::block_per_row : Strategy::blocks_per_row;
      if (p.split > 1) {  // a counter per row, then the rows' partials
        if (s.rows > counter_capacity()) throw std::logic_error("11_batched: more split rows than counters");
        p.zeroed_scratch_bytes = counter_bytes();
        p.scratch_bytes = p.zeroed_scratch_bytes + s.rows * p.split * sizeof(Acc);
      }
    }
    if (p.strategy != Strategy::thread_per_row && p.strategy != Strategy::group_per_row &&
        p.strategy != Strategy::block_per_row && p.strategy != Strategy::blocks_per_row)
      throw std::invalid_argument("11_batched: strategy " + name(c.strategy) + " does not reduce rows");
  } else if (s.layout == Layout::columns) {
    // A few rows of very many columns: a thread per column already fills the GPU, every thread's
    // loads down its column are independent and a warp's are 128 contiguous bytes, and there is no
    // meeting of threads to wait for. In the H200's benchmark before the launcher chose it (f32
    // sum, B x L = 2^26) it was ahead of the tiles at 64 rows and far behind once the columns were
    // fewer than the GPU's threads (chapter 11's README); the bound on the rows is kFewRows, the
    // tiles' own for few rows, not a measured crossover.
    if (p.strategy == Strategy::automatic)
      p.strategy = sizeof(T) == 4 && sizeof(Acc) == 4 && s.rows <= kFewRows &&
                           s.cols >= resident_blocks<kBlock, columns_naive<Op, T>>() * kBlock
                       ? Strategy::columns_naive
                       : Strategy::columns_tiled;
    if (p.strategy == Strategy::columns_tiled) {
      p.vector = s.cols % kCount == 0 && s.stride % kCount == 0 && aligned;
      const std::size_t V = s.cols / (p.vector ? kCount : 1);
      p.trip = !p.vector ? kColumnUnroll<false, T, Acc> : s.rows < kFewRows ? kFewRowsUnroll : kColumnUnroll<true, T, Acc>;
      const std::size_t resident =
          !p.vector ? resident_blocks<kColumnBlock, columns_tiled<Op, T, false>, columns_tree_bytes<Acc>(1)>()
          : p.trip == kFewRowsUnroll
              ? resident_blocks<kColumnBlock, columns_tiled<Op, T, true, kFewRowsUnroll>, columns_tree_bytes<Acc>(kCount)>()
              : resident_blocks<kColumnBlock, columns_tiled<Op, T, true>, columns_tree_bytes<Acc>(kCount)>();
      const ColumnTiles tiles = column_tiles(s.rows, V, p.trip, resident, p.vector ? kColumnNarrow : kColumnWide);
      p.across = tiles.across;
      p.split = tiles.split;
      const std::size_t deep = tiles.deep, blocks_x = tiles.strips;
      // Block k of a strip takes tiles k, k + K, k + 2K, ... of trip x deep rows (the chunk, its
      // rows, interleaved with the other blocks' tiles): at most this many rows.
      const std::size_t tile = p.trip * deep;
      p.chunk = red::ceil_div(red::ceil_div(std::max<std::size_t>(s.rows, 1), tile), p.split) * tile;
      if (p.split > 1) {
        if (blocks_x > counter_capacity()) throw std::logic_error("11_batched: more chunked strips than counters");
        p.zeroed_scratch_bytes = counter_bytes();  // a counter per strip, then the partials
        p.scratch_bytes = p.zeroed_scratch_bytes + std::size_t{p.split} * s.cols * sizeof(Acc);
        // The last block of a strip reads its columns of the partials across, up to a block wide.
        const std::size_t strip = std::min<std::size_t>(s.cols, std::size_t{p.across} * (p.vector ? kCount : 1));
        const std::size_t per_load = p.vector && 16 % sizeof(Acc) == 0 ? 16 / sizeof(Acc) : 1;
        p.across_partials = static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(strip, per_load), kColumnBlock));
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
      plan_balanced<Op, T>(p, s);
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
  // Aligned rows: a block per kRows rows of every group, as many waves as that takes. A group's
  // work is a few loads, and blocks that the GPU hands out as SMs free up leave no SM idle at the
  // end, where one wave striding over the rows ends with the slowest SM's last trip
  // (11_batched_grid_tuning times both: results/h200/experiments/grid_tuning.md).
  const auto every_row = [&](unsigned kRows) {
    return static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(red::ceil_div(s.rows, kBlock / G), kRows), 0x7fffffffu));
  };
  if (p.vector) {  // two vectors a lane and 2 rows a trip, or a warp with 8 vectors a lane
    const std::size_t V = s.cols / Vec16<T>::kCount;
    if (V <= 2 * G)
      rows_aligned<Op, T, G, 2, 2><<<every_row(2), kBlock, 0, c.stream>>>(static_cast<const T*>(c.input), s.rows, V, s.stride,
                                                                          c.output);
    else if constexpr (G == 32)
      rows_aligned<Op, T, G, 8, 1><<<every_row(1), kBlock, 0, c.stream>>>(static_cast<const T*>(c.input), s.rows, V, s.stride,
                                                                          c.output);
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

// The tiled columns kernel of plan p (kTimeline: with ColumnTimeline's stamps). Its grid: a block
// per strip of p.across vectors (or columns) across, p.split chunks of each.
template <class Op, class T, bool kTimeline = false>
void launch_columns_tiled(const BatchedCall& c, const Plan& p) {
  using Acc = typename Op::Acc;
  constexpr unsigned kMin = kColumnMinBlocks<T, Acc, true>;
  constexpr unsigned kMinScalar = kColumnMinBlocks<T, Acc, false>;
  const Shape& s = c.shape;
  const T* in = static_cast<const T*>(c.input);
  auto* tickets = static_cast<unsigned*>(c.scratch);
  auto* partials = reinterpret_cast<Acc*>(static_cast<unsigned char*>(c.scratch) + p.zeroed_scratch_bytes);
  const std::size_t kc = p.vector ? Vec16<T>::kCount : 1;
  const dim3 grid(static_cast<unsigned>(red::ceil_div(s.cols / kc, p.across)), p.split);
  const std::size_t shared = columns_tree_bytes<Acc>(kc);
  if (p.vector && p.trip == kFewRowsUnroll)
    columns_tiled<Op, T, true, kFewRowsUnroll, true, kMin, kTimeline><<<grid, kColumnBlock, shared, c.stream>>>(
        in, s.rows, s.cols, s.stride, p.across, p.chunk, c.output, tickets, partials);
  else if (p.vector)
    columns_tiled<Op, T, true, kColumnUnroll<true, T, Acc>, true, kMin, kTimeline><<<grid, kColumnBlock, shared, c.stream>>>(
        in, s.rows, s.cols, s.stride, p.across, p.chunk, c.output, tickets, partials);
  else
    columns_tiled<Op, T, false, kColumnUnroll<false, T, Acc>, true, kMinScalar, kTimeline>
        <<<grid, kColumnBlock, shared, c.stream>>>(in, s.rows, s.cols, s.stride, p.across, p.chunk, c.output, tickets,
                                                   partials);
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
    default: {  // segments_balanced: a lane's own partial over the windows of its range (at most
                // all of them), its walk of the closing window, the warp's fold of the lanes'
                // partials, the lanes' scan, the carry, and the ranges a long segment spans (the
                // finishing warp's tree)
      // (a range inside a segment holds a step of elements, less a window at most, and the step is
      // at least the segment's cost shared out)
      // (the deeper of the two policies' chains: SegmentPolicy picks one by the element's size)
      const auto depth = [&](std::size_t items, std::size_t cost) {
        const std::size_t windows = red::ceil_div(p.chunk, 32 * items);
        const std::size_t warps = std::size_t{p.split} * kWarpsPerBlock;
        const std::size_t share = (length + cost * s.segments) / warps;
        const std::size_t window = 32 * items;
        const std::size_t step = std::max<std::size_t>(window + 1, share) - window;
        const std::size_t ranges = red::ceil_div(length, step) + 1;
        return std::min(length, (windows + 1) * items + 4 * warp_tree + 8 + red::ceil_div(ranges, 32));
      };
      return std::max(depth(SegmentTuning::kItems, SegmentTuning::kSegmentCost),
                      depth(SegmentTuning16::kItems, SegmentTuning16::kSegmentCost));
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
      const unsigned blocks = static_cast<unsigned>(s.rows * p.split);
      if (p.split == 1) {
        rows_by_blocks<Op, T, false><<<blocks, kBlock, 0, c.stream>>>(in, s.cols, s.stride, p.chunk, 1, c.output, nullptr, nullptr);
      } else {
        auto* tickets = static_cast<unsigned*>(c.scratch);
        auto* partials = reinterpret_cast<Acc*>(static_cast<unsigned char*>(c.scratch) + p.zeroed_scratch_bytes);
        rows_by_blocks<Op, T, true><<<blocks, kBlock, 0, c.stream>>>(in, s.cols, s.stride, p.chunk, p.split, c.output,
                                                                    partials, tickets);
      }
      break;
    }
    case Strategy::columns_tiled:
      launch_columns_tiled<Op, T>(c, p);
      break;
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
    default:
      launch_balanced<Op, T>(c, p);
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch11
