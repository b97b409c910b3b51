// What chapter 03's benchmark measures beside the lesson: Mark Harris's seven steps from
// "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007; 2^22 ints on a GeForce 8800 GTX), rebuilt
// on this chapter's code, and the two kernels of the chapter's exercise. The lesson does not
// include this file.
//
// One kernel, reduce_shared_variant, takes a Recipe of four choices; each of Harris's steps changes
// one of them:
//
//   step  pairing in the tree     elements per thread   last warp     block size
//   1     interleaved, divergent  1                      in the loop   read at run time
//   2     interleaved, packed     1                      in the loop   read at run time
//   3     sequential              1                      in the loop   read at run time
//   4     sequential              2 (first add in load)  in the loop   read at run time
//   5     sequential              2                      unrolled      read at run time
//   6     sequential              2                      unrolled      compile-time constant
//   7     sequential              32 (cascading)         unrolled      compile-time constant
//
// Step 1: thread t adds when t % (2 stride) == 0, so the working threads are spread over every
// warp, and `%` by a run-time value is a long instruction sequence (a GPU has no integer divider;
// once the loop is unrolled it is a mask). Step 2: thread t works on slot 2 stride t, so the working
// threads fill the first warps, but a warp's lanes now hit the same shared-memory banks at
// different addresses. Step 3: thread t < stride adds slot t + stride, conflict-free. Step 4: the
// tree's first level during the global load, half the blocks. Step 5: the last six levels by one
// warp, without barriers. Step 6: the block size known to the compiler, so every loop unrolls
// (Harris's "complete unrolling"). Step 7: many elements per thread before the tree.
//
// Chapter 03's own kernel, reduce_shared, is step 4 with a compile-time block size (step 6's
// idea without step 5): 03 against step 4 isolates complete unrolling, step 6 against 03 the
// unrolled last warp.
//
// Kept from 03 in every step: 256 threads a block (Harris's kernels took the block size from the
// launch; here every launch uses kBlock, and steps 1-5 read it back from blockDim.x as he did), the
// identity past the end of the input, one partial per block, the multi-pass driver
// (red::run_multipass) and any operator. Integer sums keep int64 partials (reduce_ops.cuh), so the
// i32 rows move 8-byte slots through shared memory where Harris moved 4-byte ints.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "03_shared/reduce.cuh"
#include "chapter_builder.cuh"

namespace ch03 {

enum class Pairing {
  interleaved_divergent,  // stride 1, 2, 4, ...: thread t adds slot t + stride when t % (2 stride) == 0
  interleaved_packed,     // the same pairs, by thread t for slot j = 2 stride t: the first threads work
  sequential,             // stride 128, 64, ...: thread t < stride adds slot t + stride (03's tree)
};
enum class LastWarp { in_the_loop, unrolled };
enum class BlockSize { run_time, compile_time };

template <Pairing P, unsigned ElementsPerThread, LastWarp W, BlockSize B>
struct Recipe {
  static constexpr Pairing kPairing = P;
  static constexpr unsigned kElementsPerThread = ElementsPerThread;
  static constexpr bool kUnrollLastWarp = W == LastWarp::unrolled;
  static constexpr bool kBlockSizeKnown = B == BlockSize::compile_time;
  static constexpr unsigned kTile = ElementsPerThread * kBlock;  // elements per block
  static_assert(P == Pairing::sequential || W == LastWarp::in_the_loop,
                "only the sequential tree ends in one warp: the interleaved ones end in lanes of several warps");
  static_assert(kBlock >= 64, "the unrolled last warp starts at stride 32");
};

// Harris's seven steps.
using Harris1 = Recipe<Pairing::interleaved_divergent, 1, LastWarp::in_the_loop, BlockSize::run_time>;
using Harris2 = Recipe<Pairing::interleaved_packed, 1, LastWarp::in_the_loop, BlockSize::run_time>;
using Harris3 = Recipe<Pairing::sequential, 1, LastWarp::in_the_loop, BlockSize::run_time>;
using Harris4 = Recipe<Pairing::sequential, 2, LastWarp::in_the_loop, BlockSize::run_time>;
using Harris5 = Recipe<Pairing::sequential, 2, LastWarp::unrolled, BlockSize::run_time>;
using Harris6 = Recipe<Pairing::sequential, 2, LastWarp::unrolled, BlockSize::compile_time>;
// Step 7, "algorithm cascading". Harris runs a fixed grid and lets each thread loop over n / (grid
// size) elements: by Brent's theorem, O(log n) elements per thread keep the work O(n) while the
// tree stays O(log n) deep. Here the count is fixed instead, 2 x 16 elements kBlock apart (as in
// chapter 05, whose sweep chose 16): a block still covers a fixed tile (8192 elements), so the
// passes, the partials and the scratch follow from the tile exactly as in 03, and the driver
// needs no grid size. 32 is about log2 n at the sizes measured (2^20 to 2^28).
using Harris7 = Recipe<Pairing::sequential, 32, LastWarp::unrolled, BlockSize::compile_time>;

// Chapter 03's exercise: 01's interleaved pairing inside 03's kernel (first add, compile-time
// block), once with the working threads spread out, once packed.
using SharedInterleaved = Recipe<Pairing::interleaved_divergent, 2, LastWarp::in_the_loop, BlockSize::compile_time>;
using SharedInterleavedPacked = Recipe<Pairing::interleaved_packed, 2, LastWarp::in_the_loop, BlockSize::compile_time>;

// Strides 32, 16, ..., 1, by the 32 lanes of warp 0, with no block barrier. Harris's version adds
// through a `volatile` pointer with nothing between the steps: it relies on the warp's lanes
// running in lockstep, so that lane t reads slot t + stride after lane t + stride wrote it in the
// step before, and before that lane overwrites it in this step. Since Volta, independent thread
// scheduling lets the lanes of a warp run apart, so that is a data race (the CUDA Programming
// Guide, compute capability 7.x, names this pattern); `volatile` only keeps values out of
// registers, it orders nothing between lanes. Here each step reads, waits at __syncwarp() until
// every lane has read, writes, and waits until every lane has written. __syncwarp() also orders
// the shared-memory accesses, so no `volatile` is needed. As in Harris's, every lane adds at every
// step: after stride s, slots below s hold the right partials (they read only slots below 2s),
// and what the other lanes write is never read by lane 0's chain.
template <class Op>
__device__ void reduce_last_warp(typename Op::Acc* tree, unsigned lane) {
  typename Op::Acc v = tree[lane];
#pragma unroll
  for (unsigned stride = 32; stride >= 1; stride /= 2) {
    v = Op::combine(v, tree[lane + stride]);
    __syncwarp();  // every lane has read slot lane + stride before anyone overwrites it
    tree[lane] = v;
    __syncwarp();  // every lane's sum is in place before the next step reads it
  }
}

// Src: the input on the first pass, the previous pass's partials on later ones (as in 03).
template <class Op, class R, class Src>
__global__ void reduce_shared_variant(const Src* in, std::size_t len, typename Op::Acc* partials, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc tree[kBlock];  // the launcher always starts kBlock threads
  const unsigned tid = threadIdx.x;
  // Until step 6 the compiler does not know the block size, so it can unroll no loop over it.
  const unsigned block = R::kBlockSizeKnown ? kBlock : blockDim.x;
  const std::size_t tile = std::size_t{R::kElementsPerThread} * block;

  // A thread's elements lie `block` apart, so each of its loads is coalesced across the warp.
  // The first is loaded, the others added to it; missing elements are the identity.
  const std::size_t first = blockIdx.x * tile + tid;
  Acc v = first < len ? red::read<Op>(in, first) : Op::identity();
#pragma unroll
  for (unsigned k = 1; k < R::kElementsPerThread; ++k) {
    const std::size_t i = first + k * std::size_t{block};
    if (i < len) v = Op::combine(v, red::read<Op>(in, i));
  }
  tree[tid] = v;

  // Each level: a barrier (the level before has landed), then the adds. The block's value ends in
  // tree[0] whatever the pairing. With the bound read from blockDim.x each loop stays a loop
  // (counter, compare, branch per level); with the constant the compiler unrolls it completely.
  if constexpr (R::kPairing == Pairing::interleaved_divergent) {
    for (unsigned stride = 1; stride < block; stride *= 2) {
      __syncthreads();
      if (tid % (2 * stride) == 0) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
    }
  } else if constexpr (R::kPairing == Pairing::interleaved_packed) {
    for (unsigned stride = 1; stride < block; stride *= 2) {
      __syncthreads();
      const unsigned j = 2 * stride * tid;
      if (j < block) tree[j] = Op::combine(tree[j], tree[j + stride]);
    }
  } else {
    const unsigned warp_part = R::kUnrollLastWarp ? 32 : 0;  // strides left to the last warp
    for (unsigned stride = block / 2; stride > warp_part; stride /= 2) {
      __syncthreads();
      if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
    }
    if constexpr (R::kUnrollLastWarp) {
      __syncthreads();  // stride 64's sums, written by warps 0 and 1, visible to warp 0
      if (tid < 32) reduce_last_warp<Op>(tree, tid);
    }
  }
  if (tid == 0) {
    if (result)
      Op::store(result, tree[0]);  // last pass: one block, one value
    else
      partials[blockIdx.x] = tree[0];
  }
}

// 03's Scratch for any tile: the partials of the first two passes (later ones ping-pong).
template <class Op>
struct TileScratch {
  typename Op::Acc* partials_a;
  typename Op::Acc* partials_b;
  TileScratch(void* base, std::size_t n, std::size_t tile) {
    red::ScratchCarver carve(base);
    partials_a = carve.take<typename Op::Acc>(red::ceil_div(n, tile));
    partials_b = carve.take<typename Op::Acc>(red::ceil_div(n, tile * tile));
    bytes = carve.bytes();
  }
  std::size_t bytes;
};

template <class Op, class R>
void launch_variant(const red::ReduceCall& c) {
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  TileScratch<Op> s(c.scratch, c.n, R::kTile);
  red::run_multipass(
      static_cast<const typename Op::In*>(c.input), c.n, R::kTile, s.partials_a, s.partials_b, c.output,
      [&](const auto* src, std::size_t len, typename Op::Acc* partials, void* result, std::size_t blocks) {
        reduce_shared_variant<Op, R><<<blocks, kBlock, 0, c.stream>>>(src, len, partials, result);
        CUDA_CHECK_LAUNCH();
      });
}

template <class Op, class R>
std::size_t variant_scratch_bytes(std::size_t n) {
  return TileScratch<Op>(nullptr, n, R::kTile).bytes;
}

// The longest chain of additions: per pass, a thread's serial chain (one addition fewer than its
// elements: the first is loaded), then a tree of ceil(log2) levels over the block's non-identity
// slots (adding the identity is exact). With one or two elements per thread this is
// red::multipass_depth(n, tile), 03's; step 7 adds up to 31 in a row first.
inline std::size_t variant_sum_depth(std::size_t n, std::size_t elements_per_thread) {
  const std::size_t tile = elements_per_thread * kBlock;
  std::size_t depth = 0;
  for (std::size_t len = n; len > 1; len = red::ceil_div(len, tile)) {
    const std::size_t per_thread = red::ceil_div(std::min(len, tile), std::size_t{kBlock});
    depth += per_thread - 1 + red::ceil_log2(std::min(len, std::size_t{kBlock}));
  }
  return depth;
}

// Sum and max on f32 and i32 cover the benchmark's rows and the tests' operators; every Op works.
template <class R>
red::Chapter variant_chapter(std::string chapter_name, std::string summary, std::string kernel,
                             red::Chapter::BenchInfo info) {
  return red::with_bench_info(
      red::make_chapter<red::Ops<red::Sum, red::Max>, red::Types<float, std::int32_t>>(
          std::move(chapter_name), std::move(summary),
          [](auto op) {
            return red::Launcher{&variant_scratch_bytes<decltype(op), R>, &launch_variant<decltype(op), R>};
          },
          [](std::size_t n) { return variant_sum_depth(n, R::kElementsPerThread); }, kernel),
      std::move(info));
}

// elements_per_thread, as the lesson declares it: the loads a thread has in flight at once.
template <class R>
red::Chapter harris_chapter(int step, std::string summary, std::string kernel) {
  return variant_chapter<R>("03_shared", "Harris step " + std::to_string(step) + ": " + summary, std::move(kernel),
                            {"reduce_shared", {{"harris_step", step}, {"elements_per_thread", R::kElementsPerThread}}});
}

inline const red::Chapter& harris1_interleaved_divergent() {
  static const red::Chapter ch =
      harris_chapter<Harris1>(1, "one element per thread; threads t % (2 stride) == 0 add, spread over every warp",
                              "harris1_interleaved_divergent");
  return ch;
}
inline const red::Chapter& harris2_interleaved_bank_conflicts() {
  static const red::Chapter ch = harris_chapter<Harris2>(
      2, "one element per thread; thread t adds slot 2 stride t: packed warps, shared-memory bank conflicts",
      "harris2_interleaved_bank_conflicts");
  return ch;
}
inline const red::Chapter& harris3_sequential() {
  static const red::Chapter ch = harris_chapter<Harris3>(
      3, "one element per thread; threads t < stride add slot t + stride, conflict-free", "harris3_sequential");
  return ch;
}
inline const red::Chapter& harris4_first_add() {
  static const red::Chapter ch = harris_chapter<Harris4>(
      4, "two elements per thread, the first add during the load; block size read at run time", "harris4_first_add");
  return ch;
}
inline const red::Chapter& harris5_last_warp() {
  static const red::Chapter ch = harris_chapter<Harris5>(
      5, "step 4 with strides 32 to 1 done by one warp, __syncwarp() between its steps", "harris5_last_warp");
  return ch;
}
inline const red::Chapter& harris6_unrolled() {
  static const red::Chapter ch = harris_chapter<Harris6>(
      6, "step 5 with the block size a compile-time constant: every loop unrolled", "harris6_unrolled");
  return ch;
}
inline const red::Chapter& harris7_cascaded() {
  static const red::Chapter ch = harris_chapter<Harris7>(
      7, "step 6 with 2 x 16 elements per thread added in a register before the tree", "harris7_cascaded");
  return ch;
}

inline std::vector<const red::Chapter*> harris_steps() {
  return {&harris1_interleaved_divergent(),
          &harris2_interleaved_bank_conflicts(),
          &harris3_sequential(),
          &harris4_first_add(),
          &harris5_last_warp(),
          &harris6_unrolled(),
          &harris7_cascaded()};
}

// The exercise's two kernels, named "solution_03" so that they stay out of the chapter's tables.
inline const red::Chapter& solution_interleaved() {
  static const red::Chapter ch = variant_chapter<SharedInterleaved>(
      "solution_03", "03 with 01's pairing: threads t % (2 stride) == 0 add, spread over every warp",
      "reduce_shared_interleaved", {"reduce_shared", {{"pairing_interleaved", 1}, {"packed_threads", 0}}});
  return ch;
}
inline const red::Chapter& solution_interleaved_packed() {
  static const red::Chapter ch = variant_chapter<SharedInterleavedPacked>(
      "solution_03", "03 with 01's pairing, thread t adding slot 2 stride t: packed warps, bank conflicts",
      "reduce_shared_interleaved_packed", {"reduce_shared", {{"pairing_interleaved", 1}, {"packed_threads", 1}}});
  return ch;
}

}  // namespace ch03
