// Chapter 04 - one launch for any n: every block combines its result into the output atomically.
//
// Idea: the block reduction of chapter 03, but instead of writing a partial for another pass,
// thread 0 of each block folds its value into the single result with an atomic operation. The
// launcher first sets the result to the operator's identity, in the same stream.
// Cost: one launch (plus the identity store) instead of ceil(log_512 n) passes, the input read
// once; in exchange ceil(n / 512) atomics on one address. A float sum with atomics is not
// deterministic: the blocks arrive in a different order on every run.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch04 {

constexpr unsigned kBlock = 256;        // threads per block
constexpr unsigned kTile = 2 * kBlock;  // elements per block: each thread loads two

// ---- the new step: fold a block's value into one place atomically --------------------------
//
// What the hardware offers decides how. Chapters 05 and 06 reuse all of it (ch04::).
//   sum      a native atomicAdd: float, double, and int64 (as unsigned: it wraps like Sum)
//   max/min  no float atomicMax: retry a compare-and-swap on the bits until no other block
//            changed the value in between (a 1- or 2-byte value: the CAS covers its 4-byte word)
//   argmax   a 16-byte (value, index) pair has no atomic at all: a lock, taken only by a block
//            whose pair may win

// Where the atomics land: the result itself when it holds an accumulator as is (every sum; the max
// and min of 4- and 8-byte types and u8). Otherwise an accumulator in scratch that a last
// one-thread kernel stores into the result: a 16-bit max is kept in float, an argmax result
// writes "no element" as index -1. `lock` guards an argmax pair.
template <class Op>
constexpr bool kResultIsAcc = Op::op == red::Op::sum ||
                              (Op::op != red::Op::argmax && std::is_same_v<typename Op::Acc, typename Op::In>);

template <class Op>
struct Target {
  typename Op::Acc* cell;
  unsigned* lock;
};

// The unsigned integer of a value's size, to compare and swap its bits.
template <std::size_t Size>
using bits_of = std::conditional_t<
    Size == 1, unsigned char,
    std::conditional_t<Size == 2, unsigned short, std::conditional_t<Size == 4, unsigned, unsigned long long>>>;

template <class Op>
__device__ void cas_combine(typename Op::Acc* cell, typename Op::Acc v) {
  using Acc = typename Op::Acc;
  using Bits = bits_of<sizeof(Acc)>;
  using Word = std::conditional_t<sizeof(Acc) == 8, unsigned long long, unsigned>;  // what atomicCAS takes
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(cell);
  Word* word = reinterpret_cast<Word*>(address / sizeof(Word) * sizeof(Word));
  const unsigned shift = 8 * (address % sizeof(Word));  // where the value sits in its word (little-endian)
  const Word others = ~(Word{static_cast<Bits>(~Bits{0})} << shift);  // the word's other bytes
  Word seen = *word;
  while (true) {
    const Bits seen_bits = static_cast<Bits>(seen >> shift);
    Acc current;
    std::memcpy(&current, &seen_bits, sizeof(Acc));
    const Acc next = Op::combine(current, v);
    Bits next_bits;
    std::memcpy(&next_bits, &next, sizeof(Acc));
    const Word wanted = (seen & others) | (Word{next_bits} << shift);
    if (wanted == seen) return;  // v does not change the result: no write needed
    const Word before = atomicCAS(word, seen, wanted);
    if (before == seen) return;  // our value went in
    seen = before;               // another block got there first: combine with its value
  }
}

// The pair's value only ever rises (in argmax's order, NaN on top), so a block whose value is
// already below it cannot win and skips the lock; reading the value alone is a single load.
template <class Op>
__device__ void locked_combine(Target<Op> t, typename Op::Acc v) {
  using W = decltype(v.value);
  const W held = *static_cast<volatile W*>(&t.cell->value);
  if (!red::is_nan(v.value) && (red::is_nan(held) || held > v.value)) return;
  while (atomicCAS(t.lock, 0u, 1u) != 0u) {
  }
  __threadfence();  // see the pair as the last holder of the lock left it
  volatile auto* cell = t.cell;
  const typename Op::Acc current{cell->value, cell->index};
  const typename Op::Acc next = Op::combine(current, v);
  cell->value = next.value;
  cell->index = next.index;
  __threadfence();  // the pair is written before the lock is seen free
  atomicExch(t.lock, 0u);
}

template <class Op>
__device__ void atomic_combine(Target<Op> t, typename Op::Acc v) {
  using Acc = typename Op::Acc;
  if constexpr (Op::op == red::Op::sum && std::is_integral_v<Acc>)
    atomicAdd(reinterpret_cast<unsigned long long*>(t.cell), static_cast<unsigned long long>(v));
  else if constexpr (Op::op == red::Op::sum)
    atomicAdd(t.cell, v);
  else if constexpr (Op::op == red::Op::argmax)
    locked_combine<Op>(t, v);
  else
    cas_combine<Op>(t.cell, v);
}

// ---- the kernel: 03's block tree, then one atomic ------------------------------------------

template <class Op>
__global__ void reduce_atomic(const typename Op::In* in, std::size_t n, Target<Op> target) {
  using Acc = typename Op::Acc;
  __shared__ Acc tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * std::size_t{kTile} + tid;

  // [excerpt: load]
  Acc v = i < n ? Op::load(in[i], i) : Op::identity();
  if (i + kBlock < n) v = Op::combine(v, Op::load(in[i + kBlock], i + kBlock));
  tree[tid] = v;
  // [end: load]

  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
  }
  // [excerpt: atomic]
  if (tid == 0) atomic_combine<Op>(target, tree[0]);  // the only inter-block step
  // [end: atomic]
}

// ---- the launcher: identity, the blocks' atomics, and where needed the store -----------------

template <class Op>
__global__ void start_target(Target<Op> t) {
  *t.cell = Op::identity();
  if (t.lock) *t.lock = 0;
}
template <class Op>
__global__ void store_target(Target<Op> t, void* result) {
  Op::store(result, *t.cell);
}

template <class Op>
std::size_t scratch_bytes(std::size_t) {
  if constexpr (kResultIsAcc<Op>) return 0;
  red::ScratchCarver carve;
  carve.take<typename Op::Acc>(1);
  carve.take<unsigned>(1);
  return carve.bytes();
}

// Sets the target to the identity, runs `blocks(target)` (the kernel's launch), then stores the
// target into the result if it is not the result. Chapters 05 and 06 reuse it with their kernels.
template <class Op, class Blocks>
void launch_with_atomics(const red::ReduceCall& c, Blocks blocks) {
  Target<Op> t{static_cast<typename Op::Acc*>(c.output), nullptr};
  if constexpr (!kResultIsAcc<Op>) {
    red::ScratchCarver carve(c.scratch);
    t.cell = carve.take<typename Op::Acc>(1);
    t.lock = carve.take<unsigned>(1);
  }
  // The identity must be in place before the first block's atomic: same stream, launched first.
  start_target<Op><<<1, 1, 0, c.stream>>>(t);
  CUDA_CHECK_LAUNCH();
  if (c.n > 0) {
    blocks(t);
    CUDA_CHECK_LAUNCH();
  }
  if constexpr (!kResultIsAcc<Op>) {
    store_target<Op><<<1, 1, 0, c.stream>>>(t, c.output);
    CUDA_CHECK_LAUNCH();
  }
}

template <class Op>
void launch(const red::ReduceCall& c) {
  launch_with_atomics<Op>(c, [&](Target<Op> t) {
    reduce_atomic<Op>
        <<<red::ceil_div(c.n, kTile), kBlock, 0, c.stream>>>(static_cast<const typename Op::In*>(c.input), c.n, t);
  });
}

}  // namespace ch04
