// Chapter 06 - warp shuffles: the block reduction without a shared-memory tree.
//
// Idea: chapter 05's kernel, with one change: the block reduction. Each warp reduces its 32
// values in registers with __shfl_down_sync (block_reduce, below), so shared memory holds one
// value per warp and the block waits at 2 barriers instead of 8. The coarsened loads and the one
// atomic per block (ch04::atomic_combine) stay as they were.
// Cost: the input read once, ceil(n / (512 kCoarsen)) atomics as in 05; 2 barriers per block.
#pragma once

#include <type_traits>

#include "04_multiblock_atomic/reduce.cuh"  // ch04::atomic_combine and its launcher, as in 05
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "reduce_ops.cuh"

namespace ch06 {

// The new step: warp and block reductions with register shuffles, for any operator of
// reduce_ops.cuh and any block size up to 1024 (multiple of 32 or not). Chapters 07 and 08 reuse
// block_reduce as ch06::block_reduce.
//
// A warp's 32 lanes exchange registers with __shfl_down_sync: no shared memory and no barrier
// inside a warp. A block then needs shared memory only for one value per warp, and two barriers
// per call instead of chapter 05's eight.

constexpr unsigned kWarp = 32;

template <class T>
struct is_value_index : std::false_type {};
template <class W>
struct is_value_index<red::ValueIndex<W>> : std::true_type {};

// __shfl_down_sync for every accumulator type: 8- and 16-bit integers travel as int, an
// argmax pair as its two members.
template <class T>
__device__ T shfl_down(unsigned mask, T v, unsigned offset) {
  if constexpr (is_value_index<T>::value)
    return T{shfl_down(mask, v.value, offset), shfl_down(mask, v.index, offset)};
  else if constexpr (sizeof(T) < 4)
    return static_cast<T>(__shfl_down_sync(mask, static_cast<int>(v), offset));
  else
    return __shfl_down_sync(mask, v, offset);
}

// The lanes of this thread's warp that exist: all 32, except in the last warp of a block whose
// size is not a multiple of 32. A shuffle's mask must name exactly the lanes that take part.
__device__ inline unsigned lanes_in_my_warp() {
  const unsigned first = threadIdx.x / kWarp * kWarp;
  return min(kWarp, blockDim.x - first);
}
__device__ inline unsigned mask_of(unsigned lanes) { return lanes == kWarp ? 0xffffffffu : (1u << lanes) - 1; }

// Reduces v over the first `lanes` lanes of the warp; the result is valid in lane 0.
// Halving tree: at offset 16 lane i takes lane i + 16, at 8 lane i + 8, ... A lane whose partner
// does not exist (lane + offset >= lanes) keeps its value: the shuffled-in value is discarded.
// [excerpt: warp-reduce]
template <class Op>
__device__ typename Op::Acc warp_reduce(typename Op::Acc v, unsigned lanes) {
  const unsigned mask = mask_of(lanes);
  const unsigned lane = threadIdx.x % kWarp;
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
    const typename Op::Acc other = shfl_down(mask, v, offset);
    if (lane + offset < lanes) v = Op::combine(v, other);
  }
  return v;
}
// [end: warp-reduce]

// Reduces v over the whole block; the result is valid in thread 0. Every thread of the block
// must call it (it has barriers). `per_warp` is __shared__ storage for 32 accumulators.
//
// Safe to call several times in a row with the same `per_warp`: the first barrier keeps a warp
// from overwriting per_warp[] while warp 0 may still be reading the previous call's values.
template <class Op>
__device__ typename Op::Acc block_reduce(typename Op::Acc v, typename Op::Acc* per_warp) {
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const unsigned warps = (blockDim.x + kWarp - 1) / kWarp;
  v = warp_reduce<Op>(v, lanes_in_my_warp());
  __syncthreads();  // barrier 1: the previous call's readers are done with per_warp
  if (lane == 0) per_warp[warp] = v;
  __syncthreads();  // barrier 2: every warp's value is in shared memory
  if (warp == 0) {
    // All 32 lanes of warp 0 exist whenever there is more than one warp; lanes past the warp
    // count hold the identity, so the full-mask tree needs no bounds test.
    v = lane < warps ? per_warp[lane] : Op::identity();
    v = warp_reduce<Op>(v, lanes_in_my_warp());
  }
  return v;
}

// ---- the chapter's kernel: 05's, with block_reduce for the tree ------------------------------

constexpr unsigned kBlock = 256;   // threads per block (the tests also run 33, 100, 250 and 1000)
constexpr unsigned kCoarsen = 16;  // each thread combines 2 x kCoarsen elements, as in chapter 05

template <unsigned Block>
constexpr std::size_t tile_of() {
  return 2 * kCoarsen * Block;
}

template <class Op>
__global__ void reduce_warp_shuffle(const typename Op::In* in, std::size_t n, ch04::Target<Op> target) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kWarp];
  const std::size_t first = blockIdx.x * (2 * kCoarsen * std::size_t{blockDim.x}) + threadIdx.x;

  // Chapter 05's register accumulator: elements blockDim.x apart, so every load is coalesced.
  Acc acc = Op::identity();
#pragma unroll
  for (unsigned k = 0; k < 2 * kCoarsen; ++k) {
    const std::size_t i = first + std::size_t{k} * blockDim.x;
    if (i < n) acc = Op::append(acc, in[i], i);
  }

  // The new step: warp shuffles, one value per warp through shared memory, 2 barriers.
  // [excerpt: block]
  acc = block_reduce<Op>(acc, per_warp);
  if (threadIdx.x == 0) ch04::atomic_combine<Op>(target, acc);
  // [end: block]
}

// Chapter 04's launcher with this kernel; Block threads per block (the lesson's is kBlock).
template <class Op, unsigned Block = kBlock>
void launch(const red::ReduceCall& c) {
  ch04::launch_with_atomics<Op>(c, [&](ch04::Target<Op> t) {
    reduce_warp_shuffle<Op><<<red::ceil_div(c.n, tile_of<Block>()), Block, 0, c.stream>>>(
        static_cast<const typename Op::In*>(c.input), c.n, t);
  });
}

template <class Op>
std::size_t scratch_bytes(std::size_t n) {
  return ch04::scratch_bytes<Op>(n);
}

}  // namespace ch06
