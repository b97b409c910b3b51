// Chapter 06 - warp shuffles: the block reduction without a shared-memory tree, for every
// operator and dtype.
//
// Idea: chapter 05's coarsened loads, then a block reduction in which each warp reduces its 32
// values in registers with __shfl_down_sync (block_reduce.cuh), so shared memory holds one value
// per warp and the block waits at 2 barriers instead of 8. Atomics exist for few of the types
// this chapter supports (no atomic argmax pair, none for a 16-bit max kept in f32), so the blocks'
// partials go back to chapter 03's passes: the same kernel reduces them until one value remains.
// Cost: the input read once; ceil(log_8192 n) launches; 2 barriers per block.
#pragma once

#include <cstdint>

#include "block_reduce.cuh"
#include "chapter_builder.cuh"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch06 {

constexpr unsigned kBlock = 256;   // threads per block (the tests also run 33, 100, 250 and 1000)
constexpr unsigned kCoarsen = 16;  // each thread combines 2 x kCoarsen elements, as in chapter 05

template <unsigned Block>
constexpr std::size_t tile_of() {
  return 2 * kCoarsen * Block;
}

// One kernel for every pass. The first pass reads the input (In, indices for argmax);
// later passes read the previous pass's partials (Acc), which carry their own indices.
template <class Op, bool kFirstPass>
using source_t = std::conditional_t<kFirstPass, typename Op::In, typename Op::Acc>;

template <class Op, bool kFirstPass>
__global__ void reduce_warp_shuffle(const source_t<Op, kFirstPass>* in, std::size_t len, typename Op::Acc* partials,
                                    void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[red::kWarp];
  const std::size_t first = blockIdx.x * (2 * kCoarsen * std::size_t{blockDim.x}) + threadIdx.x;

  // Chapter 05's register accumulator: elements blockDim.x apart, so every load is coalesced.
  Acc acc = Op::identity();
#pragma unroll
  for (unsigned k = 0; k < 2 * kCoarsen; ++k) {
    const std::size_t i = first + std::size_t{k} * blockDim.x;
    if (i < len) {
      if constexpr (kFirstPass)
        acc = Op::append(acc, in[i], i);  // a thread's indices only grow
      else
        acc = Op::combine(acc, in[i]);
    }
  }

  // The new step: warp shuffles, one value per warp through shared memory, 2 barriers.
  acc = red::block_reduce<Op>(acc, per_warp);
  if (threadIdx.x == 0) {
    if (result)
      Op::store(result, acc);  // last pass: one block, one value
    else
      partials[blockIdx.x] = acc;
  }
}

// Scratch: the partials of the first two passes (later passes ping-pong between them).
template <class Op, unsigned Block>
struct Scratch {
  typename Op::Acc* partials_a;
  typename Op::Acc* partials_b;
  std::size_t bytes;
  Scratch(void* base, std::size_t n) {
    red::ScratchCarver carve(base);
    partials_a = carve.take<typename Op::Acc>(red::ceil_div(n, tile_of<Block>()));
    partials_b = carve.take<typename Op::Acc>(red::ceil_div(n, tile_of<Block>() * tile_of<Block>()));
    bytes = carve.bytes();
  }
};

template <class Op, unsigned Block>
void launch(const red::ReduceCall& c) {
  using In = typename Op::In;
  using Acc = typename Op::Acc;
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  Scratch<Op, Block> s(c.scratch, c.n);
  red::run_multipass(
      static_cast<const In*>(c.input), c.n, tile_of<Block>(), s.partials_a, s.partials_b, c.output,
      [&](const In* src, std::size_t len, Acc* partials, void* result, std::size_t blocks) {
        reduce_warp_shuffle<Op, true><<<blocks, Block, 0, c.stream>>>(src, len, partials, result);
        CUDA_CHECK_LAUNCH();
      },
      [&](const Acc* src, std::size_t len, Acc* partials, void* result, std::size_t blocks) {
        reduce_warp_shuffle<Op, false><<<blocks, Block, 0, c.stream>>>(src, len, partials, result);
        CUDA_CHECK_LAUNCH();
      });
}

template <class Op, unsigned Block>
std::size_t scratch_bytes(std::size_t n) {
  return Scratch<Op, Block>(nullptr, n).bytes;
}

// ---- registration: what the chapter program, the tests and the benchmark need to know ----------

// Longest chain of additions: per pass, 2 x kCoarsen in a thread's register, 5 shuffle levels in
// a warp and ceil(log2(warps)) across the warps.
template <unsigned Block>
std::size_t sum_depth(std::size_t n) {
  const std::size_t per_pass = 2 * kCoarsen + 5 + red::ceil_log2(red::ceil_div(Block, red::kWarp));
  std::size_t passes = 1;
  for (std::size_t len = red::ceil_div(n, tile_of<Block>()); len > 1; len = red::ceil_div(len, tile_of<Block>()))
    ++passes;
  return passes * per_pass;
}

using SupportedOps = red::Ops<red::Sum, red::Max, red::Min, red::ArgMax>;
using SupportedTypes = red::Types<float, double, __half, __nv_bfloat16, std::int32_t, long long, std::uint8_t>;

// The chapter with Block threads per block; chapter() is the lesson's, the others exist for the
// tests of block sizes that are not multiples of 32.
template <unsigned Block>
const red::Chapter& chapter_with_block() {
  static const red::Chapter ch = red::make_chapter<SupportedOps, SupportedTypes>(
      "06_warp_shuffle",
      "05's coarsened loads; warp shuffles and one value per warp in shared memory (" + std::to_string(Block) +
          " threads, 2 barriers per block); every op and dtype",
      [](auto op) {
        return red::Launcher{&scratch_bytes<decltype(op), Block>, &launch<decltype(op), Block>};
      },
      sum_depth<Block>, Block == kBlock ? "reduce_warp_shuffle" : "reduce_warp_shuffle_b" + std::to_string(Block));
  return ch;
}

inline const red::Chapter& chapter() { return chapter_with_block<kBlock>(); }

}  // namespace ch06
