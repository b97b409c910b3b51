// Chapter 07 - two passes over a fixed grid: deterministic, no atomics, two launches for any n.
//
// Idea: chapter 06's blocks, combined another way. Instead of a block per tile and an atomic per
// block, launch only as many blocks as the GPU holds at once (a multiple of the SM count). They
// take the input's tiles in rounds, each writes one partial into scratch, and a second kernel of
// one block combines those (about a thousand) partials in a fixed order. Every element's path to
// the result depends only on its index, n and the grid (the SM count times the blocks per SM the
// compiled kernel gets), never on the input's address, so the result is bitwise the same on every
// run, and no operator needs an atomic it may not have.
// With a fixed grid a thread's loads become a loop, and two smaller changes pay: 16-byte vector
// loads, and launching pass 2 before pass 1 ends. The README measures each one taken out.
// Cost: the input read once; 2 launches whatever n (1 below one block's worth); partials of
// blocks x sizeof(Acc) bytes in caller-provided scratch, asked for CUB-style in two phases.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "06_warp_shuffle/reduce.cuh"  // ch06::block_reduce
#include "07_two_pass/device_limits.cuh"  // how many blocks the GPU holds, asked once; launch_early
#include "07_two_pass/vector_loads.cuh"   // 16-byte loads from any address: Array, what pass 1 reads
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "per_device.hpp"
#include "reduce_ops.cuh"

namespace ch07 {

// ---- the two passes ----------------------------------------------------------------------------

constexpr unsigned kBlock = 256;         // pass 1 threads per block
constexpr unsigned kFinalBlock = 1024;   // pass 2: one block, one or two partials per thread
constexpr unsigned kMaxBlocksPerSm = 8;  // at most 2048 threads per SM on sm_80/sm_90

// Pass 1's loads: how a thread reads and how many loads it keeps in flight. Later chapters read
// with them too, and chapter 13 hands its own for operators whose load is long; the benchmark's
// loads variants change them (variants.cuh, which the lesson never includes).
struct Tuning {
  using Load = VectorLoad;
  // Loads each thread has in flight per loop trip: 8 (128 bytes of 16-byte vectors), but no more
  // than 32 adds (append_vector), so 16-bit inputs take 4 vectors; a sum of bytes, 4 adds a
  // vector, takes 8. On the H200 (README) the f16 sum fell behind CUB at 8 vectors and is ahead
  // at 4.
  static constexpr unsigned kMaxLoads = 8;
  static constexpr unsigned kMaxElements = 32;
};

// The vectors each thread loads per trip (its unroll), for a policy and what pass 1 reads (and
// the operator, where it adds a vector in fewer steps than its elements: append_vector).
template <class Policy, class Source, class Op = void>
constexpr unsigned unroll_of() {
  return std::min(Policy::kMaxLoads / Source::kLoads, Policy::kMaxElements / appends_per_vector<Op, Source>());
}

// What one thread of pass 1 accumulates: its share of the input, in a register. Its indices only
// grow (body tiles, then the last vectors, then the tail), which lets argmax skip the index
// compare (append). Chapter 10 reuses it.
// A sum of bytes is exact in any order (a 64-bit integer), so a misaligned byte array needs no
// cut vectors: its bytes before the first 16-byte boundary (fewer than 16) go to thread 0, and
// the rest is read from that boundary as an aligned array (kRealigned: that array's share).
template <class Op, class Policy, class Source, bool kRealigned = false>
__device__ inline typename Op::Acc accumulate_share(const Source& src, std::size_t n) {
  using Acc = typename Op::Acc;
  if constexpr (!kRealigned && sums_bytes<Op, Source>() && std::is_same_v<Source, Array<std::uint8_t>>) {
    if (src.width < 16) {
      const std::size_t head = std::min<std::size_t>(n, (16 - reinterpret_cast<std::uintptr_t>(src.in) % 16) % 16);
      Acc acc = Op::identity();
      if (blockIdx.x == 0 && threadIdx.x == 0)
        for (std::size_t i = 0; i < head; ++i) acc = Op::append(acc, src.in[i], i);
      const Source body{src.in + head, n - head};
      return Op::combine(acc, accumulate_share<Op, Policy, Source, true>(body, n - head));
    }
  }
  constexpr unsigned kUnroll = unroll_of<Policy, Source, Op>();
  constexpr unsigned kCount = Source::kCount;
  constexpr std::size_t kTileVectors = std::size_t{kBlock} * kUnroll;
  const std::size_t thread = blockIdx.x * std::size_t{kBlock} + threadIdx.x;
  const std::size_t threads = std::size_t{gridDim.x} * kBlock;

  // [excerpt: rounds]
  const std::size_t vectors = n / kCount;
  Acc acc = Op::identity();

  // The body, in tiles of kBlock x kUnroll vectors, taken by the blocks in rounds: in round r
  // block b takes tile r * gridDim.x + b. In a tile, thread t loads vectors t, t + kBlock, ...: a
  // warp's load covers 512 contiguous bytes, a block reads one contiguous stretch per trip (32 KB
  // for 8 vectors), and all kUnroll loads are issued before the first is used.
  const std::size_t rounds = vectors / kTileVectors / gridDim.x;
  for (std::size_t r = 0; r < rounds; ++r) {
    const std::size_t first = (r * gridDim.x + blockIdx.x) * kTileVectors + threadIdx.x;
    typename Source::Loaded x[kUnroll];
    load_trip<kBlock>(src, x, first, vectors);  // x[u] = vector first + u * kBlock
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) acc = append_vector<Op>(acc, src, x[u], first + u * kBlock);
  }
  // [end: rounds]
  // Less than one round is left. Whole tiles would keep some blocks busy for a trip while the
  // rest wait (at 2^30 floats, 248.24 rounds: a quarter of the blocks would run a 249th); spread
  // one vector per thread instead, at most kUnroll each, all in flight.
  const std::size_t rest = rounds * gridDim.x * kTileVectors + thread;
  typename Source::Loaded x[kUnroll];
#pragma unroll
  for (unsigned u = 0; u < kUnroll; ++u)
    if (rest + u * threads < vectors) x[u] = src.load(rest + u * threads);
#pragma unroll
  for (unsigned u = 0; u < kUnroll; ++u)
    if (rest + u * threads < vectors) acc = append_vector<Op>(acc, src, x[u], rest + u * threads);

  for (std::size_t i = vectors * kCount + thread; i < n; i += threads) acc = Op::append(acc, src.element(i), i);
  return acc;
}

// Pass 1: every thread's share (above), then the block's tree; one partial per block.
template <class Op, class Policy, class Source>
__global__ void __launch_bounds__(kBlock)
    reduce_pass1(Source src, std::size_t n, typename Op::Acc* partials, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[ch06::kWarp];
#if __CUDA_ARCH__ >= 900
  // Lets pass 2's block be launched now; it waits in cudaGridDependencySynchronize() until this
  // grid has finished and its writes are visible. What this hides is the launch gap.
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  const Acc acc = ch06::block_reduce<Op>(accumulate_share<Op, Policy>(src, n), per_warp);
  if (threadIdx.x == 0) {
    if (result)
      Op::store(result, acc);  // a one-block grid needs no second pass
    else
      partials[blockIdx.x] = acc;
  }
}

// Pass 2: one block; partial i always goes to thread i % kFinalBlock, in the same order.
// [excerpt: pass2]
template <class Op>
__global__ void __launch_bounds__(kFinalBlock)
    reduce_pass2(const typename Op::Acc* partials, unsigned count, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[ch06::kWarp];
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();  // pass 1 has completed and its partials are visible
#endif
  Acc acc = Op::identity();
#pragma unroll 2
  for (unsigned i = threadIdx.x; i < count; i += kFinalBlock) acc = Op::combine(acc, partials[i]);
  acc = ch06::block_reduce<Op>(acc, per_warp);
  if (threadIdx.x == 0) Op::store(result, acc);
}
// [end: pass2]

// The fixed grid's limit: pass 1's blocks resident at once (device_limits.cuh).
// [excerpt: grid]
template <class Op, class Policy, class Source>
DeviceLimits limits_of() {
  return device_limits<reduce_pass1<Op, Policy, Source>, kBlock, kMaxBlocksPerSm>();
}

// Blocks for n elements: one per tile of kBlock x unroll vectors (each thread then has at least
// one full loop trip), at most what the GPU holds at once. Above about a million floats on the
// H200 the fixed grid no longer grows with n.
template <class Op, class Policy, class Source>
std::size_t tile_blocks(std::size_t n) {
  const std::size_t per_tile = std::size_t{kBlock} * unroll_of<Policy, Source, Op>() * Source::kCount;
  return std::max<std::size_t>(1, red::ceil_div(n, per_tile));
}
template <class Op, class Policy, class Source>
unsigned pass1_blocks(std::size_t n) {
  const std::size_t most = limits_of<Op, Policy, Source>().max_blocks;
  return static_cast<unsigned>(std::min(tile_blocks<Op, Policy, Source>(n), most));
}
// [end: grid]

// --- the API, CUB-style: call once with scratch == nullptr for the size, then again to reduce --

// Reduces what `src` reads (n elements) with Op. The scratch holds one partial per pass-1 block:
// with the fixed grid its size does not depend on n.
template <class Op, class Policy = Tuning, class Source>
cudaError_t reduce_source(void* scratch, std::size_t& scratch_bytes, Source src, std::size_t n, void* result,
                          cudaStream_t stream) {
  const DeviceLimits limits = limits_of<Op, Policy, Source>();
  const std::size_t needed = std::size_t{limits.max_blocks} * sizeof(typename Op::Acc);
  if (scratch == nullptr) {
    // The size query. A null scratch that claims a size is a caller's mistake, not a query: refused,
    // so it can never return success without having reduced anything.
    if (scratch_bytes > 0) return cudaErrorInvalidValue;
    scratch_bytes = needed;
    return cudaSuccess;
  }
  if (scratch_bytes < needed || result == nullptr) return cudaErrorInvalidValue;
  if (n > 0 && !src.element_aligned()) return cudaErrorInvalidValue;  // not even one element reads there
  if (n == 0) {
    red::store_identity<Op><<<1, 1, 0, stream>>>(result);
    return cudaGetLastError();
  }
  auto* partials = static_cast<typename Op::Acc*>(scratch);
  const unsigned blocks = pass1_blocks<Op, Policy, Source>(n);
  reduce_pass1<Op, Policy, Source>
      <<<blocks, kBlock, 0, stream>>>(src, n, partials, blocks == 1 ? result : nullptr);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess || blocks == 1) return e;
  // Pass 2 over the partials: one block, launched early where the device can (launch_early).
  return launch_early(reduce_pass2<Op>, dim3(1), dim3(kFinalBlock), 0, stream, limits.programmatic,
                      static_cast<const typename Op::Acc*>(partials), blocks, result);
}

// The same over an array of Op::In.
template <class Op, class Policy = Tuning>
cudaError_t reduce(void* scratch, std::size_t& scratch_bytes, const typename Op::In* in, std::size_t n, void* result,
                   cudaStream_t stream) {
  if (scratch != nullptr && n > 0 && in == nullptr) return cudaErrorInvalidValue;
  const Array<typename Op::In, typename Policy::Load> src{in, n};
  return reduce_source<Op, Policy>(scratch, scratch_bytes, src, n, result, stream);
}

// --- the chapter contract --------------------------------------------------------------------

// The chapter contract (common/chapter.hpp) over the two-phase reduce(): the scratch query, then
// the call.
template <class Op, class Policy = Tuning>
std::size_t scratch_bytes(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK((reduce<Op, Policy>(nullptr, bytes, nullptr, n, nullptr, nullptr)));
  return bytes;
}

template <class Op, class Policy = Tuning>
void launch(const red::ReduceCall& c) {
  std::size_t bytes = c.scratch_bytes;
  const Array<typename Op::In, typename Policy::Load> src{static_cast<const typename Op::In*>(c.input), c.n};
  CUDA_CHECK((reduce_source<Op, Policy>(c.scratch, bytes, src, c.n, c.output, c.stream)));
}

// The longest chain of additions an element goes through, for the error bound a sum must meet
// (common/reference.hpp): its thread's share of the blocks' rounds, the vector it came in, the
// warp and block trees of pass 1, then pass 2's. Chapter 08 reuses it.
inline std::size_t two_pass_depth(std::size_t n, unsigned blocks, unsigned unroll, unsigned per_vector) {
  if (n == 0) return 0;
  const std::size_t pass1 = red::ceil_div(n, std::size_t{blocks} * kBlock) + (unroll + 1) * per_vector + 2 + 5 +
                            red::ceil_log2(kBlock / ch06::kWarp);
  const std::size_t pass2 = red::ceil_div(blocks, kFinalBlock) + 5 + red::ceil_log2(kFinalBlock / ch06::kWarp);
  return pass1 + pass2;
}

}  // namespace ch07
