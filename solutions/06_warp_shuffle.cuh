// Chapter 06's exercise, solved.
//
// 1. The butterfly: warp_reduce with __shfl_xor_sync. At offset 16 lane i swaps values with lane
//    i ^ 16, at 8 with i ^ 8, ... so after 5 steps every lane holds the warp's value, not lane 0
//    alone. Step 4 of the block reduction (warp 0 combining the warps' values) then needs neither
//    the identity in lanes 8-31 nor all five steps: each lane reads per_warp[lane % 8], and 3
//    steps (4, 2, 1) leave every lane of warp 0 with the block's value. The price: whole warps
//    and a power-of-two warp count (06's down-tree serves any block size).
// 2. How many blocks take chapter 04's argmax lock: 06's kernel with 04's locked step copied
//    and one line added, an atomic counter in scratch (06_lock_count.cu prints it).
#pragma once

#include <string>

#include "06_warp_shuffle/reduce.cuh"
#include "chapter_builder.cuh"

namespace sol06 {

using ch06::kWarp;

// __shfl_xor_sync over the whole warp for every accumulator type, as ch06::shfl_down does it.
template <class T>
__device__ T shfl_xor(T v, unsigned lane_mask) {
  constexpr unsigned kAllLanes = 0xffffffffu;
  if constexpr (ch06::is_value_index<T>::value)
    return T{shfl_xor(v.value, lane_mask), shfl_xor(v.index, lane_mask)};
  else if constexpr (sizeof(T) < 4)
    return static_cast<T>(__shfl_xor_sync(kAllLanes, static_cast<int>(v), lane_mask));
  else
    return __shfl_xor_sync(kAllLanes, v, lane_mask);
}

// Combines v over each aligned group of Width lanes; every lane of a group ends with its group's
// value. All 32 lanes must call it. Width = 32: the warp's value in every lane.
template <class Op, unsigned Width = kWarp>
__device__ typename Op::Acc butterfly(typename Op::Acc v) {
#pragma unroll
  for (unsigned offset = Width / 2; offset > 0; offset /= 2) v = Op::combine(v, shfl_xor(v, offset));
  return v;
}

// 06's block_reduce with the butterfly; the result is valid in every thread of warp 0.
template <class Op, unsigned Block>
__device__ typename Op::Acc block_reduce_butterfly(typename Op::Acc v, typename Op::Acc* per_warp) {
  constexpr unsigned kWarps = Block / kWarp;
  static_assert(Block % kWarp == 0 && (kWarps & (kWarps - 1)) == 0, "whole warps, a power-of-two count");
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = butterfly<Op>(v);
  __syncthreads();  // barrier 1, as in 06: a previous call's readers are done with per_warp
  if (lane == 0) per_warp[warp] = v;
  __syncthreads();  // barrier 2: every warp's value is in shared memory
  // Every lane reads a real warp value, so no identity is needed; groups of kWarps lanes each
  // combine all of them.
  if (warp == 0) v = butterfly<Op, kWarps>(per_warp[lane % kWarps]);
  return v;
}

// 06's kernel with the butterfly block reduction.
template <class Op>
__global__ void reduce_butterfly(const typename Op::In* in, std::size_t n, ch04::Target<Op> target) {
  using Acc = typename Op::Acc;
  constexpr unsigned kBlock = ch06::kBlock;
  __shared__ Acc per_warp[kBlock / kWarp];
  const std::size_t first = blockIdx.x * std::size_t{ch06::tile_of<kBlock>()} + threadIdx.x;

  Acc acc = Op::identity();
#pragma unroll
  for (unsigned k = 0; k < 2 * ch06::kCoarsen; ++k) {
    const std::size_t i = first + std::size_t{k} * kBlock;
    if (i < n) acc = Op::append(acc, in[i], i);
  }

  acc = block_reduce_butterfly<Op, kBlock>(acc, per_warp);
  if (threadIdx.x == 0) ch04::atomic_combine<Op>(target, acc);
}

template <class Op>
void launch_butterfly(const red::ReduceCall& c) {
  ch04::launch_with_atomics<Op>(c, [&](ch04::Target<Op> t) {
    reduce_butterfly<Op><<<red::ceil_div(c.n, ch06::tile_of<ch06::kBlock>()), ch06::kBlock, 0, c.stream>>>(
        static_cast<const typename Op::In*>(c.input), c.n, t);
  });
}

// The longest chain: 2 x kCoarsen additions in a register, 5 butterfly steps in a warp,
// log2(8) = 3 across the warps, then one addition per block through the result (as in 06).
inline std::size_t butterfly_sum_depth(std::size_t n) {
  constexpr unsigned kWarps = ch06::kBlock / kWarp;
  return 2 * ch06::kCoarsen + 5 + red::ceil_log2(kWarps) + red::ceil_div(n, ch06::tile_of<ch06::kBlock>());
}

inline const red::Chapter& butterfly() {
  static const red::Chapter ch = red::with_bench_info(
      red::with_global_float_atomics(
          red::make_chapter<red::AllOps, red::AllTypes>(
              "solution_06",
              "06's kernel with __shfl_xor_sync: every lane ends with its warp's value, warp 0 needs 3 steps",
              [](auto op) {
                using Op = decltype(op);
                return red::Launcher{&ch06::scratch_bytes<Op>, &launch_butterfly<Op>};
              },
              butterfly_sum_depth, "reduce_butterfly"),
          [](std::size_t n) { return red::ceil_div(n, ch06::tile_of<ch06::kBlock>()); }),  // one atomicAdd per block
      {"reduce_warp_shuffle", {{"butterfly", 1}}});
  return ch;
}

// ---- 2. counting the blocks that take chapter 04's argmax lock --------------------------------

// ch04::locked_combine with one line added: the block that holds the lock counts itself.
template <class Op>
__device__ void counted_locked_combine(ch04::Target<Op> t, typename Op::Acc v, unsigned long long* taken) {
  using W = decltype(v.value);
  const W held = *static_cast<volatile W*>(&t.cell->value);
  if (!red::is_nan(v.value) && (red::is_nan(held) || held > v.value)) return;
  while (atomicCAS(t.lock, 0u, 1u) != 0u) {
  }
  atomicAdd(taken, 1ull);  // the added line
  __threadfence();         // see the pair as the last holder of the lock left it
  volatile auto* cell = t.cell;
  const typename Op::Acc current{cell->value, cell->index};
  const typename Op::Acc next = Op::combine(current, v);
  cell->value = next.value;
  cell->index = next.index;
  __threadfence();  // the pair is written before the lock is seen free
  atomicExch(t.lock, 0u);
}

// 06's kernel (its loads, ch06::block_reduce) ending in the counted lock.
template <class Op>
__global__ void reduce_counting_locks(const typename Op::In* in, std::size_t n, ch04::Target<Op> target,
                                      unsigned long long* taken) {
  using Acc = typename Op::Acc;
  constexpr unsigned kBlock = ch06::kBlock;
  __shared__ Acc per_warp[kWarp];
  const std::size_t first = blockIdx.x * std::size_t{ch06::tile_of<kBlock>()} + threadIdx.x;

  Acc acc = Op::identity();
#pragma unroll
  for (unsigned k = 0; k < 2 * ch06::kCoarsen; ++k) {
    const std::size_t i = first + std::size_t{k} * kBlock;
    if (i < n) acc = Op::append(acc, in[i], i);
  }

  acc = ch06::block_reduce<Op>(acc, per_warp);
  if (threadIdx.x == 0) counted_locked_combine<Op>(target, acc, taken);
}

// Scratch: chapter 04's (the pair, its lock), then the counter, 256-byte aligned like every part.
template <class Op>
std::size_t lock_counter_offset() {
  return red::ceil_div(ch04::scratch_bytes<Op>(0), 256) * 256;
}
template <class Op>
std::size_t counting_scratch_bytes(std::size_t) {
  return lock_counter_offset<Op>() + sizeof(unsigned long long);
}

template <class Op>
void launch_counting_locks(const red::ReduceCall& c) {
  auto* taken = reinterpret_cast<unsigned long long*>(static_cast<char*>(c.scratch) + lock_counter_offset<Op>());
  CUDA_CHECK(cudaMemsetAsync(taken, 0, sizeof *taken, c.stream));
  ch04::launch_with_atomics<Op>(c, [&](ch04::Target<Op> t) {
    reduce_counting_locks<Op><<<red::ceil_div(c.n, ch06::tile_of<ch06::kBlock>()), ch06::kBlock, 0, c.stream>>>(
        static_cast<const typename Op::In*>(c.input), c.n, t, taken);
  });
}

// f32 argmax only: the count is the point, the kernel is 06's. The count lies in scratch at
// lock_counter_offset<red::ArgMax<float>>() once the call has finished.
inline const red::Chapter& counting_locks() {
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<red::Ops<red::ArgMax>, red::Types<float>>(
          "solution_06", "06's kernel; each block that takes 04's argmax lock adds 1 to a counter in scratch",
          [](auto op) {
            using Op = decltype(op);
            return red::Launcher{&counting_scratch_bytes<Op>, &launch_counting_locks<Op>};
          },
          [](std::size_t) { return std::size_t{0}; },  // an argmax adds nothing
          "reduce_counting_locks"),
      {"reduce_warp_shuffle", {{"lock_counter", 1}}});
  return ch;
}

}  // namespace sol06
