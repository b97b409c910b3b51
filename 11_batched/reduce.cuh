// Chapter 11 - many reductions at once: the rows and the columns of a matrix.
//
// Idea: the shape decides how work maps to threads. One reduction per row of a [B, L] matrix is a
// thread's (L tiny), a group of lanes' (short rows), a block's (long rows) or several blocks' (a
// few very long rows); one per column is a thread's, reading across the row, with the rows cut
// into chunks where the columns alone are too few to fill the GPU. Only the mapping changes: a row
// is read with the same 16-byte loads whatever reads it (lane_accumulate, ranges.cuh), the lanes
// that share a result combine with cooperative groups' reduce, and work split over blocks
// finishes in the same launch with chapter 10's ticket. plan(), below, reads the shape and picks.
// Cost: the input read once and a result written per row or column, in one launch. rows_by_group:
// no barrier, no atomic. rows_by_blocks: chapter 06's block tree; split K ways, K partials a row
// written and read once more, and one atomic (the ticket) a block. columns_by_chunks: no barrier
// with one chunk; with K chunks, K partials a column written and read once more, two barriers and
// one atomic a block. Deterministic: every partial is combined in an order fixed by the shape.
// What it adds to chapter 10: many results in one call, and the choice of mapping.
// These are the teaching kernels, the simplest code of each mapping. The chapter runs the tuned
// kernels of variants.cuh by default (ch11::run); the benchmark measures both.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
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

// Whether this block drew the last of `count` tickets at `ticket`, in every thread of the block:
// chapter 10's acq_rel ticket, taken by thread 0 once every thread of the block has stored what
// it leaves for the last block. The last block reads those stores after it, and sets the counter
// back to zero for the next call (every block of this call has taken its ticket by then).
__device__ inline bool last_to_arrive(unsigned* ticket, unsigned count) {
  __shared__ bool last;
  __syncthreads();  // the block's stores before thread 0's release
  if (threadIdx.x == 0) {
    last = ch10::take_ticket(ticket) == count - 1;
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

// ---- columns --------------------------------------------------------------------------------------

// A thread per column, reading across the row: a warp's load is 32 neighbouring elements of one
// row. Block x of the grid takes columns [x * kBlock, (x + 1) * kBlock), a strip; blockIdx.y takes
// rows [y * chunk, (y + 1) * chunk) of it, a chunk. With one chunk (gridDim.y 1) a thread walks its
// whole column and writes the result. With K chunks it writes partial y of its column into a
// [K, cols] matrix, and the strip's last block to finish (the ticket) adds each column's K
// partials in chunk order: one launch. The counters, one per strip, are zero before the first
// call and after every call.
// [excerpt: columns-by-chunks]
template <class Op, class T>
__global__ void __launch_bounds__(kBlock)
    columns_by_chunks(const T* in, std::size_t rows, std::size_t cols, std::size_t stride, std::size_t chunk, void* out,
                      typename Op::Acc* partials, unsigned* tickets) {
  using Acc = typename Op::Acc;
  const std::size_t c = std::size_t{blockIdx.x} * kBlock + threadIdx.x;
  const std::size_t first = std::min(rows, blockIdx.y * chunk), last = std::min(rows, first + chunk);
  Acc acc = Op::identity();
  if (c < cols)
    for (std::size_t r = first; r < last; ++r) acc = Op::combine(acc, Op::load(in[r * stride + c], r));
  if (gridDim.y == 1) {
    if (c < cols) store_result<Op>(out, c, acc);
    return;
  }
  if (c < cols) partials[blockIdx.y * cols + c] = acc;
  if (!last_to_arrive(tickets + blockIdx.x, gridDim.y) || c >= cols) return;
  acc = Op::identity();
  for (unsigned k = 0; k < gridDim.y; ++k) acc = Op::combine(acc, partials[k * cols + c]);
  store_result<Op>(out, c, acc);
}
// [end: columns-by-chunks]

// ---- the launcher -------------------------------------------------------------------------------

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

// The scratch of a call that splits rows or chunks columns begins with a counter per row or strip
// (then the partials, 256 bytes on).
inline std::size_t tickets_bytes(std::size_t count) { return red::ceil_div(count * sizeof(unsigned), 256) * 256; }

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

// The lesson's plan: the mapping from the shape, then its sizes. Rows by their length in 16-byte
// vectors V: up to 2 a thread per row; up to 512 a group of lanes with about two vectors each (at
// most a warp); longer, a block per row, or several when the rows are too few to fill the GPU in
// one wave. Columns: a thread per column, and chunks of rows enough to fill the GPU once.
template <class Op, class T>
Plan plan(const BatchedCall& c) {
  using Acc = typename Op::Acc;
  constexpr std::size_t kCount = Vec16<T>::kCount;
  const Shape& s = c.shape;
  Plan p;
  p.kernels = Kernels::teaching;
  p.strategy = c.strategy;
  if (!reduces(p.strategy, s.layout))
    throw std::invalid_argument("11_batched: strategy " + name(c.strategy) + " does not reduce " + name(s.layout));
  if (s.layout == Layout::rows) {
    // [excerpt: plan-rows]
    const std::size_t resident = resident_blocks<kBlock, rows_by_blocks<Op, T, true>>();
    const std::size_t V = red::ceil_div(s.cols, kCount);
    if (p.strategy == Strategy::automatic)
      p.strategy = V <= 2 ? Strategy::thread_per_row : V <= 512 ? Strategy::group_per_row : Strategy::blocks_per_row;
    if (p.strategy == Strategy::group_per_row) p.lanes = std::max(2u, pow2_at_least(red::ceil_div(V, 2)));
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
  } else {
    // [excerpt: plan-columns]
    // Strips of kBlock columns; each cut into chunks of rows until the strips fill one wave of
    // blocks (columns_naive: one chunk, a thread walks its whole column), but into no more chunks
    // than a chunk has rows: the last block adds a column's K partials one after another, and
    // that chain is then no longer than a chunk's.
    const std::size_t strips = std::max<std::size_t>(1, red::ceil_div(s.cols, kBlock)), rows = std::max<std::size_t>(1, s.rows);
    const std::size_t resident = resident_blocks<kBlock, columns_by_chunks<Op, T>>();
    const std::size_t wanted = p.strategy == Strategy::columns_naive ? 1 : std::max<std::size_t>(1, resident / strips);
    const auto root = static_cast<std::size_t>(std::sqrt(static_cast<double>(rows)));  // K <= rows / K
    p.chunk = red::ceil_div(rows, std::min<std::size_t>({wanted, root, 65535}));
    p.split = static_cast<unsigned>(red::ceil_div(rows, p.chunk));
    p.strategy = p.split == 1 ? Strategy::columns_naive : Strategy::columns_tiled;
    if (p.split > 1) {  // a counter per strip, then the [chunks, cols] partials
      if (strips > counter_capacity()) throw std::logic_error("11_batched: more chunked strips than counters");
      p.zeroed_scratch_bytes = counter_bytes();
      p.scratch_bytes = p.zeroed_scratch_bytes + std::size_t{p.split} * s.cols * sizeof(Acc);
    }
    // [end: plan-columns]
  }
  return p;
}

// pick(std::integral_constant<unsigned, G>) for the group size G = lanes (1, 2, ..., 32): pick
// returns the instantiation for G, e.g. &launch_rows_by_group<Op, T, G>, which the caller then
// calls itself (so nothing of this lookup is on the stack when the kernel is launched).
template <class Pick>
auto for_lanes(unsigned lanes, Pick&& pick) {
  switch (lanes) {
    case 1: return pick(std::integral_constant<unsigned, 1>{});
    case 2: return pick(std::integral_constant<unsigned, 2>{});
    case 4: return pick(std::integral_constant<unsigned, 4>{});
    case 8: return pick(std::integral_constant<unsigned, 8>{});
    case 16: return pick(std::integral_constant<unsigned, 16>{});
    default: return pick(std::integral_constant<unsigned, 32>{});
  }
}

// A group of G lanes per row: one wave, at most the blocks the GPU holds at once.
template <class Op, class T, unsigned G>
void launch_rows_by_group(const BatchedCall& c) {
  const Shape& s = c.shape;
  const std::size_t wave = resident_blocks<kBlock, rows_by_group<Op, T, G>>();
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(s.rows, kBlock / G), wave));
  rows_by_group<Op, T, G><<<blocks, kBlock, 0, c.stream>>>(static_cast<const T*>(c.input), s.rows, s.cols, s.stride, c.output);
}

// p.split blocks per row (the counters and the partials in c.scratch).
template <class Op, class T>
void launch_rows_by_blocks(const BatchedCall& c, const Plan& p) {
  using Acc = typename Op::Acc;
  const Shape& s = c.shape;
  const T* in = static_cast<const T*>(c.input);
  const unsigned blocks = static_cast<unsigned>(s.rows * p.split);
  if (p.split == 1) {
    rows_by_blocks<Op, T, false><<<blocks, kBlock, 0, c.stream>>>(in, s.cols, s.stride, p.chunk, 1, c.output, nullptr, nullptr);
  } else {
    auto* tickets = static_cast<unsigned*>(c.scratch);
    auto* partials = reinterpret_cast<Acc*>(static_cast<unsigned char*>(c.scratch) + p.zeroed_scratch_bytes);
    rows_by_blocks<Op, T, true><<<blocks, kBlock, 0, c.stream>>>(in, s.cols, s.stride, p.chunk, p.split, c.output, partials,
                                                                tickets);
  }
}

// The longest chain of roundings one result of `length` elements goes through under the lesson's
// kernels (sums; the tests' and the program's error bound): a lane's share added serially, the
// loaded vector, the trees of the group or block, and the partials of a split row; a column's
// chunk added serially, then its chunks' partials one after another.
inline std::size_t sum_depth(const Plan& p, std::size_t length, std::size_t per_vector) {
  const std::size_t block_tree = 8, warp_tree = 5;
  switch (p.strategy) {
    case Strategy::thread_per_row:
    case Strategy::group_per_row:
      return red::ceil_div(length, p.lanes) + per_vector + warp_tree;
    case Strategy::block_per_row:
    case Strategy::blocks_per_row:
      return red::ceil_div(p.chunk, kBlock) + per_vector + block_tree + red::ceil_div(p.split, 32) + warp_tree;
    case Strategy::columns_tiled:
      return p.chunk + p.split;
    default:  // columns_naive
      return length;
  }
}

template <class Op, class T>
std::size_t scratch_bytes(const BatchedCall& c) {
  return plan<Op, T>(c).scratch_bytes;
}

// One call of the teaching kernels on c.stream. The shape must be valid (why_invalid); the scratch
// at least scratch_bytes.
template <class Op, class T>
void launch(const BatchedCall& c) {
  using Acc = typename Op::Acc;
  const Shape& s = c.shape;
  const Plan p = plan<Op, T>(c);
  if (outputs(s) == 0) return;
  switch (p.strategy) {
    case Strategy::thread_per_row:
    case Strategy::group_per_row:
      for_lanes(p.lanes, [](auto g) { return &launch_rows_by_group<Op, T, decltype(g)::value>; })(c);
      break;
    case Strategy::block_per_row:
    case Strategy::blocks_per_row:
      launch_rows_by_blocks<Op, T>(c, p);
      break;
    default: {  // columns: columns_naive is one chunk
      auto* partials = reinterpret_cast<Acc*>(static_cast<unsigned char*>(c.scratch) + p.zeroed_scratch_bytes);
      const dim3 grid(static_cast<unsigned>(red::ceil_div(s.cols, kBlock)), p.split);
      columns_by_chunks<Op, T><<<grid, kBlock, 0, c.stream>>>(static_cast<const T*>(c.input), s.rows, s.cols, s.stride, p.chunk,
                                                               c.output, p.split > 1 ? partials : nullptr,
                                                               static_cast<unsigned*>(c.scratch));
      break;
    }
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch11
