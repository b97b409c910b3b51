// Chapter 07's loads: 16-byte vectors from an input at any address, and what pass 1 reads
// (Array). Not the chapter's idea (the fixed grid and two passes, reduce.cuh), but what lets its
// loop move the most bytes per instruction; the benchmark measures pass 1 without them
// (variants.cuh). Chapters 08, 10, 11 and 12 reuse these as ch07::.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "reduce_ops.cuh"

namespace ch07 {

// ---- 16-byte vector loads ----------------------------------------------------------------------
//
// One 16-byte load (LDG.128) brings 4 floats, 8 halves or 16 bytes per instruction: a quarter of
// the load instructions of 4-byte loads (an eighth for halves), so the same bytes in flight take
// fewer instructions and registers. It needs an address that is a multiple of 16; an input that
// starts a few elements past such an address (a sub-array, a user's pointer) reads the same
// vectors in narrower pieces (load_at, below).

template <class T, unsigned Bytes = 16>
struct Vector {
  static constexpr unsigned kCount = Bytes / sizeof(T);
  T elements[kCount];
  __device__ T at(unsigned j) const { return elements[j]; }
};
// 16 bytes stay the four words they were loaded as: a byte is taken out only where it is used on
// its own (max, argmax), and a sum adds the words' bytes four at a time (append_vector, below).
// (Kept as 16 single bytes, the compiler unpacks every load into 16 registers, and a sum of 8
// vectors a trip then needs about 150 registers a thread.)
template <>
struct Vector<std::uint8_t, 16> {
  static constexpr unsigned kCount = 16;
  unsigned words[4];
  __device__ std::uint8_t at(unsigned j) const { return static_cast<std::uint8_t>(words[j / 4] >> (8 * (j % 4))); }
};
// bf16 likewise: a word holds elements 2w (its low half) and 2w + 1, and a bf16 is the high half
// of a float, so a sum widens one with a shift or a mask (append_vector). (nvcc 13, sm_90: as 8
// single bf16s the bf16 sum's pass 1 takes 48 registers and chapter 08's bf16 dot 92, 2 blocks an
// SM; as words, 32 and 77. f16 stays in single halves: as words its dot took 77, not 64.)
template <>
struct Vector<__nv_bfloat16, 16> {
  static constexpr unsigned kCount = 8;
  unsigned words[4];
  __device__ __nv_bfloat16 at(unsigned j) const {
    __nv_bfloat16 pair[2];  // a register's two halves: no shift is needed to take one
    std::memcpy(pair, &words[j / 2], sizeof(pair));
    return pair[j % 2];
  }
};

// The unsigned type one load of Bytes bytes reads through __ldg.
template <unsigned Bytes>
struct LoadWord;
template <>
struct LoadWord<1> {
  using type = unsigned char;
};
template <>
struct LoadWord<2> {
  using type = unsigned short;
};
template <>
struct LoadWord<4> {
  using type = unsigned;
};
template <>
struct LoadWord<8> {
  using type = unsigned long long;
};
template <>
struct LoadWord<16> {
  using type = uint4;
};

// Loads vector v of `body` (aligned to Bytes) through the read-only path in one instruction.
template <unsigned Bytes, class T>
__device__ inline Vector<T, Bytes> load_vector(const T* body, std::size_t v) {
  using Word = typename LoadWord<Bytes>::type;
  const Word raw = __ldg(reinterpret_cast<const Word*>(body) + v);
  Vector<T, Bytes> out;
  std::memcpy(&out, &raw, Bytes);  // a register reinterpretation; no memory traffic
  return out;
}

// How pass 1 reads a vector: the lesson's plain 16-byte load.
struct VectorLoad {
  template <class T>
  using Vec = Vector<T, 16>;
  template <class T>
  __device__ static Vec<T> load(const T* in, std::size_t v) {
    return load_vector<16>(in, v);
  }
};

// Vector v is always elements [v * kCount, (v + 1) * kCount) of the input, whatever its address,
// so which thread adds which element, and in what order, follows the indices alone: the result's
// bits do not depend on where the input starts. An input whose start is not a multiple of the
// vector size reads the same vector in pieces of `width` bytes, the widest its address allows
// (8 for floats 8 bytes past a boundary, 4 for floats 4 or 12 past): more load instructions for
// the same bytes and the same order of additions.
template <unsigned Piece, class Vec, class T>
__device__ inline Vec load_in_pieces(const T* at) {
  static_assert(sizeof(Vec) % Piece == 0, "a vector is a whole number of pieces");
  using Word = typename LoadWord<Piece>::type;
  constexpr unsigned kPieces = sizeof(Vec) / Piece;
  Word words[kPieces];
#pragma unroll
  for (unsigned p = 0; p < kPieces; ++p) words[p] = __ldg(reinterpret_cast<const Word*>(at) + p);
  Vec out;
  std::memcpy(&out, words, sizeof(Vec));
  return out;
}

template <class Load, class T>
__device__ inline typename Load::template Vec<T> load_at(const T* in, std::size_t v, unsigned width) {
  using Vec = typename Load::template Vec<T>;
  if (width >= sizeof(Vec)) return Load::load(in, v);  // aligned: one instruction
  const T* at = in + v * Vec::kCount;
  if constexpr (sizeof(Vec) > 8 && sizeof(T) <= 8)
    if (width == 8) return load_in_pieces<8, Vec>(at);
  if constexpr (sizeof(Vec) > 4 && sizeof(T) <= 4)
    if (width == 4) return load_in_pieces<4, Vec>(at);
  if constexpr (sizeof(Vec) > 2 && sizeof(T) <= 2)
    if (width == 2) return load_in_pieces<2, Vec>(at);
  return load_in_pieces<sizeof(T), Vec>(at);
}

// The widest load, up to Bytes, that `in` allows: the largest power of two dividing its address.
template <unsigned Bytes>
__host__ __device__ inline unsigned load_width(const void* in) {
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(in);
  unsigned width = Bytes;
  while (width > 1 && address % width != 0) width /= 2;
  return width;
}

// What pass 1 reads: here one array; chapter 08 reads two and their products (ch08::Products),
// as CUB's TransformReduce applies a transform before the reduction.
//   element(i)  element i alone (the tail, fewer than a vector)
//   load(v)     vector v: elements [v * kCount, (v + 1) * kCount)
//   value(x, j) element j of a loaded vector
// kCount elements per vector, kLoads load instructions per vector (when aligned).
template <class T, class Load = VectorLoad>
struct Array {
  using Loaded = typename Load::template Vec<T>;
  static constexpr unsigned kCount = Loaded::kCount;
  static constexpr unsigned kLoads = 1;
  const T* in;
  unsigned width = load_width<sizeof(Loaded)>(in);
  bool element_aligned() const { return width >= sizeof(T); }
  __device__ T element(std::size_t i) const { return in[i]; }
  __device__ Loaded load(std::size_t v) const { return load_at<Load>(in, v, width); }
  __device__ T value(const Loaded& x, unsigned j) const { return x.at(j); }
};

// ---- appending a loaded vector ---------------------------------------------------------------
//
// Pass 1 appends each loaded vector's elements to its thread's accumulator in index order, one
// Op::append each. A sum of bytes adds them four at a time instead: __dp4a(word, 0x01010101, s)
// is one instruction for four bytes, where an append is three (unpack, then a 64-bit add), so the
// 16 bytes of a vector cost 6 instructions rather than 48. Integer sums are exact in any order:
// the result is the same. (Chapter 08's sources, which multiply two arrays, take the general way.)
// A sum of bf16 widens a word's two elements with a shift and a mask and adds them in index
// order, as the general way does: the same additions, the same bits.
template <class Op, class Source>
constexpr bool sums_bf16() {
  if constexpr (std::is_same_v<Op, red::Sum<__nv_bfloat16>>)
    return std::is_same_v<typename Source::Loaded, Vector<__nv_bfloat16>>;
  else
    return false;
}

template <class Op, class Source>
constexpr bool sums_bytes() {
  if constexpr (std::is_same_v<Op, red::Sum<std::uint8_t>>)
    return std::is_same_v<typename Source::Loaded, Vector<std::uint8_t>>;
  else
    return false;
}

// What an appended vector costs in adds: the unroll's limit on the work per trip (unroll_of).
template <class Op, class Source>
constexpr unsigned appends_per_vector() {
  return sums_bytes<Op, Source>() ? 4 : Source::kCount;
}

template <class Op, class Source>
__device__ inline typename Op::Acc append_vector(typename Op::Acc acc, const Source& src,
                                                 const typename Source::Loaded& x, std::size_t v) {
  if constexpr (sums_bytes<Op, Source>()) {
    unsigned sum = 0;  // at most 16 x 255
#pragma unroll
    for (unsigned w = 0; w < 4; ++w) sum = __dp4a(x.words[w], 0x01010101u, sum);
    return Op::combine(acc, static_cast<typename Op::Acc>(sum));
  } else if constexpr (sums_bf16<Op, Source>()) {
#pragma unroll
    for (unsigned w = 0; w < 4; ++w) {
      acc = Op::combine(acc, __uint_as_float(x.words[w] << 16));         // element 2w
      acc = Op::combine(acc, __uint_as_float(x.words[w] & 0xffff0000u));  // element 2w + 1
    }
    return acc;
  } else {
#pragma unroll
    for (unsigned j = 0; j < Source::kCount; ++j) acc = Op::append(acc, src.value(x, j), v * Source::kCount + j);
    return acc;
  }
}

}  // namespace ch07
