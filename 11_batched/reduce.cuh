// Chapter 11 - many reductions at once: the rows and the columns of a matrix.
//
// Idea: the shape decides how work maps to threads. One reduction per row of a [B, L] matrix can
// be a thread's (L tiny), a group of lanes' (short rows), a block's (long rows) or several blocks'
// (a few very long rows), and only the mapping changes: every one reads the row with the same
// 16-byte loads (lane_accumulate, or rows_aligned where every row starts on a 16-byte boundary)
// and combines the lanes with cooperative groups' reduce, as in chapter 10. Columns are read across
// the row, a thread per 16 bytes of columns, each summing its columns down a chunk of rows; the
// last chunk of a strip of columns to finish combines the strip's partials.
// Cost: the input read once; rows: one kernel (blocks_per_row: the last block of a row adds its K
// partials, after a ticket); columns: one kernel (with several chunks of rows, K x L partials and
// a ticket per strip). Deterministic: every partial is combined in a fixed order that depends on
// the shape alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "11_batched/ranges.cuh"  // the loads every mapping shares

namespace ch11 {

// ---- rows -------------------------------------------------------------------------------------------

// A group of G lanes per row (G = 1: a thread per row), kBlock / G rows per block at a time, the
// grid striding over the rows.
// [excerpt: group-per-row]
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
// [end: group-per-row]

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
// 11_batched_grid_tuning (experiments/11_batched/grid_tuning.cu) times 8 against 4 for f32
// (results/h200/experiments/grid_tuning.md).
template <bool kVector, class T, class Acc>
constexpr unsigned kColumnUnroll = !kVector || (sizeof(T) == 4 && sizeof(Acc) == 4) ? 8 : 4;
// Below kFewRows rows, 16-byte loads take 8 rows a trip (kFewRowsUnroll) for every type: with 4, a block
// of so few rows is under 32 threads deep and 32 vectors (512 bytes of each row) across, and every
// thread has one trip. 4 rows a trip is the slower at 64 rows of 2^20 floats
// (results/h200/experiments/README.md); from 128 rows on, the two plan the same blocks.
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

// Where a columns call's time goes, for 11_batched_column_timeline
// (experiments/11_batched/column_timeline.cu): with
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
  unsigned lanes = 1;     // rows: lanes per row (group kernels)
  unsigned split = 1;     // blocks_per_row: blocks per row; columns: chunks of rows
  std::size_t chunk = 0;  // blocks_per_row: columns per block; columns: rows per chunk
  unsigned across = 1;    // columns: threads across a row (and across the partials, in the last
                          // block of a strip: across_partials)
  unsigned across_partials = 1;
  unsigned trip = 1;      // columns: rows a thread loads at once (kColumnUnroll, or kFewRowsUnroll)
  bool vector = false;    // rows: rows_aligned (every row on a 16-byte boundary, at most 2 vectors
                          // a lane, or 8 with a whole warp); columns: 16-byte loads across the row
                          // (and across the partials)
  std::size_t scratch_bytes = 0;
  std::size_t zeroed_scratch_bytes = 0;  // every plan with scratch: the counters at its start
                                         // (counter_bytes, the same for every shape), zero before
                                         // the first call and after every call (the caller zeroes
                                         // them once); the partials follow them
};

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
// fill the GPU once.
template <class Op, class T>
Plan plan(const BatchedCall& c) {
  using Acc = typename Op::Acc;
  constexpr std::size_t kCount = Vec16<T>::kCount;
  const Shape& s = c.shape;
  const bool aligned = reinterpret_cast<std::uintptr_t>(c.input) % 16 == 0;
  Plan p;
  p.strategy = c.strategy;
  if (s.layout == Layout::rows) {
    // [excerpt: plan-rows]
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
    // [end: plan-rows]
    if (p.strategy != Strategy::thread_per_row && p.strategy != Strategy::group_per_row &&
        p.strategy != Strategy::block_per_row && p.strategy != Strategy::blocks_per_row)
      throw std::invalid_argument("11_batched: strategy " + name(c.strategy) + " does not reduce rows");
  } else if (s.layout == Layout::columns) {
    // A few rows of very many columns: a thread per column already fills the GPU, every thread's
    // loads down its column are independent and a warp's are 128 contiguous bytes, and there is no
    // meeting of threads to wait for. It is far behind once the columns are fewer than the GPU's
    // threads (the benchmark's × naive mapping column in chapter 11's README); the bound on the
    // rows is kFewRows, the tiles' own for few rows, not a measured crossover.
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
// the group or block, and the partials of a split row or a chunked column.
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
    default:  // columns_naive
      return length;
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
    default:  // columns_naive (plan never leaves the strategy automatic)
      columns_naive<Op, T><<<static_cast<unsigned>(red::ceil_div(s.cols, kBlock)), kBlock, 0, c.stream>>>(in, s.rows, s.cols,
                                                                                                  s.stride, c.output);
      break;
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch11
