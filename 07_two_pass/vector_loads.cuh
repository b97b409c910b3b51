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

// A vector of bytes or 16-bit elements that starts 1-3 bytes past a 4-byte boundary would take 8
// or 16 narrow loads, and the L1 looks up a warp's 16 sectors for each: u8 and f16 sums at odd
// offsets ran far below their aligned speed (results/h200/experiments/alignment_cost.md).
// Instead load the two aligned 16-byte blocks the vector straddles, as every aligned vector is
// loaded, and cut its 16 bytes out of their 32: a whole-word step (selects) and a funnel shift.
// The second block is the next thread's first, an L1 hit: DRAM still reads each byte once. Both
// blocks lie inside the input only for a vector with a neighbour on each side (Array::load).
// The 16 bytes that start `skip` bytes into the 32 of blocks lo and hi.
__host__ __device__ inline uint4 cut_straddled(const uint4& lo, const uint4& hi, unsigned skip) {
  const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  // Words skip / 4 to skip / 4 + 4, chosen with selects: `skip` is the same in every thread, but a
  // register array indexed by a value the compiler does not know would go to local memory.
  const unsigned q = skip / 4;
  unsigned x[5];
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (unsigned j = 0; j < 5; ++j) {
    const unsigned even = (q & 1) ? w[j + 1] : w[j];
    const unsigned odd = (q & 1) ? w[j + 3] : w[j + 2];
    x[j] = (q & 2) ? odd : even;
  }
  // Then the bytes within a word: the low 32 bits of (x[k+1]:x[k]) >> shift, one funnel shift.
  const unsigned shift = 8 * (skip % 4);
  auto funnel = [shift](unsigned low, unsigned high) {
#ifdef __CUDA_ARCH__
    return __funnelshift_r(low, high, shift);
#else
    return static_cast<unsigned>(((static_cast<unsigned long long>(high) << 32) | low) >> shift);
#endif
  };
  return make_uint4(funnel(x[0], x[1]), funnel(x[1], x[2]), funnel(x[2], x[3]), funnel(x[3], x[4]));
}

__device__ inline uint4 load_straddling(const void* at) {
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(at);
  const unsigned skip = static_cast<unsigned>(address % 16);  // bytes of the first block before the vector
  const uint4* block = reinterpret_cast<const uint4*>(address - skip);
  return cut_straddled(__ldg(block), __ldg(block + 1), skip);
}

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

// The 16 bytes of vector v of `in` (or the vector itself where it is smaller), by the widest
// loads `width` allows, or by load_straddling's way where `straddle` says its neighbours are there.
template <class Load, class T, class Words>
__device__ inline Words load_words(const T* in, std::size_t v, unsigned width, bool straddle) {
  using Vec = typename Load::template Vec<T>;
  const T* at = in + v * Vec::kCount;
  if (width >= sizeof(Vec)) {  // aligned: one instruction
    const Vec x = Load::load(in, v);
    Words raw;
    std::memcpy(&raw, &x, sizeof(Vec));
    return raw;
  }
  if constexpr (sizeof(Vec) == 16 && sizeof(T) <= 2)
    if (straddle) return load_straddling(at);
  if constexpr (sizeof(Vec) > 8 && sizeof(T) <= 8)
    if (width == 8) return load_in_pieces<8, Words>(at);
  if constexpr (sizeof(Vec) > 4 && sizeof(T) <= 4)
    if (width == 4) return load_in_pieces<4, Words>(at);
  if constexpr (sizeof(Vec) > 2 && sizeof(T) <= 2)
    if (width == 2) return load_in_pieces<2, Words>(at);
  return load_in_pieces<sizeof(T), Words>(at);
}

// Vector v, loaded as load_words says. Every way fills the same 16 bytes of words, and the vector
// is made of them only where the ways meet: merged as vectors instead, the compiler (nvcc 13,
// sm_90) kept f64, i64 and f16 vectors in other registers than the 16-byte load's, and the copy
// between them, right after the load, waited for its data, so that each thread had one load in
// flight instead of its whole unroll.
template <class Load, class T>
__device__ inline typename Load::template Vec<T> load_at(const T* in, std::size_t v, unsigned width,
                                                          bool straddle = false) {
  using Vec = typename Load::template Vec<T>;
  using Words = std::conditional_t<sizeof(Vec) == 16, uint4, Vec>;
  const Words raw = load_words<Load, T, Words>(in, v, width, straddle);
  Vec out;
  std::memcpy(&out, &raw, sizeof(Vec));
  return out;
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
// n, where the caller gives it, lets a misaligned vector of 1- and 2-byte elements be cut out of
// whole blocks (load_straddling); without it (0) such vectors are read in narrow pieces.
template <class T, class Load = VectorLoad>
struct Array {
  using Loaded = typename Load::template Vec<T>;
  static constexpr unsigned kCount = Loaded::kCount;
  static constexpr unsigned kLoads = 1;
  const T* in;
  std::size_t n = 0;
  unsigned width = load_width<sizeof(Loaded)>(in);
  bool element_aligned() const { return width >= sizeof(T); }
  __device__ T element(std::size_t i) const { return in[i]; }
  __device__ Loaded load(std::size_t v) const {
    const bool straddle = sizeof(T) <= 2 && width < 4 && v > 0 && v + 1 < n / kCount;
    return load_at<Load>(in, v, width, straddle);
  }
  // Whether misaligned vectors are cut out of the blocks they straddle, and vector v so cut, for a
  // caller that knows vectors v - 1 and v + 1 exist (load_trip).
  __device__ bool straddles() const { return sizeof(T) <= 2 && sizeof(Loaded) == 16 && width < 4 && n > 0; }
  __device__ Loaded load_straddled(std::size_t v) const {
    if constexpr (sizeof(Loaded) == 16) {
      const uint4 raw = load_straddling(in + v * kCount);
      Loaded out;
      std::memcpy(&out, &raw, sizeof out);
      return out;
    } else {
      return load(v);
    }
  }
  __device__ T value(const Loaded& x, unsigned j) const { return x.at(j); }
};

// Whether a Source cuts misaligned vectors out of the blocks they straddle (Array::load_straddled).
template <class Source, class = void>
struct CutsStraddled : std::false_type {};
template <class Source>
struct CutsStraddled<Source, std::void_t<decltype(&Source::load_straddled)>> : std::true_type {};

// One trip of pass 1: vectors first, first + kStep, ... into x, every load issued before any
// vector is used. Where the input's vectors straddle blocks and every vector of the trip has a
// neighbour on each side, the whole trip is cut out of blocks (load_straddled), with no test per
// vector: chosen vector by vector (Array::load), each cut sat in its vector's branch and waited for
// its two loads, so that a thread had one vector's loads in flight instead of the trip's.
template <unsigned kStep, class Source, unsigned kUnroll>
__device__ inline void load_trip(const Source& src, typename Source::Loaded (&x)[kUnroll], std::size_t first,
                                 std::size_t vectors) {
  if constexpr (CutsStraddled<Source>::value) {
    if (src.straddles() && first > 0 && first + (kUnroll - 1) * kStep + 1 < vectors) {
#pragma unroll
      for (unsigned u = 0; u < kUnroll; ++u) x[u] = src.load_straddled(first + u * kStep);
      return;
    }
  }
#pragma unroll
  for (unsigned u = 0; u < kUnroll; ++u) x[u] = src.load(first + u * kStep);
}

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
