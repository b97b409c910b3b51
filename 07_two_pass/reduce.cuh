// Chapter 07 - two passes over a fixed grid: deterministic, no atomics, two launches for any n.
//
// Idea: launch only as many blocks as the GPU holds at once (a multiple of the SM count). The
// blocks take tiles of the input in rounds; each thread reads 16-byte vectors, eight in flight
// (fewer for 16-bit and 8-bit inputs), then the block reduces with chapter 06's warp shuffles and
// writes one partial into scratch. A second kernel of one block combines those (about a
// thousand) partials in a fixed order. Every element's path to the result depends only on n and
// on the GPU, so the result is bitwise the same on every run.
// Cost: the input read once; 2 launches whatever n (1 below one block's worth); partials of
// blocks x sizeof(Acc) bytes in caller-provided scratch, asked for CUB-style in two phases.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "06_warp_shuffle/reduce.cuh"  // ch06::block_reduce
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "per_device.hpp"
#include "reduce_ops.cuh"

namespace ch07 {

// 16-byte vector loads for any element type, and the split of an array into a misaligned head,
// an aligned body of 16-byte vectors and a short tail. Chapter 08 reuses them (ch07::).
//
// One 16-byte load (LDG.128) brings 4 floats, 8 halves or 16 bytes per instruction: a quarter
// of the load instructions of 4-byte loads (an eighth for halves), so the same bytes in flight take
// fewer instructions and registers. It needs an address that is a multiple of 16; an input
// that starts a few elements past such an address (a sub-array, a user's pointer) gets its first
// elements read one by one instead.

constexpr std::size_t kVectorBytes = 16;

template <class T>
struct Vector {
  static constexpr unsigned kCount = kVectorBytes / sizeof(T);
  T elements[kCount];
};

// Loads vector v of `body` (16-byte aligned) through the read-only path in one instruction.
template <class T>
__device__ inline Vector<T> load_vector(const T* body, std::size_t v) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(body) + v);
  Vector<T> out;
  std::memcpy(&out, &raw, kVectorBytes);  // a register reinterpretation; no memory traffic
  return out;
}

// [0, head): single elements up to the first 16-byte boundary (fewer than 16 / sizeof(T)).
// [head, head + vectors * kCount): whole vectors. [tail_begin, n): the rest, fewer than kCount.
struct VectorSplit {
  std::size_t head = 0;
  std::size_t vectors = 0;
  std::size_t tail_begin = 0;
};

template <class T>
VectorSplit split_for_vectors(const T* in, std::size_t n) {
  constexpr std::size_t count = Vector<T>::kCount;
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(in);
  VectorSplit s;
  if (address % sizeof(T) != 0) {  // not even element-aligned: no vector ever lines up
    s.head = n;
    s.tail_begin = n;
    return s;
  }
  s.head = std::min(n, (kVectorBytes - address % kVectorBytes) % kVectorBytes / sizeof(T));
  s.vectors = (n - s.head) / count;
  s.tail_begin = s.head + s.vectors * count;
  return s;
}

// ---- the two passes ----------------------------------------------------------------------------

constexpr unsigned kBlock = 256;         // pass 1 threads per block
constexpr unsigned kUnroll = 8;          // vectors each thread has in flight per loop trip, f32 (see README)
constexpr unsigned kFinalBlock = 1024;   // pass 2: one block, one or two partials per thread
constexpr unsigned kMaxBlocksPerSm = 8;  // at most 2048 threads per SM on sm_80/sm_90

// The vectors in flight per thread for input type T: kUnroll for 4- and 8-byte types. 16-bit and
// 8-bit inputs pack 8 and 16 elements into a vector, so they take 4 and 2: no type has more than
// 32 elements per thread per trip to convert and add. On the H200 (README) the f16 sum fell behind
// CUB at 8 vectors and is ahead at 4; u8 at 8 needs 255 registers and spills.
template <class T>
constexpr unsigned unroll_for() {
  return sizeof(T) >= 4 ? kUnroll : kUnroll * unsigned(sizeof(T)) / 4;
}

// Pass 1. Every thread accumulates its share of the input in a register. Its indices only
// grow (head, then body tiles, then the last vectors, then the tail), which lets argmax skip the
// index compare (append).
// Load: how a vector of the body is read. The lesson's is a plain 16-byte load; the benchmark
// also measures one with a prefetch hint (variants.cuh).
struct VectorLoad {
  template <class T>
  __device__ static Vector<T> load(const T* body, std::size_t v) {
    return load_vector(body, v);
  }
};

template <class Op, unsigned Unroll, class Load = VectorLoad>
__global__ void __launch_bounds__(kBlock) reduce_pass1(const typename Op::In* in, std::size_t n, VectorSplit split,
                                                       typename Op::Acc* partials, void* result) {
  using T = typename Op::In;
  using Acc = typename Op::Acc;
  constexpr unsigned kCount = Vector<T>::kCount;
  constexpr std::size_t kTileVectors = std::size_t{kBlock} * Unroll;
  __shared__ Acc per_warp[ch06::kWarp];
#if __CUDA_ARCH__ >= 900
  // Lets pass 2's block be launched now; it waits in cudaGridDependencySynchronize() until this
  // grid has finished and its writes are visible. What this hides is the launch gap.
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  const std::size_t thread = blockIdx.x * std::size_t{kBlock} + threadIdx.x;
  const std::size_t threads = std::size_t{gridDim.x} * kBlock;

  Acc acc = Op::identity();
  for (std::size_t i = thread; i < split.head; i += threads) acc = Op::append(acc, in[i], i);

  // The body, in tiles of kBlock x Unroll vectors, taken by the blocks in rounds: in round r
  // block b takes tile r * gridDim.x + b. In a tile, thread t loads vectors t, t + kBlock, ...: a
  // warp's load covers 512 contiguous bytes, a block reads one contiguous stretch per trip (32 KB
  // for Unroll = 8), and all Unroll loads are issued before the first is used.
  const T* body = in + split.head;  // 16-byte aligned
  const std::size_t rounds = split.vectors / kTileVectors / gridDim.x;
  for (std::size_t r = 0; r < rounds; ++r) {
    const std::size_t first = (r * gridDim.x + blockIdx.x) * kTileVectors + threadIdx.x;
    Vector<T> x[Unroll];
#pragma unroll
    for (unsigned u = 0; u < Unroll; ++u) x[u] = Load::load(body, first + u * kBlock);
#pragma unroll
    for (unsigned u = 0; u < Unroll; ++u)
#pragma unroll
      for (unsigned j = 0; j < kCount; ++j)
        acc = Op::append(acc, x[u].elements[j], split.head + (first + u * kBlock) * kCount + j);
  }
  // Less than one round is left. Whole tiles would keep some blocks busy for a trip while the
  // rest wait (at 2^30 floats, 248.24 rounds: a quarter of the blocks would run a 249th); spread
  // one vector per thread instead, at most Unroll each, all in flight.
  const std::size_t rest = rounds * gridDim.x * kTileVectors + thread;
  Vector<T> x[Unroll];
#pragma unroll
  for (unsigned u = 0; u < Unroll; ++u)
    if (rest + u * threads < split.vectors) x[u] = Load::load(body, rest + u * threads);
#pragma unroll
  for (unsigned u = 0; u < Unroll; ++u)
    if (rest + u * threads < split.vectors)
#pragma unroll
      for (unsigned j = 0; j < kCount; ++j)
        acc = Op::append(acc, x[u].elements[j], split.head + (rest + u * threads) * kCount + j);

  for (std::size_t i = split.tail_begin + thread; i < n; i += threads) acc = Op::append(acc, in[i], i);

  acc = ch06::block_reduce<Op>(acc, per_warp);
  if (threadIdx.x == 0) {
    if (result)
      Op::store(result, acc);  // a one-block grid needs no second pass
    else
      partials[blockIdx.x] = acc;
  }
}

// Pass 2: one block; partial i always goes to thread i % kFinalBlock, in the same order.
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

// --- the grid ------------------------------------------------------------------------------

struct DeviceLimits {
  unsigned max_blocks = 0;    // pass 1 blocks that are resident at once: SMs x blocks per SM
  bool programmatic = false;  // sm_90+: pass 2 may be launched before pass 1 ends
};

// For the pass-1 kernel kPass1 (kBlock threads per block). Asked once per (device, kernel) and
// remembered: launches then cost no extra API calls. Chapter 08 uses it for its own pass 1.
template <auto kPass1>
DeviceLimits device_limits() {
  return red::per_device<DeviceLimits>([](int device) {
    int sms = 0, major = 0, per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kPass1, kBlock, 0));
    DeviceLimits limits;
    limits.max_blocks = static_cast<unsigned>(sms) * std::max(1u, std::min(kMaxBlocksPerSm, unsigned(per_sm)));
    limits.programmatic = major >= 9;
    return limits;
  });
}

// Blocks for n elements: enough that each thread has at least one full loop trip (a block trip
// covers per_block_trip elements), at most what the GPU holds at once. Above about a million
// floats on the H200 it no longer grows with n.
inline unsigned grid_for(std::size_t n, std::size_t per_block_trip, unsigned max_blocks) {
  const std::size_t wanted = std::max<std::size_t>(1, red::ceil_div(n, per_block_trip));
  return static_cast<unsigned>(std::min<std::size_t>(wanted, max_blocks));
}

template <class Op, unsigned Unroll = unroll_for<typename Op::In>(), class Load = VectorLoad>
DeviceLimits limits_of() {
  return device_limits<reduce_pass1<Op, Unroll, Load>>();
}

template <class Op, unsigned Unroll = unroll_for<typename Op::In>(), class Load = VectorLoad>
unsigned pass1_blocks(std::size_t n) {
  return grid_for(n, std::size_t{kBlock} * Unroll * Vector<typename Op::In>::kCount,
                  limits_of<Op, Unroll, Load>().max_blocks);
}

// Pass 2 over `count` partials. With early = true (and sm_90+) it is launched with programmatic
// dependent launch: it may start before pass 1 ends and waits for it inside.
template <class Op>
cudaError_t launch_pass2(const typename Op::Acc* partials, unsigned count, void* result, cudaStream_t stream,
                         bool early) {
  cudaLaunchAttribute early_launch{};
  early_launch.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early_launch.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(kFinalBlock);
  config.stream = stream;
  config.attrs = &early_launch;
  config.numAttrs = early ? 1 : 0;
  return cudaLaunchKernelEx(&config, reduce_pass2<Op>, partials, count, result);
}

// --- the API, CUB-style: call once with scratch == nullptr for the size, then again to reduce --

// kEarlyLaunch = false launches pass 2 the ordinary way; the benchmark keeps that variant to show
// what the early launch is worth (the result bits are the same either way), and measures Unroll
// and Load.
template <class Op, bool kEarlyLaunch = true, unsigned Unroll = unroll_for<typename Op::In>(), class Load = VectorLoad>
cudaError_t reduce(void* scratch, std::size_t& scratch_bytes, const typename Op::In* in, std::size_t n, void* result,
                   cudaStream_t stream) {
  const DeviceLimits limits = limits_of<Op, Unroll, Load>();
  const std::size_t needed = std::size_t{limits.max_blocks} * sizeof(typename Op::Acc);
  if (scratch == nullptr) {
    scratch_bytes = needed;
    return cudaSuccess;
  }
  if (scratch_bytes < needed || result == nullptr || (n > 0 && in == nullptr)) return cudaErrorInvalidValue;
  if (n == 0) {
    red::store_identity<Op><<<1, 1, 0, stream>>>(result);
    return cudaGetLastError();
  }
  auto* partials = static_cast<typename Op::Acc*>(scratch);
  const unsigned blocks = pass1_blocks<Op, Unroll, Load>(n);
  reduce_pass1<Op, Unroll, Load>
      <<<blocks, kBlock, 0, stream>>>(in, n, split_for_vectors(in, n), partials, blocks == 1 ? result : nullptr);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess || blocks == 1) return e;
  return launch_pass2<Op>(partials, blocks, result, stream, kEarlyLaunch && limits.programmatic);
}

// --- the chapter contract --------------------------------------------------------------------

// The chapter contract (common/chapter.hpp) over the two-phase reduce(): the scratch query, then
// the call.
template <class Op, bool kEarlyLaunch, unsigned Unroll, class Load>
std::size_t scratch_bytes(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK((reduce<Op, kEarlyLaunch, Unroll, Load>(nullptr, bytes, nullptr, n, nullptr, nullptr)));
  return bytes;
}

template <class Op, bool kEarlyLaunch, unsigned Unroll, class Load>
void launch(const red::ReduceCall& c) {
  std::size_t bytes = c.scratch_bytes;
  CUDA_CHECK((reduce<Op, kEarlyLaunch, Unroll, Load>(c.scratch, bytes, static_cast<const typename Op::In*>(c.input),
                                                     c.n, c.output, c.stream)));
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
