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
// Smaller changes: up to two of 07's tiles one block does everything (no ticket); the block and
// warp trees are written with cooperative groups (the same shuffles as chapter 06's, which the
// benchmark and the SASS show); and the kernel is launched with programmatic dependent launch, so
// that back-to-back calls overlap one launch with the previous kernel's end.
// Cost: the input read once; 1 launch whatever n; per block one store and one atomic on one
// address; the last block reads the partials (blocks x 8 bytes, or blocks x sizeof(Acc)) once
// more. Scratch: a 4-byte counter and an 8-byte slot per block that the caller zeroes once
// (Chapter::zeroed_scratch_bytes), then the partials.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cuda/atomic>
#include <stdexcept>

#include "06_warp_shuffle/reduce.cuh"  // ch06::block_reduce (the hand-written trees, for a variant)
#include "07_two_pass/reduce.cuh"      // ch07::accumulate_share, Array, Tuning, device_limits
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch10 {

namespace cg = cooperative_groups;

constexpr unsigned kBlock = ch07::kBlock;  // 256 threads, as in 07's pass 1
constexpr unsigned kWarp = 32;

// The lesson's choices, on top of 07's (loads, unroll, fixed grid). The benchmark measures
// policies that change one each (variants.cuh).
struct Tuning : ch07::Tuning {
  // The ticket as one cuda::atomic_ref fetch_add with acq_rel order; false: the classic pair of
  // __threadfence() around a relaxed atomicAdd (cuda-samples' threadFenceReduction).
  static constexpr bool kAtomicRef = true;
  // The block's tree with cooperative groups (cg::reduce over warp tiles); false: chapter 06's
  // hand-written shuffles.
  static constexpr bool kCooperativeGroups = true;
  // Launched with programmatic dependent launch (sm_90+): the kernel may be launched before the
  // previous kernel on the stream has ended, and waits for it in cudaGridDependencySynchronize().
  static constexpr bool kProgrammaticLaunch = true;
  // Partials of 4 bytes or fewer travel with a flag in one 8-byte word, and the ticket needs no
  // ordering at all (flagged partials, below); false: every type takes the acq_rel ticket.
  static constexpr bool kFlaggedPartials = true;
  // Up to this many of 07's tiles one block does everything, in as many trips: no ticket at all.
  // A second trip of loads in one block costs less than the ticket between two blocks (the
  // variant single_block_1_tile measures it).
  static constexpr std::size_t kSingleBlockTiles = 2;
};

// ---- the block's tree, with cooperative groups --------------------------------------------------
//
// cg::reduce over a 32-thread tile is a warp's shuffle tree (it compiles to the SHFL instructions
// of chapter 06's warp_reduce); the tile and the block are named objects instead of threadIdx
// arithmetic, and block.sync() is __syncthreads(). The result is valid in thread 0. Safe to call
// twice with the same per_warp: the first sync keeps a warp from writing per_warp while warp 0 may
// still read the previous call's values.
template <class Op>
__device__ typename Op::Acc block_reduce_cg(typename Op::Acc v, typename Op::Acc* per_warp) {
  using Acc = typename Op::Acc;
  const auto combine = [](const Acc& a, const Acc& b) { return Op::combine(a, b); };
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<kWarp> warp = cg::tiled_partition<kWarp>(block);
  v = cg::reduce(warp, v, combine);
  block.sync();
  if (warp.thread_rank() == 0) per_warp[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    v = warp.thread_rank() < warp.meta_group_size() ? per_warp[warp.thread_rank()] : Op::identity();
    v = cg::reduce(warp, v, combine);
  }
  return v;
}

template <class Op, class Policy>
__device__ typename Op::Acc block_reduce(typename Op::Acc v, typename Op::Acc* per_warp) {
  if constexpr (Policy::kCooperativeGroups)
    return block_reduce_cg<Op>(v, per_warp);
  else
    return ch06::block_reduce<Op>(v, per_warp);
}

// ---- the ticket -----------------------------------------------------------------------------------
//
// Thread 0 of every block has just stored the block's partial. Its ticket must not be seen by
// another block before that store is: release. And the block that draws the last ticket must not
// read any partial as it was before its owner's release: acquire. One atomic read-modify-write with
// acq_rel order is both (PTX: atom.acq_rel.gpu). At device scope, because the blocks that meet run
// on different SMs. Without either half, nothing orders a store and an atomic to two addresses as
// another SM sees them; the README shows what then goes wrong.
template <class Policy>
__device__ unsigned take_ticket(unsigned* tickets) {
  if constexpr (Policy::kAtomicRef) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*tickets);
    return counter.fetch_add(1, cuda::memory_order_acq_rel);
  } else {
    __threadfence();  // the partial before the ticket (a fence.sc.gpu: stronger, and dearer, than release)
    const unsigned ticket = atomicAdd(tickets, 1u);
    __threadfence();  // the partials after the ticket
    return ticket;
  }
}

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

// ---- the kernel -------------------------------------------------------------------------------------

// 07's pass 1 to each block's partial, then the ticket. `tickets` and `slots` are 0 when the kernel
// starts (the caller zeroed them once; every call leaves them 0).
template <class Op, class Policy, class Source>
__global__ void __launch_bounds__(kBlock)
    reduce_single_pass(Source src, std::size_t n, typename Op::Acc* partials, unsigned long long* slots,
                       unsigned* tickets, void* result) {
  using Acc = typename Op::Acc;
  constexpr bool kFlagged = Policy::kFlaggedPartials && kFlaggable<Acc>;
  __shared__ Acc per_warp[kWarp];
  __shared__ bool last;
#if __CUDA_ARCH__ >= 900
  // Programmatic dependent launch. First: let the next kernel on the stream be launched now (it
  // waits in its own cudaGridDependencySynchronize until this grid has ended). Then wait until the
  // kernel before this one has ended and its writes are visible: it may have written the input, and
  // a previous call's last block is still resetting the counter. Without the launch attribute both
  // return at once.
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
#endif
  const Acc acc = block_reduce<Op, Policy>(ch07::accumulate_share<Op, Policy>(src, n), per_warp);
  if (gridDim.x == 1) {  // one block: no one to wait for, and no ticket
    if (threadIdx.x == 0) Op::store(result, acc);
    return;
  }
  // [excerpt: ticket]
  if (threadIdx.x == 0) {
    if constexpr (kFlagged) {
      Slot(slots[blockIdx.x]).store(flagged(acc), cuda::memory_order_relaxed);
      last = Counter(*tickets).fetch_add(1, cuda::memory_order_relaxed) == gridDim.x - 1;
    } else {
      partials[blockIdx.x] = acc;
      last = take_ticket<Policy>(tickets) == gridDim.x - 1;
    }
  }
  // Every thread sees `last`; thread 0's acquire, then this barrier, orders the whole block's reads
  // of the partials after every other block's release (causality is transitive in the PTX model).
  __syncthreads();
  if (!last) return;
  // [end: ticket]
  // [excerpt: last-block]
  // The last block: partial i goes to thread i % kBlock, in index order, then the block's tree.
  Acc total = Op::identity();
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kBlock) {
    if constexpr (kFlagged) {
      const unsigned long long word = wait_for_flag(&slots[i]);
      Slot(slots[i]).store(0, cuda::memory_order_relaxed);  // empty again for the next call
      total = Op::combine(total, unflagged<Acc>(word));
    } else {
      total = Op::combine(total, partials[i]);
    }
  }
  total = block_reduce<Op, Policy>(total, per_warp);
  if (threadIdx.x == 0) {
    Op::store(result, total);
    // Every block has drawn its ticket: nothing else touches the counter in this grid, and the next
    // call's kernel reads it only after this one has ended. Left at 0 for it.
    Counter(*tickets).store(0, cuda::memory_order_relaxed);
  }
  // [end: last-block]
}

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

template <class Op, class Policy>
using SourceOf = ch07::Array<typename Op::In, typename Policy::Load>;

// The ticket kernel's grid limit, 07's rule: as many blocks as the GPU holds at once (asked once
// per device, ch07::device_limits).
template <class Op, class Policy>
ch07::DeviceLimits limits() {
  return ch07::device_limits<reduce_single_pass<Op, Policy, SourceOf<Op, Policy>>>();
}

// The grid for n elements: one block up to kSingleBlockTiles of 07's tiles (kBlock x unroll
// vectors), else one block per tile, at most max_blocks.
template <class Op, class Policy>
unsigned grid_blocks(std::size_t n, unsigned max_blocks) {
  using Source = SourceOf<Op, Policy>;
  const std::size_t per_tile = std::size_t{kBlock} * ch07::unroll_of<Policy, Source>() * Source::kCount;
  if (n <= Policy::kSingleBlockTiles * per_tile) return 1;
  return static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(n, per_tile), max_blocks));
}

template <class Op, class Policy = Tuning>
std::size_t scratch_bytes(std::size_t) {
  return Scratch<typename Op::Acc>(nullptr, limits<Op, Policy>().max_blocks).bytes;
}
template <class Op, class Policy = Tuning>
std::size_t zeroed_scratch_bytes() {
  return Scratch<typename Op::Acc>(nullptr, limits<Op, Policy>().max_blocks).zeroed_bytes;
}

// One launch on c.stream. The scratch's counter and slots must be 0 (zeroed once by whoever
// allocated it) and no other call may be using this scratch at the same time: two calls in flight
// on one counter would count each other's blocks (the README shows it).
template <class Op, class Policy = Tuning>
void launch(const red::ReduceCall& c) {
  red::check_scratch("10_single_pass", c.scratch, c.scratch_bytes, scratch_bytes<Op, Policy>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  using Source = SourceOf<Op, Policy>;
  const Source src{static_cast<const typename Op::In*>(c.input)};
  if (!src.element_aligned()) throw std::invalid_argument("10_single_pass: input not aligned to its element type");
  const ch07::DeviceLimits device = limits<Op, Policy>();
  const Scratch<typename Op::Acc> s(c.scratch, device.max_blocks);

  CUDA_CHECK(ch07::launch_early(reduce_single_pass<Op, Policy, Source>, dim3(grid_blocks<Op, Policy>(c.n, device.max_blocks)),
                                dim3(kBlock), 0, c.stream, Policy::kProgrammaticLaunch && device.programmatic, src, c.n,
                                s.partials, s.slots, s.tickets, c.output));
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
