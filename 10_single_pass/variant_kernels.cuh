// Chapter 10's kernels beside the lesson's, which the benchmark measures and the tests hold to the
// same answers (variants.cuh registers them):
//   - the tuned kernel: the lesson's, with the block's tree written with cooperative groups and a
//     programmatic dependent launch, each a choice (TunedChoices). Chapter 13 runs its operators
//     through it: cg::reduce shuffles any accumulator, where chapter 06's shuffles take numbers
//     and argmax pairs only;
//   - the lesson's kernel with every partial published by the ticket, no flags: with the lesson's
//     acq_rel ticket, or with the classic one, __threadfence() around a relaxed atomicAdd;
//   - the lesson's kernel with one block up to one of 07's tiles, not two;
//   - the other way for the blocks of one grid to meet: grid.sync() in a cooperative launch.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <string>

#include "10_single_pass/reduce.cuh"

namespace ch10 {

namespace cg = cooperative_groups;

// ---- the block's tree, with cooperative groups --------------------------------------------------
//
// cg::reduce over a 32-thread tile is a warp's shuffle tree (it compiles to the SHFL instructions
// of chapter 06's warp_reduce); the tile and the block are named objects instead of threadIdx
// arithmetic, and block.sync() is __syncthreads(). The result is valid in thread 0. Safe to call
// twice with the same per_warp: the first sync keeps a warp from writing per_warp while warp 0 may
// still read the previous call's values.
// [excerpt: block-reduce-cg]
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
// [end: block-reduce-cg]

// ---- the tuned kernel ----------------------------------------------------------------------------

// The tuned kernel's two choices of launch cost. Its loads are a policy of 07's (ch07::Tuning, or
// one that changes them, as chapter 13's do). The variants switch each choice on alone (variants.cuh).
struct TunedChoices {
  // The block's tree with cooperative groups (block_reduce_cg); false: chapter 06's.
  static constexpr bool kCooperativeGroups = true;
  // Launched with programmatic dependent launch (sm_90+): the kernel may be launched before the
  // previous kernel on the stream has ended, and waits for it in cudaGridDependencySynchronize().
  static constexpr bool kProgrammaticLaunch = true;
};

template <class Op, class Choices>
__device__ typename Op::Acc block_tree(typename Op::Acc v, typename Op::Acc* per_warp) {
  if constexpr (Choices::kCooperativeGroups)
    return block_reduce_cg<Op>(v, per_warp);
  else
    return ch06::block_reduce<Op>(v, per_warp);
}

// The lesson's kernel, with the chosen tree and, where chosen, the two calls of a programmatic
// dependent launch first.
template <class Op, class Loads, class Choices, class Source>
__global__ void __launch_bounds__(kBlock)
    reduce_single_pass_tuned(Source src, std::size_t n, typename Op::Acc* partials, unsigned long long* slots,
                             unsigned* tickets, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kWarp];
  __shared__ bool last;
  // [excerpt: programmatic-launch]
#if __CUDA_ARCH__ >= 900
  if constexpr (Choices::kProgrammaticLaunch) {
    // First: let the next kernel on the stream be launched now (it waits in its own
    // cudaGridDependencySynchronize until this grid has ended). Then wait until the kernel before
    // this one has ended and its writes are visible: it may have written the input, and a previous
    // call's last block is still resetting the counter. Without the launch attribute both return
    // at once.
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize();
  }
#endif
  // [end: programmatic-launch]
  const Acc acc = block_tree<Op, Choices>(ch07::accumulate_share<Op, Loads>(src, n), per_warp);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) Op::store(result, acc);
    return;
  }
  if (threadIdx.x == 0) last = publish_and_take_ticket<Op>(acc, partials, slots, tickets) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  Acc total = Op::identity();
  combine_partials<Op>(total, partials, slots);
  total = block_tree<Op, Choices>(total, per_warp);
  if (threadIdx.x == 0) {
    Op::store(result, total);
    Counter(*tickets).store(0, cuda::memory_order_relaxed);
  }
}

template <class Op, class Loads = ch07::Tuning, class Choices = TunedChoices>
ch07::DeviceLimits tuned_limits() {
  return ch07::device_limits<reduce_single_pass_tuned<Op, Loads, Choices, SourceOf<Op, Loads>>>();
}

template <class Op, class Loads = ch07::Tuning, class Choices = TunedChoices>
std::size_t tuned_scratch_bytes(std::size_t) {
  return Scratch<typename Op::Acc>(nullptr, tuned_limits<Op, Loads, Choices>().max_blocks).bytes;
}
template <class Op, class Loads = ch07::Tuning, class Choices = TunedChoices>
std::size_t tuned_zeroed_scratch_bytes() {
  return Scratch<typename Op::Acc>(nullptr, tuned_limits<Op, Loads, Choices>().max_blocks).zeroed_bytes;
}

// The lesson's launch, through ch07::launch_early: with the launch attribute where chosen and
// where the GPU and the compiled code can (sm_90+).
template <class Op, class Loads = ch07::Tuning, class Choices = TunedChoices>
void launch_tuned(const red::ReduceCall& c) {
  red::check_scratch("10_single_pass", c.scratch, c.scratch_bytes, tuned_scratch_bytes<Op, Loads, Choices>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  const SourceOf<Op, Loads> src = source_of<Op, Loads>(c);
  const ch07::DeviceLimits device = tuned_limits<Op, Loads, Choices>();
  const Scratch<typename Op::Acc> s(c.scratch, device.max_blocks);
  CUDA_CHECK(ch07::launch_early(reduce_single_pass_tuned<Op, Loads, Choices, SourceOf<Op, Loads>>,
                                dim3(grid_blocks<Op, Loads>(c.n, device.max_blocks)), dim3(kBlock), 0, c.stream,
                                Choices::kProgrammaticLaunch && device.programmatic, src, c.n, s.partials, s.slots,
                                s.tickets, c.output));
}

// ---- partials without flags: the ticket alone publishes them ----------------------------------------
//
// The lesson's kernel with every partial stored into `partials` and published by the ticket, as the
// lesson does for partials wider than 4 bytes: what the flags save. The ticket is the lesson's
// acq_rel one, or (kFenced) the classic form of cuda-samples' threadFenceReduction:
// __threadfence() before a relaxed atomicAdd and after it. A __threadfence() is a fence.sc.gpu, a
// sequentially consistent fence: stronger, and dearer, than the release and acquire the ticket
// needs.
// [excerpt: fence-ticket]
__device__ inline unsigned take_fenced_ticket(unsigned* tickets) {
  __threadfence();  // the partial before the ticket
  const unsigned ticket = atomicAdd(tickets, 1u);
  __threadfence();  // the partials after the ticket
  return ticket;
}
// [end: fence-ticket]

template <class Op, bool kFenced, class Source>
__global__ void __launch_bounds__(kBlock)
    reduce_single_pass_unflagged(Source src, std::size_t n, typename Op::Acc* partials, unsigned* tickets,
                                 void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kWarp];
  __shared__ bool last;
  const Acc acc = ch06::block_reduce<Op>(ch07::accumulate_share<Op, ch07::Tuning>(src, n), per_warp);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) Op::store(result, acc);
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    last = (kFenced ? take_fenced_ticket(tickets) : take_ticket(tickets)) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  Acc total = Op::identity();
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kBlock) total = Op::combine(total, partials[i]);
  total = ch06::block_reduce<Op>(total, per_warp);
  if (threadIdx.x == 0) {
    Op::store(result, total);
    Counter(*tickets).store(0, cuda::memory_order_relaxed);
  }
}

template <class Op, bool kFenced>
ch07::DeviceLimits unflagged_limits() {
  return ch07::device_limits<reduce_single_pass_unflagged<Op, kFenced, SourceOf<Op>>>();
}
template <class Op, bool kFenced>
std::size_t unflagged_scratch_bytes(std::size_t) {
  return Scratch<typename Op::Acc>(nullptr, unflagged_limits<Op, kFenced>().max_blocks).bytes;
}
template <class Op, bool kFenced>
std::size_t unflagged_zeroed_scratch_bytes() {
  return Scratch<typename Op::Acc>(nullptr, unflagged_limits<Op, kFenced>().max_blocks).zeroed_bytes;
}

// The lesson's scratch (its slots stay 0, unused) and grid.
template <class Op, bool kFenced>
void launch_unflagged(const red::ReduceCall& c) {
  red::check_scratch("10_single_pass", c.scratch, c.scratch_bytes, unflagged_scratch_bytes<Op, kFenced>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  const SourceOf<Op> src = source_of<Op>(c);
  const unsigned max_blocks = unflagged_limits<Op, kFenced>().max_blocks;
  const Scratch<typename Op::Acc> s(c.scratch, max_blocks);
  reduce_single_pass_unflagged<Op, kFenced><<<grid_blocks<Op>(c.n, max_blocks), kBlock, 0, c.stream>>>(
      src, c.n, s.partials, s.tickets, c.output);
  CUDA_CHECK(cudaGetLastError());
}

// ---- one block up to one tile ----------------------------------------------------------------------
//
// The lesson's kernel on another grid: from two of 07's tiles on, two blocks and the ticket, where the
// lesson keeps one block up to two tiles. What a second trip of loads in one block saves.
template <class Op>
unsigned one_tile_grid_blocks(std::size_t n, unsigned max_blocks) {
  return static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(n, tile_elements<Op>()), max_blocks));
}

template <class Op>
void launch_one_tile(const red::ReduceCall& c) {
  red::check_scratch("10_single_pass", c.scratch, c.scratch_bytes, scratch_bytes<Op>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  const SourceOf<Op> src = source_of<Op>(c);
  const unsigned max_blocks = limits<Op>().max_blocks;
  const Scratch<typename Op::Acc> s(c.scratch, max_blocks);
  reduce_single_pass<Op><<<one_tile_grid_blocks<Op>(c.n, max_blocks), kBlock, 0, c.stream>>>(
      src, c.n, s.partials, s.slots, s.tickets, c.output);
  CUDA_CHECK(cudaGetLastError());
}

// ---- the grid-wide barrier ------------------------------------------------------------------
//
// The other way for the blocks of one grid to meet: cooperative groups' grid.sync(), a barrier
// every block of the grid waits at. It needs every block resident at once (a block that waits
// for one that cannot start would wait forever), so it is launched as a cooperative kernel, which
// the driver refuses when the grid is larger than the GPU holds. Block 0 then combines the
// partials as the lesson's last block does, with the lesson's tree: the same bits, for the same
// grid. No counter, so no scratch to keep zeroed; the barrier's own state is the driver's.
// [excerpt: grid-sync]
template <class Op, class Source>
__global__ void __launch_bounds__(kBlock)
    reduce_grid_sync(Source src, std::size_t n, typename Op::Acc* partials, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kWarp];
  const Acc acc = ch06::block_reduce<Op>(ch07::accumulate_share<Op, ch07::Tuning>(src, n), per_warp);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) Op::store(result, acc);
    return;
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
  cg::this_grid().sync();  // every block's partial is written and visible to every block
  if (blockIdx.x != 0) return;
  Acc total = Op::identity();
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kBlock) total = Op::combine(total, partials[i]);
  total = ch06::block_reduce<Op>(total, per_warp);
  if (threadIdx.x == 0) Op::store(result, total);
}
// [end: grid-sync]

template <class Op>
ch07::DeviceLimits grid_sync_limits() {
  return ch07::device_limits<reduce_grid_sync<Op, SourceOf<Op>>>();
}

template <class Op>
std::size_t grid_sync_scratch_bytes(std::size_t) {
  return grid_sync_limits<Op>().max_blocks * sizeof(typename Op::Acc);
}

template <class Op>
void launch_grid_sync(const red::ReduceCall& c) {
  red::check_scratch("10_single_pass", c.scratch, c.scratch_bytes, grid_sync_scratch_bytes<Op>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  const SourceOf<Op> src = source_of<Op>(c);
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid_blocks<Op>(c.n, grid_sync_limits<Op>().max_blocks));
  config.blockDim = dim3(kBlock);
  config.stream = c.stream;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, reduce_grid_sync<Op, SourceOf<Op>>, src, c.n,
                                static_cast<typename Op::Acc*>(c.scratch), c.output));
}

}  // namespace ch10
