// Chapter 11's tuned kernels: the mappings of the lesson (reduce.cuh) with the choices that close
// the teaching kernels' gap to the memory's speed. ch11::run runs them by default, the benchmark
// measures them beside the teaching kernels, and the tests hold both to the same answers.
//   rows_aligned    rows_by_group for aligned rows: no head or tail, and the loads of several rows
//                   issued before the first is added (a row of 8 floats is two loads);
//                   a block for every kRows trips of its groups, as many waves as that takes
//   columns_tiled   a block lays threads down the rows as well as across: 16-byte loads, tiles of
//                   rows dealt out to the chunks in turn, strips only as wide as filling the GPU
//                   needs, the column's threads meeting in shuffles and a tree in shared memory
//   columns_naive   the lesson's columns kernel with one chunk, without the ticket's code: the
//                   choice for a few rows of very many columns
// The lesson does not include this file; chapter.cuh does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "11_batched/reduce.cuh"

namespace ch11 {

// ---- rows ---------------------------------------------------------------------------------------

// The lesson's group per row for aligned rows (every row starts on a 16-byte boundary, L a
// multiple of a vector, at most kVecs vectors a lane): no head or tail to handle, and kRows rows
// per trip, their loads all issued before the first is added. A row of 8 floats is two loads:
// without the trips a thread would have two loads in flight, too few to cover the memory's latency.
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

// ---- columns --------------------------------------------------------------------------------------
//
// A block of kColumnBlock threads lays P threads across the row (P = min(vectors per row, 32): a
// warp reads 32 neighbouring 16-byte vectors, 512 contiguous bytes; 16 or 8 where strips that wide
// are too few to fill the GPU: column_tiles) and R = kColumnBlock / P rows deep. Thread (x, y) sums
// its columns down rows y, y + R, ... of the block's chunk of rows, then the R threads of each
// column meet: by shuffles within a warp, then pairwise in a fixed tree in shared memory across the
// warps. A chunk is not one run of rows but tiles of kTrip x R rows (a trip of every thread) dealt
// out in turn: chunk k takes tiles k, k + K, k + 2K, ..., so that the K blocks of a strip move down
// the matrix side by side (against one run of rows a chunk: results/h200/experiments/grid_tuning.md).
// blockIdx.y is the chunk: with one chunk the block writes the results; else it writes partial k of
// each of its columns into a [chunks, cols] matrix, and the last of a strip's chunks to finish
// reduces the strip's partials over the chunks with the same code (CombineOp: the partials are
// already accumulators), in chunk order: one launch.
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
// The blocks of kThreads threads an SM of the architecture being compiled holds, at most `wanted`:
// the minimum __launch_bounds__ asks for. An SM holds 2048 threads on sm_80, sm_90 and sm_100, but
// 1536 on sm_86, sm_87, sm_89 and sm_120: there ptxas would ignore a minimum of 4 blocks of 512,
// and the register cap with it, so the cap asks for the 3 that fill the SM (40 registers).
template <unsigned kThreads>
constexpr unsigned blocks_an_sm_holds(unsigned wanted) {
#if defined(__CUDA_ARCH__) && \
    (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
  constexpr unsigned kSmThreads = 1536;
#else
  constexpr unsigned kSmThreads = 2048;
#endif
  return wanted < kSmThreads / kThreads ? wanted : kSmThreads / kThreads;
}
template <class T, class Acc, bool kVector>
constexpr unsigned kColumnMinBlocks =  // blocks an SM: the register cap
    blocks_an_sm_holds<kColumnBlock>(kVector || sizeof(Acc) > 4 ? 2 : 4);
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

// Thread (x, y)'s share of the block's strip of a [rows, vectors x kCount] matrix (row stride
// `stride` elements): vector v0 + x across, rows first + y, first + y + R, ... below `last`, in
// tiles of kTrip x R rows (a trip of every thread): each tile, or with tile_step K the first and
// then every K-th (the tiles between are other blocks'). Threads outside the strip hold the identity.
template <class Op, class T, bool kVector, unsigned kTrip>
__device__ void column_trips(const T* in, std::size_t first, std::size_t last, std::size_t vectors, std::size_t stride,
                             unsigned P, std::size_t v0, typename Op::Acc (&acc)[kVector ? Vec16<T>::kCount : 1],
                             std::size_t tile_step) {
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
}

// The R = kColumnBlock / P threads of each column meet. First within a warp: its 32 / P threads of
// each column, by shuffles (no barrier); only when P divides 32: then every warp holds whole rows,
// and a column's threads in it are lanes x, x + P, x + 2P, ... Then across the warps, in a fixed
// tree in shared memory: all kCount columns at once when their accumulators fit
// (columns_tree_bytes), else one at a time. On return, the threads with y == 0 hold their columns'
// results in acc. Starts and ends with the shared tree free.
template <class Op, unsigned kCount>
__device__ void column_meet(unsigned P, typename Op::Acc (&acc)[kCount], typename Op::Acc* tree) {
  using Acc = typename Op::Acc;
  const unsigned R = kColumnBlock / P, y = threadIdx.x / P;
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

// The block's strip: each thread's trips, then the meeting of each column's threads.
template <class Op, class T, bool kVector, unsigned kTrip = kColumnUnroll<kVector, T, typename Op::Acc>>
__device__ void column_strip(const T* in, std::size_t first, std::size_t last, std::size_t vectors, std::size_t stride,
                             unsigned P, std::size_t v0, typename Op::Acc (&acc)[kVector ? Vec16<T>::kCount : 1],
                             typename Op::Acc* tree, std::size_t tile_step = 1) {
  column_trips<Op, T, kVector, kTrip>(in, first, last, vectors, stride, P, v0, acc, tile_step);
  column_meet<Op>(P, acc, tree);
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

// The tiled columns kernel: block (x, k) takes strip x (P = `across` loads wide) and tiles k,
// k + K, k + 2K, ... of it (K = gridDim.y chunks); with one chunk it writes the results, else its
// partials, and the strip's last block combines them.
template <class Op, class T, bool kVector, unsigned kTrip = kColumnUnroll<kVector, T, typename Op::Acc>>
__global__ void __launch_bounds__(kColumnBlock, kColumnMinBlocks<T, typename Op::Acc, kVector>)
    columns_tiled(const T* in, std::size_t rows, std::size_t cols, std::size_t stride, unsigned across, void* out,
                  unsigned* tickets, typename Op::Acc* partials) {
  using Acc = typename Op::Acc;
  constexpr unsigned kCount = kVector ? Vec16<T>::kCount : 1;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Acc* tree = reinterpret_cast<Acc*>(shared_bytes);
  const unsigned P = across;
  const std::size_t vectors = cols / kCount, v0 = std::size_t{blockIdx.x} * P;
  Acc acc[kCount];
  const std::size_t tile = std::size_t{kTrip} * (kColumnBlock / P);
  column_strip<Op, T, kVector, kTrip>(in, std::size_t{blockIdx.y} * tile, rows, vectors, stride, P, v0, acc, tree, gridDim.y);
  const std::size_t v = v0 + threadIdx.x;  // for the threads with y == 0
  const bool holds = threadIdx.x < P && v < vectors;
  if (gridDim.y == 1) {
    if (holds)
#pragma unroll
      for (unsigned j = 0; j < kCount; ++j) store_result<Op>(out, v * kCount + j, acc[j]);
    return;
  }
  if (holds)
#pragma unroll
    for (unsigned j = 0; j < kCount; ++j) partials[std::size_t{blockIdx.y} * cols + v * kCount + j] = acc[j];
  if (!last_to_arrive(tickets + blockIdx.x, gridDim.y)) return;
  const std::size_t c_lo = v0 * kCount, c_hi = std::min(cols, (v0 + P) * kCount);
  finish_column_strip<Op, kVectorPartials<Op, kVector>>(partials, gridDim.y, cols, c_lo, c_hi, out, tree);
}

// The naive mapping: a thread per column walks down every row, one element at a time (the
// benchmark's baseline, and the tuned plan's choice for a few rows of very many columns).
template <class Op, class T>
__global__ void __launch_bounds__(kBlock)
    columns_naive(const T* in, std::size_t rows, std::size_t cols, std::size_t stride, void* out) {
  const std::size_t c = std::size_t{blockIdx.x} * kBlock + threadIdx.x;
  if (c >= cols) return;
  typename Op::Acc acc = Op::identity();
  for (std::size_t r = 0; r < rows; ++r) acc = Op::combine(acc, Op::load(in[r * stride + c], r));
  store_result<Op>(out, c, acc);
}

// ---- the tuned plan and launcher ---------------------------------------------------------------

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

// The tuned plan. Rows: the lesson's mapping and sizes, and rows_aligned where every row starts on
// a 16-byte boundary with at most two vectors a lane, or eight with a whole warp. Columns: tiles
// (column_tiles), chunks of them enough to fill the GPU once; or, for f32 sums and maxima of at
// most kFewRows rows whose columns alone fill the GPU's thread slots, the naive mapping.
template <class Op, class T>
Plan plan_tuned(const BatchedCall& c) {
  using Acc = typename Op::Acc;
  constexpr std::size_t kCount = Vec16<T>::kCount;
  const Shape& s = c.shape;
  const bool aligned = reinterpret_cast<std::uintptr_t>(c.input) % 16 == 0;
  if (s.layout == Layout::rows) {
    Plan p = plan<Op, T>(c);
    p.kernels = Kernels::tuned;
    const std::size_t V = red::ceil_div(s.cols, kCount);
    if (p.strategy == Strategy::thread_per_row || p.strategy == Strategy::group_per_row)
      p.vector = s.cols % kCount == 0 && s.stride % kCount == 0 && aligned && V <= (p.lanes == 32 ? 8 : 2) * p.lanes;
    return p;
  }
  Plan p;
  p.kernels = Kernels::tuned;
  p.strategy = c.strategy;
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
  return p;
}

// Rows of a group of G lanes: aligned rows with rows_aligned, two vectors a lane and 2 rows a trip,
// or a warp with 8 vectors a lane, a block per kRows trips of its groups, as many waves as that
// takes. A group's work is a few loads, and blocks that the GPU hands out as SMs free up leave no
// SM idle at the end, where one wave striding over the rows ends with the slowest SM's last trip
// (11_batched_grid_tuning times both: results/h200/experiments/grid_tuning.md). Other rows: the
// lesson's rows_by_group.
template <class Op, class T, unsigned G>
void launch_rows_tuned(const BatchedCall& c, const Plan& p) {
  const Shape& s = c.shape;
  if (!p.vector) return launch_rows_by_group<Op, T, G>(c);
  const auto every_row = [&](unsigned kRows) {
    return static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(red::ceil_div(s.rows, kBlock / G), kRows), 0x7fffffffu));
  };
  const T* in = static_cast<const T*>(c.input);
  const std::size_t V = s.cols / Vec16<T>::kCount;
  if (V <= 2 * G)
    rows_aligned<Op, T, G, 2, 2><<<every_row(2), kBlock, 0, c.stream>>>(in, s.rows, V, s.stride, c.output);
  else if constexpr (G == 32)
    rows_aligned<Op, T, G, 8, 1><<<every_row(1), kBlock, 0, c.stream>>>(in, s.rows, V, s.stride, c.output);
}

// The tiled columns kernel of plan p. Its grid: a block per strip of p.across vectors (or columns)
// across, p.split chunks of each.
template <class Op, class T>
void launch_columns_tiled(const BatchedCall& c, const Plan& p) {
  using Acc = typename Op::Acc;
  const Shape& s = c.shape;
  const T* in = static_cast<const T*>(c.input);
  auto* tickets = static_cast<unsigned*>(c.scratch);
  auto* partials = reinterpret_cast<Acc*>(static_cast<unsigned char*>(c.scratch) + p.zeroed_scratch_bytes);
  const std::size_t kc = p.vector ? Vec16<T>::kCount : 1;
  const dim3 grid(static_cast<unsigned>(red::ceil_div(s.cols / kc, p.across)), p.split);
  const std::size_t shared = columns_tree_bytes<Acc>(kc);
  if (p.vector && p.trip == kFewRowsUnroll)
    columns_tiled<Op, T, true, kFewRowsUnroll><<<grid, kColumnBlock, shared, c.stream>>>(in, s.rows, s.cols, s.stride, p.across,
                                                                                         c.output, tickets, partials);
  else if (p.vector)
    columns_tiled<Op, T, true><<<grid, kColumnBlock, shared, c.stream>>>(in, s.rows, s.cols, s.stride, p.across, c.output,
                                                                         tickets, partials);
  else
    columns_tiled<Op, T, false><<<grid, kColumnBlock, shared, c.stream>>>(in, s.rows, s.cols, s.stride, p.across, c.output,
                                                                          tickets, partials);
}

// The longest chain of roundings under the tuned kernels: the lesson's for rows (rows_aligned adds
// a lane's vectors serially too); a tiled column's rows in a thread, its meeting, and with chunks
// the partials' pass over them with the same code.
inline std::size_t sum_depth_tuned(const Plan& p, std::size_t length, std::size_t per_vector) {
  if (p.strategy != Strategy::columns_tiled) return sum_depth(p, length, per_vector);
  const std::size_t deep = kColumnBlock / p.across, deep_partials = kColumnBlock / p.across_partials;
  return red::ceil_div(p.chunk, deep) + kColumnTree + (p.split > 1 ? red::ceil_div(p.split, deep_partials) + kColumnTree : 0);
}

template <class Op, class T>
std::size_t scratch_bytes_tuned(const BatchedCall& c) {
  return plan_tuned<Op, T>(c).scratch_bytes;
}

// One call of the tuned kernels on c.stream. The shape must be valid (why_invalid); the scratch at
// least scratch_bytes_tuned.
template <class Op, class T>
void launch_tuned(const BatchedCall& c) {
  const Shape& s = c.shape;
  const Plan p = plan_tuned<Op, T>(c);
  if (outputs(s) == 0) return;
  switch (p.strategy) {
    case Strategy::thread_per_row:
    case Strategy::group_per_row:
      for_lanes(p.lanes, [](auto g) { return &launch_rows_tuned<Op, T, decltype(g)::value>; })(c, p);
      break;
    case Strategy::block_per_row:
    case Strategy::blocks_per_row:
      launch_rows_by_blocks<Op, T>(c, p);
      break;
    case Strategy::columns_tiled:
      launch_columns_tiled<Op, T>(c, p);
      break;
    default:  // columns_naive (the plan never leaves the strategy automatic)
      columns_naive<Op, T><<<static_cast<unsigned>(red::ceil_div(s.cols, kBlock)), kBlock, 0, c.stream>>>(
          static_cast<const T*>(c.input), s.rows, s.cols, s.stride, c.output);
      break;
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch11
