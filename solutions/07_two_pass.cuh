// Chapter 07's exercise, solved: "last block done" in place of pass 2.
//
// Idea: chapter 07's pass 1, unchanged, with pass 2 moved to its end. Every block writes its
// partial into scratch and takes a ticket from a counter beside the partials (one atomicAdd).
// Tickets are numbered 0, 1, 2, ... in the order the blocks get there, so the block that draws
// ticket gridDim.x - 1 knows that every other block has written its partial: it combines them
// itself, in the order 07's pass 2 uses, so the result has 07's bits, and sets the counter back
// to 0. No second kernel waits for the first.
// Cost, against 07: one launch instead of two, but one 4-byte cudaMemsetAsync per call (the
// counter must be 0 when the first block takes a ticket, and the contract lets the caller's
// scratch hold anything); per block, one fence and one atomic; the last block combines 528
// partials (f32 sum on the H200) after finishing its own tile, as pass 2 did after pass 1.
// Scratch: 07's partials plus 4 bytes for the counter.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "07_two_pass/reduce.cuh"  // ch07's grid, loads, Tuning, two_pass_depth; ch06::block_reduce
#include "chapter.hpp"
#include "chapter_builder.cuh"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace sol07 {

using ch06::kWarp;
using ch07::kBlock;
using Policy = ch07::Tuning;

template <class Op>
using SourceOf = ch07::Array<typename Op::In, Policy::Load>;

// The last block combines the partials exactly as 07's pass 2 does: pass 2's 1024 threads each
// take partials t, t + 1024, ..., its 32 warps reduce with warp shuffles, then warp 0 reduces the
// 32 warp values. This block has 256 threads, so each of its warps plays four of pass 2's warps,
// one after the other. Same operations in the same order: the same bits as 07. The result is
// valid in thread 0; every thread of the block must call this (it has a barrier).
template <class Op>
__device__ typename Op::Acc combine_partials_as_pass2(const typename Op::Acc* partials, unsigned count,
                                                      typename Op::Acc* per_warp) {
  using Acc = typename Op::Acc;
  constexpr unsigned kPass2Warps = ch07::kFinalBlock / kWarp;  // 32
  constexpr unsigned kWarps = kBlock / kWarp;                  // 8
  static_assert(kPass2Warps % kWarps == 0 && kPass2Warps <= kWarp, "each warp plays whole warps of pass 2");
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (unsigned played = warp; played < kPass2Warps; played += kWarps) {
    Acc acc = Op::identity();
    for (unsigned i = played * kWarp + lane; i < count; i += ch07::kFinalBlock) acc = Op::combine(acc, partials[i]);
    acc = ch06::warp_reduce<Op>(acc, kWarp);
    if (lane == 0) per_warp[played] = acc;
  }
  __syncthreads();  // all 32 warp values are in shared memory
  Acc acc = Op::identity();
  if (warp == 0) acc = ch06::warp_reduce<Op>(per_warp[lane], kWarp);
  return acc;
}

// 07's pass 1, then the ticket. `tickets` must be 0 when the kernel starts (the launcher's
// memset); the last block leaves it 0 again.
template <class Op, class Source>
__global__ void __launch_bounds__(kBlock)
    reduce_last_block(Source src, std::size_t n, typename Op::Acc* partials, unsigned* tickets, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kWarp];
  __shared__ bool last;
  const Acc acc = ch06::block_reduce<Op>(ch07::accumulate_share<Op, Policy>(src, n), per_warp);
  if (gridDim.x == 1) {  // one block: no one to wait for, as in 07
    if (threadIdx.x == 0) Op::store(result, acc);
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    // Release: the fence makes this block's partial visible to every block of the GPU before the
    // ticket that announces it. Without it nothing orders a store and an atomic to two addresses
    // as other SMs see them (the compiler may even swap them): the last block can draw its ticket
    // while a partial is still on its way, and add what that slot held before (the previous
    // call's partial, or the caller's garbage). Tests rarely catch it; it is a race all the same.
    __threadfence();
    const unsigned ticket = atomicAdd(tickets, 1u);
    last = ticket == gridDim.x - 1;
    // Acquire: the other half of the pairing. The last block's reads of the partials must not be
    // served from before its ticket (from this SM's L1, or reordered ahead of the atomic).
    if (last) __threadfence();
  }
  // `last` is set, thread 0's fence comes before every thread's reads below, and per_warp is free
  // again (block_reduce's last reads of it came before this barrier).
  __syncthreads();
  if (!last) return;
  const Acc total = combine_partials_as_pass2<Op>(partials, gridDim.x, per_warp);
  if (threadIdx.x == 0) {
    Op::store(result, total);
    // Every block has taken its ticket, so nothing else touches the counter in this grid. Left at
    // 0, the scratch is ready for the next call of a caller that zeroed it once.
    *tickets = 0;
  }
}

// --- the launcher ----------------------------------------------------------------------------

// Scratch: one partial per block of 07's largest grid, then the ticket counter.
template <class Acc>
struct TicketScratch {
  Acc* partials;
  unsigned* tickets;
  std::size_t bytes;
  TicketScratch(void* base, unsigned max_blocks) {
    red::ScratchCarver carve(base);
    partials = carve.take<Acc>(max_blocks);
    tickets = carve.take<unsigned>(1);
    bytes = carve.bytes();
  }
};

template <class Op>
unsigned max_blocks() {
  return ch07::limits_of<Op, Policy, SourceOf<Op>>().max_blocks;
}

template <class Op>
std::size_t scratch_bytes(std::size_t) {
  return TicketScratch<typename Op::Acc>(nullptr, max_blocks<Op>()).bytes;
}

template <class Op>
void launch(const red::ReduceCall& c) {
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  const SourceOf<Op> src{static_cast<const typename Op::In*>(c.input), c.n};
  if (!src.element_aligned()) throw std::invalid_argument("solution_07: input not aligned to its element type");
  const TicketScratch<typename Op::Acc> s(c.scratch, max_blocks<Op>());
  const unsigned blocks = ch07::pass1_blocks<Op, Policy, SourceOf<Op>>(c.n);  // 07's grid, so 07's bits
  // The price of the contract: scratch may hold anything, so the counter is zeroed on every call,
  // on the call's stream (asynchronous, ordered before the kernel). A caller who zeroed the
  // scratch once could skip this: the last block leaves the counter at 0.
  if (blocks > 1) CUDA_CHECK(cudaMemsetAsync(s.tickets, 0, sizeof(unsigned), c.stream));
  reduce_last_block<Op><<<blocks, kBlock, 0, c.stream>>>(src, c.n, s.partials, s.tickets, c.output);
  CUDA_CHECK_LAUNCH();
}

// --- registration ----------------------------------------------------------------------------

// 07's depth: the last block's tree is pass 2's. The deepest of the float types (16-bit inputs
// pack 8 elements per vector: fewer blocks, longer chains per thread).
template <class Op>
std::size_t depth_of(std::size_t n) {
  using Source = SourceOf<Op>;
  return ch07::two_pass_depth(n, ch07::pass1_blocks<Op, Policy, Source>(n), ch07::unroll_of<Policy, Source, Op>(),
                              Source::kCount);
}
inline std::size_t sum_depth(std::size_t n) {
  return std::max(depth_of<red::Sum<float>>(n), depth_of<red::Sum<__half>>(n));
}

inline const red::Chapter& chapter() {
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<red::AllOps, red::AllTypes>(
          "solution_07",
          "07's pass 1; the last block to take a ticket combines the partials: one launch, a counter in scratch",
          [](auto op) {
            using Op = decltype(op);
            return red::Launcher{&scratch_bytes<Op>, &launch<Op>};
          },
          sum_depth, "reduce_last_block"),
      {"reduce_two_pass", {{"last_block", 1}}});
  return ch;
}

}  // namespace sol07
