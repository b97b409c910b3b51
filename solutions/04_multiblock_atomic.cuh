// Chapter 04's exercise, solved: two ways to take the contention out of 04's one atomic step.
//
// 1. The sum over K slots: block b adds into slot b % K instead of the one result, and a second
//    tiny kernel (one block of K threads) adds the K slots up. Each address now takes ceil(B / K)
//    of the B = ceil(n / 512) atomics. Cost: 04's kernel unchanged but for its last line, K
//    accumulators of scratch, and one more launch (three: identity, blocks, combine).
// 2. argmax without the lock (f32): the value and the index packed into one 64-bit word that
//    orders like argmax's order, folded in with one atomicMax per block. 64 bits leave room for
//    an f32 key and a 32-bit index only: n up to 2^32, no f64 (04_multiblock_atomic.md says why).
//
// Both reuse 04's pieces (ch04::): its tile, its atomics, its launcher.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "04_multiblock_atomic/reduce.cuh"
#include "chapter_builder.cuh"

namespace sol04 {

// ---- 1. the sum over K slots ---------------------------------------------------------------

// 04's reduce_atomic with one change, the last line: the block's atomic goes to slot b % Slots,
// so blocks that finish side by side (consecutive b) hit different addresses.
template <class Op, unsigned Slots>
__global__ void reduce_spread(const typename Op::In* in, std::size_t n, typename Op::Acc* slots) {
  using Acc = typename Op::Acc;
  constexpr unsigned kBlock = ch04::kBlock;
  __shared__ Acc tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * std::size_t{ch04::kTile} + tid;

  Acc v = i < n ? Op::load(in[i], i) : Op::identity();
  if (i + kBlock < n) v = Op::combine(v, Op::load(in[i + kBlock], i + kBlock));
  tree[tid] = v;

  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
  }
  if (tid == 0) ch04::atomic_combine<Op>(ch04::Target<Op>{slots + blockIdx.x % Slots, nullptr}, tree[0]);
}

// Every slot starts at the identity, in the stream, before the first block's atomic.
template <class Op>
__global__ void start_slots(typename Op::Acc* slots) {
  slots[threadIdx.x] = Op::identity();
}

// One block of Slots threads: the slots, added up in 03's tree (log2 Slots levels, a fixed order).
template <class Op, unsigned Slots>
__global__ void combine_slots(const typename Op::Acc* slots, void* result) {
  __shared__ typename Op::Acc tree[Slots];
  const unsigned tid = threadIdx.x;
  tree[tid] = slots[tid];
  for (unsigned stride = Slots / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
  }
  if (tid == 0) Op::store(result, tree[0]);
}

template <class Op, unsigned Slots>
std::size_t spread_scratch_bytes(std::size_t) {
  return Slots * sizeof(typename Op::Acc);
}

template <class Op, unsigned Slots>
void launch_spread(const red::ReduceCall& c) {
  static_assert(Slots >= 1 && Slots <= ch04::kBlock && (Slots & (Slots - 1)) == 0, "a power of two, 1 to 256");
  auto* slots = static_cast<typename Op::Acc*>(c.scratch);
  start_slots<Op><<<1, Slots, 0, c.stream>>>(slots);
  CUDA_CHECK_LAUNCH();
  if (c.n > 0) {
    reduce_spread<Op, Slots><<<red::ceil_div(c.n, ch04::kTile), ch04::kBlock, 0, c.stream>>>(
        static_cast<const typename Op::In*>(c.input), c.n, slots);
    CUDA_CHECK_LAUNCH();
  }
  combine_slots<Op, Slots><<<1, Slots, 0, c.stream>>>(slots, c.output);
  CUDA_CHECK_LAUNCH();
}

// The longest chain: the block's 9 levels (load, 8 in the tree), then one addition per block that
// shares the slot (ceil(B / Slots) at most), then the log2(Slots) levels of the combine.
template <unsigned Slots>
std::size_t spread_sum_depth(std::size_t n) {
  const std::size_t blocks = red::ceil_div(n, ch04::kTile);
  return red::ceil_log2(std::min<std::size_t>(n, ch04::kTile)) + red::ceil_div(blocks, Slots) + red::ceil_log2(Slots);
}

template <unsigned Slots>
std::string spread_kernel_name() {
  return "reduce_spread_k" + std::to_string(Slots);
}

// The sum on every dtype (ch04::atomic_combine has an atomicAdd for each accumulator).
template <unsigned Slots>
const red::Chapter& spread_sum() {
  static const red::Chapter ch = red::with_bench_info(
      red::with_global_float_atomics(
          red::make_chapter<red::Ops<red::Sum>, red::AllTypes>(
              "solution_04",
              "04's blocks, each adding into slot b % " + std::to_string(Slots) + ", then one block adds the slots up",
              [](auto op) {
                using Op = decltype(op);
                return red::Launcher{&spread_scratch_bytes<Op, Slots>, &launch_spread<Op, Slots>};
              },
              spread_sum_depth<Slots>, spread_kernel_name<Slots>()),
          [](std::size_t n) { return red::ceil_div(n, ch04::kTile); }),  // one atomicAdd per block
      {"reduce_atomic", {{"slots", Slots}}});
  return ch;
}

// Every K of the exercise: 1, 2, 4, ..., 256.
inline std::vector<const red::Chapter*> spread_sums() {
  return {&spread_sum<1>(),  &spread_sum<2>(),  &spread_sum<4>(),   &spread_sum<8>(),  &spread_sum<16>(),
          &spread_sum<32>(), &spread_sum<64>(), &spread_sum<128>(), &spread_sum<256>()};
}

// ---- 2. argmax in one 64-bit word ----------------------------------------------------------
//
//   bits 63..32  the value's key: an unsigned integer that orders like the float, NaN on top
//   bits 31..0   0xFFFFFFFF - index: of two equal keys the smaller index gives the larger word
//
// So argmax's order (NaN above every number, then the larger value, then the smaller index) is
// the order of the words, and atomicMax on unsigned long long does the whole combine at once.

// Indices 0 ... 2^32 - 1 fit in the low half.
constexpr std::size_t kMaxPackedElements = std::size_t{1} << 32;

// A positive float's bits already order like its value: set the sign bit to put it above every
// negative. A negative float's bits order backwards: flip them all. Every NaN gets the one key
// above +inf, whatever its sign and payload, so that among NaNs the index decides: the first
// wins. -0 and +0 are equal floats, so they share +0's key and the index decides there too.
// Selects, not early returns: with branches here the compiler put the second load of a thread
// behind the first element's key, one load in flight instead of two (05's exercise is about that).
__device__ inline unsigned ordered_key(float x) {
  const unsigned bits = __float_as_uint(x == 0.0f ? 0.0f : x);
  const unsigned key = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
  return x != x ? 0xFFFFFFFFu : key;
}

// The inverse on every key ordered_key makes (the NaN key comes back as a quiet NaN).
__device__ inline float value_of_key(unsigned key) {
  return __uint_as_float((key & 0x80000000u) ? key & 0x7FFFFFFFu : ~key);
}

// argmax as an operator on packed words. The identity 0 is below every element's word (the
// smallest key an element can have is -inf's, 0x007FFFFF), so it stands for "no element".
template <class T>
struct PackedArgMax {
  static_assert(std::is_same_v<T, float>, "a 32-bit key and a 32-bit index: f32 only");
  using In = float;
  using Acc = unsigned long long;
  static constexpr red::Op op = red::Op::argmax;
  __host__ __device__ static Acc identity() { return 0; }
  __device__ static Acc load(float x, std::size_t i) {
    return (Acc{ordered_key(x)} << 32) | (0xFFFFFFFFu - static_cast<unsigned>(i));
  }
  __device__ static Acc combine(Acc a, Acc b) { return a > b ? a : b; }
  __device__ static void store(void* out, Acc word) {
    const bool empty = word == identity();
    *static_cast<float*>(out) = empty ? red::lowest_value<float>() : value_of_key(static_cast<unsigned>(word >> 32));
    *reinterpret_cast<long long*>(static_cast<char*>(out) + red::kResultIndexOffset) =
        empty ? -1 : 0xFFFFFFFFll - static_cast<long long>(word & 0xFFFFFFFFu);
  }
};

// 04's reduce_atomic on packed words; the last line is one atomicMax. Its old value is never
// used, so the thread does not wait for an answer, as with the sum's atomicAdd.
template <class Op>
__global__ void reduce_packed_argmax(const typename Op::In* in, std::size_t n, typename Op::Acc* word) {
  using Acc = typename Op::Acc;
  constexpr unsigned kBlock = ch04::kBlock;
  __shared__ Acc tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * std::size_t{ch04::kTile} + tid;

  Acc v = i < n ? Op::load(in[i], i) : Op::identity();
  if (i + kBlock < n) v = Op::combine(v, Op::load(in[i + kBlock], i + kBlock));
  tree[tid] = v;

  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = Op::combine(tree[tid], tree[tid + stride]);
  }
  if (tid == 0) atomicMax(word, tree[0]);
}

template <class Op>
std::size_t packed_scratch_bytes(std::size_t n) {
  return ch04::scratch_bytes<Op>(n);
}

// 04's launcher as it is: the word starts at the identity in scratch, and the last one-thread
// kernel unpacks it into the result (value, int64 index; -1 for the empty input).
template <class Op>
void launch_packed(const red::ReduceCall& c) {
  // Refused before anything is queued: a wrapped index would be a wrong answer, not an error.
  if (c.n > kMaxPackedElements)
    throw std::invalid_argument("solution_04 packed argmax: n = " + std::to_string(c.n) +
                                " is more than 2^32 elements; the index must fit in the word's low 32 bits");
  ch04::launch_with_atomics<Op>(c, [&](ch04::Target<Op> t) {
    reduce_packed_argmax<Op><<<red::ceil_div(c.n, ch04::kTile), ch04::kBlock, 0, c.stream>>>(
        static_cast<const typename Op::In*>(c.input), c.n, t.cell);
  });
}

inline const red::Chapter& packed_argmax() {
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<red::Ops<PackedArgMax>, red::Types<float>>(
          "solution_04",
          "04's blocks; argmax as a 64-bit word (value key, 32-bit index) and one atomicMax per block, no lock",
          [](auto op) {
            using Op = decltype(op);
            return red::Launcher{&packed_scratch_bytes<Op>, &launch_packed<Op>};
          },
          [](std::size_t) { return std::size_t{0}; },  // an argmax adds nothing
          "reduce_packed_argmax"),
      {"reduce_atomic", {{"index_bits", 32}}});
  return ch;
}

}  // namespace sol04
