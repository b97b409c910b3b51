// Chapter 13's any / all: a logical operator whose block combine is a vote.
//
// __syncthreads_or/and is one instruction for the whole block. any_all_votes uses it, and can stop
// early (a flag in memory that every warp polls once a trip) once the answer is known. Scratch: a
// counter and a stop flag that the caller zeroes once, then one partial per block.
#pragma once

#include "13_custom_ops/reduce.cuh"

namespace ch13 {

// ---- any / all with votes ------------------------------------------------------------------------------

// Over bytes (nonzero is true). Each thread reads 16-byte vectors in chapter 07's tiles, kVotes of
// them a trip, and keeps one bit: any byte nonzero (kAll false) or any byte zero (kAll true, the
// answer then being "not all"). A block votes with one __syncthreads_or. With kEarlyExit a warp
// whose lanes found the deciding byte sets a stop flag (a relaxed store), and every warp reads it
// once a trip and leaves the loop when set: the bytes after are never read. The answer does not
// depend on which blocks stopped. The last block (a ticket) ORs the blocks' bits, writes the
// result and sets the counter and the flag back to 0; a grid of one block sets the flag back
// itself.
constexpr unsigned kVotes = 8;  // 128 bytes in flight a thread

__device__ inline bool decides(uint4 v, bool all) {
  if (!all) return (v.x | v.y | v.z | v.w) != 0;  // a nonzero byte somewhere
  // A zero byte somewhere: __vcmpeq4 sets 0xff in each byte lane that equals zero.
  return (__vcmpeq4(v.x, 0) | __vcmpeq4(v.y, 0) | __vcmpeq4(v.z, 0) | __vcmpeq4(v.w, 0)) != 0;
}

template <bool kAll, bool kEarlyExit>
__global__ void __launch_bounds__(kBlock)
    any_all_votes(const std::uint8_t* in, std::size_t n, unsigned* partials, unsigned* tickets, unsigned* stop,
                  int* result) {
  __shared__ bool last;
  const unsigned lane = threadIdx.x % kWarp;
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
  const std::size_t vectors = aligned ? n / 16 : 0;
  const std::size_t tile = std::size_t{kBlock} * kVotes, rounds = vectors / tile / gridDim.x;
  bool found = false;
  unsigned stopped = 0;  // lane 0: the flag as read at the previous trip (its load flies during the trip)
  for (std::size_t r = 0; r < rounds; ++r) {
    if constexpr (kEarlyExit) {
      if (__shfl_sync(0xffffffffu, stopped, 0)) break;
      if (lane == 0) stopped = ch10::Counter(*stop).load(cuda::memory_order_relaxed);
    }
    const std::size_t first = (r * gridDim.x + blockIdx.x) * tile + threadIdx.x;
    uint4 x[kVotes];
#pragma unroll
    for (unsigned u = 0; u < kVotes; ++u) x[u] = __ldg(reinterpret_cast<const uint4*>(in) + first + u * kBlock);
#pragma unroll
    for (unsigned u = 0; u < kVotes; ++u) found |= decides(x[u], kAll);
    if constexpr (kEarlyExit)
      if (__any_sync(0xffffffffu, found) && lane == 0) ch10::Counter(*stop).store(1, cuda::memory_order_relaxed);
  }
  // The rest: whole vectors one per thread, then single bytes (all of them when unaligned).
  const std::size_t thread = std::size_t{blockIdx.x} * kBlock + threadIdx.x, threads = std::size_t{gridDim.x} * kBlock;
  for (std::size_t v = rounds * gridDim.x * tile + thread; v < vectors; v += threads)
    found |= decides(__ldg(reinterpret_cast<const uint4*>(in) + v), kAll);
  for (std::size_t i = vectors * 16 + thread; i < n; i += threads) found |= kAll ? in[i] == 0 : in[i] != 0;
  const bool block_found = __syncthreads_or(found);
  if (gridDim.x == 1) {  // every warp has left its loop (the vote above): the flag is read no more
    if (threadIdx.x == 0) {
      *result = kAll ? !block_found : block_found;
      if constexpr (kEarlyExit) ch10::Counter(*stop).store(0, cuda::memory_order_relaxed);
    }
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_found;
    last = ch10::take_ticket(tickets) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  bool any = false;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kBlock) any |= partials[i] != 0;
  any = __syncthreads_or(any);
  if (threadIdx.x == 0) {
    *result = kAll ? !any : any;
    ch10::Counter(*tickets).store(0, cuda::memory_order_relaxed);
    ch10::Counter(*stop).store(0, cuda::memory_order_relaxed);
  }
}

template <bool kAll, bool kEarlyExit>
unsigned votes_max_blocks() {
  return ch07::device_limits<any_all_votes<kAll, kEarlyExit>>().max_blocks;
}

struct VoteScratch {
  unsigned *tickets, *stop, *partials;
  std::size_t zeroed_bytes, bytes;
  VoteScratch(void* base, unsigned blocks) {
    red::ScratchCarver carve(base);
    tickets = carve.take<unsigned>(1);
    stop = carve.take<unsigned>(1);
    zeroed_bytes = carve.bytes();
    partials = carve.take<unsigned>(blocks);
    bytes = carve.bytes();
  }
};
template <bool kAll, bool kEarlyExit>
std::size_t votes_scratch_bytes() {
  return VoteScratch(nullptr, votes_max_blocks<kAll, kEarlyExit>()).bytes;
}
template <bool kAll, bool kEarlyExit>
std::size_t votes_zeroed_scratch_bytes() {
  return VoteScratch(nullptr, votes_max_blocks<kAll, kEarlyExit>()).zeroed_bytes;
}

// any (kAll false) or all (kAll true) of n bytes: the int 0 or 1 at the result.
template <bool kAll, bool kEarlyExit>
void launch_votes(const Call& c) {
  red::check_scratch("13_custom_ops", c.scratch, c.scratch_bytes, votes_scratch_bytes<kAll, kEarlyExit>());
  if (c.n == 0) return red::launch_store_identity<std::conditional_t<kAll, AllNonzero, AnyNonzero>>(c.output, c.stream);
  const unsigned max_blocks = votes_max_blocks<kAll, kEarlyExit>();
  const VoteScratch s(c.scratch, max_blocks);
  const std::size_t tiles = red::ceil_div(c.n, std::size_t{kBlock} * kVotes * 16);
  const unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>(tiles, 1, max_blocks));
  any_all_votes<kAll, kEarlyExit><<<blocks, kBlock, 0, c.stream>>>(static_cast<const std::uint8_t*>(c.input), c.n, s.partials,
                                                                    s.tickets, s.stop, static_cast<int*>(c.output));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch13
