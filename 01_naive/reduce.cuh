// Chapter 01 - naive tree reduction.
//
// Idea: a block reduces its tile of 512 elements in a binary tree whose stride doubles each
// step (1, 2, 4, ... 256); the threads that work at stride s are those with tid % s == 0.
// Cost: the tree runs in global memory, in place, so the input is first copied into scratch
// (one extra read and write of all n elements) and every level reads and writes global memory.
// From stride 2 on, the working threads are spread over every warp: divergent warps.
// Larger inputs take several passes: each pass reduces tiles into per-block partials.
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch01 {

constexpr unsigned kBlock = 256;        // threads per block
constexpr unsigned kTile = 2 * kBlock;  // elements per block: each thread starts with two

template <class Op>
__global__ void reduce_naive(typename Op::Acc* data, std::size_t len, typename Op::Acc* partials, void* result) {
  const std::size_t base = blockIdx.x * std::size_t{kTile};
  typename Op::Acc* tile = data + base;
  const unsigned tile_len = static_cast<unsigned>(min(std::size_t{kTile}, len - base));
  const unsigned i = 2 * threadIdx.x;  // the element this thread accumulates into

  // [excerpt: tree]
  for (unsigned stride = 1; stride < kTile; stride *= 2) {
    // tid % stride == 0 picks every stride-th thread: at stride 2 half of each warp idles,
    // at stride 32 one thread per warp works, yet every warp still steps through the branch.
    // The bound check replaces the missing elements of a short last tile by "nothing to add".
    if (threadIdx.x % stride == 0 && i + stride < tile_len) tile[i] = Op::combine(tile[i], tile[i + stride]);
    __syncthreads();  // the next level reads what this level wrote
  }
  // [end: tree]
  if (threadIdx.x == 0) {
    if (result)
      Op::store(result, tile[0]);  // last pass: one block, one value
    else
      partials[blockIdx.x] = tile[0];
  }
}

// Scratch: the tree works in place, so it runs on a copy of the input (the caller's input is never
// written), made of accumulators, followed by room for pass 1's partials.
template <class Acc>
struct InPlaceScratch {
  Acc* copy;
  Acc* partials;
  std::size_t bytes;
  InPlaceScratch(void* base, std::size_t n) {
    red::ScratchCarver carve(base);
    copy = carve.take<Acc>(n);
    partials = carve.take<Acc>(red::ceil_div(n, kTile));
    bytes = carve.bytes();
  }
};

template <class Op>
std::size_t scratch_bytes(std::size_t n) {
  return InPlaceScratch<typename Op::Acc>(nullptr, n).bytes;
}

// The copy, element by element as accumulators: an f16 sum adds in float, an argmax carries each
// element's index. Where an accumulator is the element itself (an f32 sum) a plain copy does.
template <class Op>
__global__ void copy_as_accumulators(const typename Op::In* in, std::size_t n, typename Op::Acc* copy) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    copy[i] = Op::load(in[i], i);
}

template <class Op>
void copy_input(const red::ReduceCall& c, typename Op::Acc* copy) {
  using In = typename Op::In;
  if constexpr (std::is_same_v<In, typename Op::Acc>) {
    CUDA_CHECK(cudaMemcpyAsync(copy, c.input, c.n * sizeof(In), cudaMemcpyDeviceToDevice, c.stream));
  } else {
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(c.n, kBlock), 65536));
    copy_as_accumulators<Op><<<blocks, kBlock, 0, c.stream>>>(static_cast<const In*>(c.input), c.n, copy);
    CUDA_CHECK_LAUNCH();
  }
}

// A kernel of this shape: reduce_naive here, reduce_convergent in chapter 02.
template <class Op>
using PassKernel = void (*)(typename Op::Acc* data, std::size_t len, typename Op::Acc* partials, void* result);

// The classic multi-pass scheme: copy the input into scratch, then one pass per level of
// kTile-element tiles, each reducing `len` values into ceil(len / kTile) partials, until one
// value is left; the last pass (one block) stores it into the result. Pass 1 works on the copy
// and writes `partials`; later passes alternate between the partials and the copy's space, which
// is free by then. Chapter 02 reuses it with its own kernel.
template <class Op>
void launch_passes(const red::ReduceCall& c, PassKernel<Op> kernel) {
  using Acc = typename Op::Acc;
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  InPlaceScratch<Acc> s(c.scratch, c.n);
  copy_input<Op>(c, s.copy);
  Acc* src = s.copy;
  Acc* partials = s.partials;
  for (std::size_t len = c.n;; len = red::ceil_div(len, kTile)) {
    const std::size_t blocks = red::ceil_div(len, kTile);
    kernel<<<blocks, kBlock, 0, c.stream>>>(src, len, partials, blocks == 1 ? c.output : nullptr);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    std::swap(src, partials);
  }
}

template <class Op>
void launch(const red::ReduceCall& c) {
  launch_passes<Op>(c, reduce_naive<Op>);
}

}  // namespace ch01
