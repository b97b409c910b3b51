// Chapter 10 - one launch for any n: the blocks meet through memory.
//
// Idea: chapter 07's pass 1, unchanged, and no pass 2. Every block writes its partial into scratch,
// then takes a ticket from a counter beside the partials (one atomic). Tickets are numbered 0, 1,
// 2, ... in the order the blocks get there, so the block that draws the last one knows every
// other partial is written: it combines them in index order (the result's bits depend on n and the
// grid only, as in 07) and sets the counter back to 0 for the next call. One launch, no memset, no
// host synchronisation. What makes "every other partial is written" true is the memory model: a
// partial of 4 bytes or fewer travels with a flag in one 8-byte word, which needs no ordering at
// all (flagged partials, below); a wider one is published by a ticket taken with release and
// acquire semantics (take_ticket).
// Smaller change: up to two of 07's tiles one block does everything (no ticket). The block's tree
// is chapter 06's and the launch is an ordinary one. The kernels the benchmark measures beside this
// one, each a choice changed, are variant_kernels.cuh's; this file does not include them.
// Cost: the input read once; 1 launch whatever n; per block one store and one atomic on one
// address; the last block reads the partials (blocks x 8 bytes, or blocks x sizeof(Acc)) once
// more. Scratch: a 4-byte counter and an 8-byte slot per block that the caller zeroes once
// (Chapter::zeroed_scratch_bytes), then the partials.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cuda/atomic>
#include <stdexcept>

#include "06_warp_shuffle/reduce.cuh"  // ch06::block_reduce
#include "07_two_pass/reduce.cuh"      // ch07::accumulate_share, Array, its loads (Tuning), device_limits
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch10 {

constexpr unsigned kBlock = ch07::kBlock;  // 256 threads, as in 07's pass 1
constexpr unsigned kWarp = ch06::kWarp;

// Pass 1's loads are 07's (ch07::Tuning: 16-byte vectors, 8 in flight a thread, 32 adds a trip at
// most). The helpers below that size a grid or read a call's input take the loads as `Loads`,
// because the tuned kernel that chapter 13 runs reads with fewer elements a trip for its long loads.

// Up to this many of 07's tiles one block does everything, in as many trips: no ticket at all.
// A second trip of loads in one block costs less than the ticket between two blocks (the variant
// single_block_1_tile measures it).
constexpr std::size_t kSingleBlockTiles = 2;

// ---- the ticket -----------------------------------------------------------------------------------
//
// Thread 0 of every block has just stored the block's partial. Its ticket must not be seen by
// another block before that store is: release. And the block that draws the last ticket must not
// read any partial as it was before its owner's release: acquire. One atomic read-modify-write with
// acq_rel order is both (PTX: atom.acq_rel.gpu). At device scope, because the blocks that meet run
// on different SMs. Without either half, nothing orders a store and an atomic to two addresses as
// another SM sees them; the README shows what then goes wrong. Chapters 11 to 13 take the same
// ticket.
// [excerpt: take-ticket]
__device__ inline unsigned take_ticket(unsigned* tickets) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*tickets);
  return counter.fetch_add(1, cuda::memory_order_acq_rel);
}
// [end: take-ticket]

// ---- flagged partials: the data carries its own "written" -------------------------------------
//
// The ticket needs the release only because the partial and the ticket are two addresses. A
// partial of 4 bytes or fewer can travel with a flag in ONE 8-byte store, which another thread
// reads whole or not at all (an aligned 8-byte access is single-copy atomic): who sees the flag
// sees the value. Then nothing needs ordering. Every block stores {1, partial} into its slot and
// takes a relaxed ticket; the last block reads each slot until its flag is set (a block that has
// drawn its ticket has already issued that store, so the wait ends as soon as it lands), and sets
// the slot back to 0 for the next call. CUB's decoupled look-back (DeviceScan) packs a tile's
// status and value into one word the same way, for the same reason.
template <class Acc>
inline constexpr bool kFlaggable = sizeof(Acc) <= 4;

template <class Acc>
__device__ unsigned long long flagged(Acc v) {
  unsigned bits = 0;
  memcpy(&bits, &v, sizeof(Acc));
  return (1ull << 32) | bits;
}
template <class Acc>
__device__ Acc unflagged(unsigned long long word) {
  const unsigned bits = static_cast<unsigned>(word);
  Acc v;
  memcpy(&v, &bits, sizeof(Acc));
  return v;
}

using Slot = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
using Counter = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

// Slot i's word once its flag is set. Within one call the wait is the time the store takes to land:
// a few polls. The flag can fail to come only when the contract is broken (two calls in flight on
// one scratch, and the other call's last block emptied this slot); the wait would then spin for
// ever and hang the GPU, so after kMaxPolls polls (seconds of polling, about a microsecond each)
// the kernel stops with an error (cudaErrorLaunchFailure on the next synchronising call). The guard
// counts polls, not time: a correct call paused by preemption, another process's work or a
// debugger does not poll while paused and never reaches it.
__device__ inline unsigned long long wait_for_flag(unsigned long long* slot) {
  constexpr unsigned kMaxPolls = 1u << 22;
  unsigned long long word = Slot(*slot).load(cuda::memory_order_relaxed);
  for (unsigned polls = 0; (word >> 32) == 0; word = Slot(*slot).load(cuda::memory_order_relaxed))
    if (++polls == kMaxPolls) __trap();
  return word;
}

// ---- the meeting: publish, draw, and the last block gathers --------------------------------------

// Thread 0 publishes the block's partial, then draws a ticket: the ticket's number. A partial of 4
// bytes or fewer goes with its flag into the block's slot, and the ticket is relaxed; a wider one
// goes into `partials`, and the ticket is acq_rel. Either way the store comes first in the thread's
// program, so a block that holds a ticket has issued its store.
// [excerpt: ticket]
template <class Op>
__device__ unsigned publish_and_take_ticket(typename Op::Acc acc, typename Op::Acc* partials, unsigned long long* slots,
                                            unsigned* tickets) {
  if constexpr (kFlaggable<typename Op::Acc>) {
    Slot(slots[blockIdx.x]).store(flagged(acc), cuda::memory_order_relaxed);
    return Counter(*tickets).fetch_add(1, cuda::memory_order_relaxed);
  } else {
    partials[blockIdx.x] = acc;
    return take_ticket(tickets);
  }
}
// [end: ticket]

// The last block: this thread's share of the partials combined into `total`, partial i going to
// thread i % kBlock, in index order, whichever block came last. Each flagged slot is emptied once
// read.
// [excerpt: last-block]
template <class Op>
__device__ void combine_partials(typename Op::Acc& total, const typename Op::Acc* partials, unsigned long long* slots) {
  using Acc = typename Op::Acc;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kBlock) {
    if constexpr (kFlaggable<Acc>) {
      const unsigned long long word = wait_for_flag(&slots[i]);
      Slot(slots[i]).store(0, cuda::memory_order_relaxed);  // empty again for the next call
      total = Op::combine(total, unflagged<Acc>(word));
    } else {
      total = Op::combine(total, partials[i]);
    }
  }
}
// [end: last-block]

// ---- the kernel -------------------------------------------------------------------------------------

// 07's pass 1 and chapter 06's block tree to each block's partial, then the meeting above.
// `tickets` and `slots` are 0 when the kernel starts (the caller zeroed them once; every call
// leaves them 0).
// [excerpt: kernel]
template <class Op, class Source>
__global__ void __launch_bounds__(kBlock)
    reduce_single_pass(Source src, std::size_t n, typename Op::Acc* partials, unsigned long long* slots,
                       unsigned* tickets, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kWarp];
  __shared__ bool last;
  const Acc acc = ch06::block_reduce<Op>(ch07::accumulate_share<Op, ch07::Tuning>(src, n), per_warp);
  if (gridDim.x == 1) {  // one block: no one to wait for, and no ticket
    if (threadIdx.x == 0) Op::store(result, acc);
    return;
  }
  if (threadIdx.x == 0) last = publish_and_take_ticket<Op>(acc, partials, slots, tickets) == gridDim.x - 1;
  // Every thread sees `last`; thread 0's acquire, then this barrier, orders the whole block's reads
  // of the partials after every other block's release (causality is transitive in the PTX model).
  __syncthreads();
  if (!last) return;
  Acc total = Op::identity();
  combine_partials<Op>(total, partials, slots);
  total = ch06::block_reduce<Op>(total, per_warp);
  if (threadIdx.x == 0) {
    Op::store(result, total);
    // Every block has drawn its ticket: nothing else touches the counter in this grid, and the next
    // call's kernel reads it only after this one has ended. Left at 0 for it.
    Counter(*tickets).store(0, cuda::memory_order_relaxed);
  }
}
// [end: kernel]

// ---- the launcher ------------------------------------------------------------------------------------

// The scratch: the counter and the flagged slots first (the bytes the caller zeroes once), then one
// partial per block of the largest grid.
template <class Acc>
struct Scratch {
  unsigned* tickets;
  unsigned long long* slots;
  Acc* partials;
  std::size_t zeroed_bytes;
  std::size_t bytes;
  Scratch(void* base, unsigned max_blocks) {
    red::ScratchCarver carve(base);
    tickets = carve.take<unsigned>(1);
    slots = carve.take<unsigned long long>(max_blocks);
    zeroed_bytes = carve.bytes();
    partials = carve.take<Acc>(max_blocks);
    bytes = carve.bytes();
  }
};

template <class Op, class Loads = ch07::Tuning>
using SourceOf = ch07::Array<typename Op::In, typename Loads::Load>;

// A call's input as 07's loads read it; refused when the pointer is off its element type's boundary.
template <class Op, class Loads = ch07::Tuning>
SourceOf<Op, Loads> source_of(const red::ReduceCall& c) {
  const SourceOf<Op, Loads> src{static_cast<const typename Op::In*>(c.input), c.n};
  if (!src.element_aligned()) throw std::invalid_argument("10_single_pass: input not aligned to its element type");
  return src;
}

// The ticket kernel's grid limit, 07's rule: as many blocks as the GPU holds at once (asked once
// per device, ch07::device_limits).
template <class Op>
ch07::DeviceLimits limits() {
  return ch07::device_limits<reduce_single_pass<Op, SourceOf<Op>>>();
}

// Elements in one of 07's tiles: kBlock threads x their unroll of vectors.
template <class Op, class Loads = ch07::Tuning>
std::size_t tile_elements() {
  using Source = SourceOf<Op, Loads>;
  return std::size_t{kBlock} * ch07::unroll_of<Loads, Source, Op>() * Source::kCount;
}

// The grid for n elements: one block up to kSingleBlockTiles of 07's tiles, else one block per
// tile, at most max_blocks.
template <class Op, class Loads = ch07::Tuning>
unsigned grid_blocks(std::size_t n, unsigned max_blocks) {
  const std::size_t per_tile = tile_elements<Op, Loads>();
  if (n <= kSingleBlockTiles * per_tile) return 1;
  return static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(n, per_tile), max_blocks));
}

template <class Op>
std::size_t scratch_bytes(std::size_t) {
  return Scratch<typename Op::Acc>(nullptr, limits<Op>().max_blocks).bytes;
}
template <class Op>
std::size_t zeroed_scratch_bytes() {
  return Scratch<typename Op::Acc>(nullptr, limits<Op>().max_blocks).zeroed_bytes;
}

// One launch on c.stream. The scratch's counter and slots must be 0 (zeroed once by whoever
// allocated it) and no other call may be using this scratch at the same time: two calls in flight
// on one counter would count each other's blocks (the README shows it).
template <class Op>
void launch(const red::ReduceCall& c) {
  red::check_scratch("10_single_pass", c.scratch, c.scratch_bytes, scratch_bytes<Op>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  const SourceOf<Op> src = source_of<Op>(c);
  const unsigned max_blocks = limits<Op>().max_blocks;
  const Scratch<typename Op::Acc> s(c.scratch, max_blocks);
  reduce_single_pass<Op><<<grid_blocks<Op>(c.n, max_blocks), kBlock, 0, c.stream>>>(
      src, c.n, s.partials, s.slots, s.tickets, c.output);
  CUDA_CHECK(cudaGetLastError());
}

// The longest chain of additions an element goes through: its thread's share (07's pass 1), the
// vector it came in, the warp and block trees, then the last block's: a thread's partials in turn,
// and the trees again.
inline std::size_t single_pass_depth(std::size_t n, unsigned blocks, unsigned unroll, unsigned per_vector) {
  if (n == 0) return 0;
  const std::size_t trees = 5 + red::ceil_log2(kBlock / kWarp);
  const std::size_t share = red::ceil_div(n, std::size_t{blocks} * kBlock) + (unroll + 1) * per_vector + 2;
  const std::size_t last_block = blocks > 1 ? red::ceil_div(blocks, kBlock) + trees : 0;
  return share + trees + last_block;
}

}  // namespace ch10
