// Chapter 12's calls: one reduction per segment of an input, segments of any lengths. Host-side
// types only; the kernels and their launcher are reduce.cuh (the lesson) and variants.cuh (the
// tuned balanced kernel).
//
// Segment s is elements [offsets[s], offsets[s + 1]) of an input of n elements, CSR-style:
// `segments + 1` int64 offsets in device memory, nondecreasing, within [0, n]; empty segments are
// allowed, and elements before the first offset or after the last belong to no segment.
// Results, one per segment, in device memory, as chapter 11's (11_batched/batched.hpp):
//   sum      float (16-bit inputs accumulate in float)
//   max      float (the largest element, widened exactly); NaN if the segment holds a NaN
//   argmax   int32: the index of the largest element within its segment (ties: the smaller index;
//            the first NaN wins); -1 for an empty segment
// An empty segment gives the identity: sum 0, max -inf, argmax -1.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "11_batched/batched.hpp"
#include "dtype.hpp"

namespace ch12 {

// How the work is mapped to threads. automatic: the balanced mapping.
enum class Strategy {
  automatic,
  balanced,  // the elements split into ranges of equal cost, whatever the segments' lengths
  naive,     // a group of lanes per segment, sized to the mean length (no split)
};

// Which balanced kernel a call runs: the tuned one (variants.cuh), or the lesson's teaching one
// (reduce.cuh), the simplest code of the same idea. The naive mapping has one kernel for both.
enum class Kernels {
  tuned,
  teaching,
};

struct SegmentedCall {
  red::Op op = red::Op::sum;
  red::DType dtype = red::DType::f32;
  const void* input = nullptr;
  std::size_t n = 0;                      // the input's elements
  std::size_t segments = 0;               // how many (offsets holds segments + 1)
  const std::int64_t* offsets = nullptr;  // device memory
  void* output = nullptr;                 // segments results of 4 bytes each
  void* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
  Strategy strategy = Strategy::automatic;
  Kernels kernels = Kernels::tuned;
};

// The sum, max and argmax of f32, f16 and bf16, as chapter 11.
using ch11::supported;

// The bytes a call's GB/s counts, the least it must move: the elements read once, the segments + 1
// int64 offsets, and the results written (4 bytes each). The offsets count among the reads as in
// CUB's own segmented-reduce benchmark (cub/benchmarks/bench/segmented_reduce/variable_base.cuh
// in NVIDIA/cccl).
inline std::size_t counted_bytes(std::size_t n, std::size_t segments, std::size_t element_bytes) {
  return n * element_bytes + (segments + 1) * sizeof(std::int64_t) + segments * 4;
}

// Why a call's sizes cannot be run, or "": the offsets are checked apart (check_offsets, on a host
// copy). The input may span at most 2^60 elements, so that its bytes fit in 64 bits.
inline std::string why_invalid(std::size_t segments, std::size_t n) {
  if (segments >= 0xffffffffu) return "more than 2^32 - 2 segments";
  if (n > (std::size_t{1} << 60)) return "n above 2^60 elements";
  return "";
}

// Why a host copy of segments + 1 offsets is not a valid CSR for an input of n elements, or "": the
// first offset that is wrong, by its index and value, and why. Each offset is held to its sign and
// to the offset before it first, and to n only once all of them have passed: a program takes n
// from the last offset, so a bad last offset must be blamed, not a good one before it that lies
// past that n. Indices are int32 (argmax), so no segment may hold more than 2^31 - 1 elements.
inline std::string check_offsets(const std::int64_t* o, std::size_t segments, std::size_t n) {
  const auto offset = [o](std::size_t s) { return "offset " + std::to_string(s) + " (" + std::to_string(o[s]) + ")"; };
  for (std::size_t s = 0; s <= segments; ++s) {
    if (o[s] < 0) return offset(s) + " is negative";
    if (s == 0) continue;
    if (o[s] < o[s - 1]) return offset(s) + " is below " + offset(s - 1) + ": offsets must not decrease";
    if (o[s] - o[s - 1] > 0x7fffffff)
      return offset(s) + " is " + std::to_string(o[s] - o[s - 1]) + " past " + offset(s - 1) + ": segment " +
             std::to_string(s - 1) + " would hold more than 2^31 - 1 elements";
  }
  for (std::size_t s = 0; s <= segments; ++s)
    if (static_cast<std::size_t>(o[s]) > n)
      return offset(s) + " lies outside [0, " + std::to_string(n) + "], past the input's end";
  return "";
}

// The lengths make_offsets (host_reference.hpp) draws.
enum class SegmentDist { uniform, heavy };

// Why make_offsets(count, mean, dist) could draw segments that no call takes, or "": a segment of
// more than 2^31 - 1 elements, or more than 2^60 elements in all. It judges the most each
// distribution can draw, not what one seed happens to draw, so that generated offsets are valid by
// construction: uniform lengths reach 2 mean; the heavy tail's long segments 40 mean, and its one
// big segment count x mean / 2.
inline std::string why_not_generated(std::size_t count, std::size_t mean, SegmentDist dist) {
  constexpr std::size_t kMaxSegment = 0x7fffffff, kMaxElements = std::size_t{1} << 60;
  const auto too_long = [](std::size_t factor, std::size_t length, const std::string& which) {
    std::size_t product = 0;
    const std::string elements = __builtin_mul_overflow(factor, length, &product)
                                     ? std::to_string(factor) + " x " + std::to_string(length)
                                     : std::to_string(product);
    return "the " + which + " would hold " + elements + " elements, more than 2^31 - 1";
  };
  std::size_t elements = 0, all = 0;
  if (__builtin_mul_overflow(count, mean, &elements)) return "count x mean overflows";
  if (dist == SegmentDist::uniform) {
    if (mean > kMaxSegment / 2) return too_long(2, mean, "longest uniform segment (2 x mean)");
    if (__builtin_mul_overflow(elements, std::size_t{2}, &all) || all > kMaxElements)
      return "the segments could hold up to 2 x count x mean elements in all, more than 2^60";
    return "";
  }
  if (elements / 2 > kMaxSegment) return too_long(1, elements / 2, "heavy distribution's big segment (count x mean / 2)");
  if (count < 2) return "";  // the big segment alone
  if (mean > kMaxSegment / 40) return too_long(40, mean, "heavy distribution's longest tail segment (40 x mean)");
  if (__builtin_mul_overflow(count - 1, 40 * mean, &all) || all + elements / 2 > kMaxElements)
    return "the segments could hold up to count x mean / 2 + (count - 1) x 40 x mean elements in all, more than 2^60";
  return "";
}

inline std::string name(Kernels k) { return k == Kernels::teaching ? "teaching" : "tuned"; }

inline std::string name(Strategy s) {
  switch (s) {
    case Strategy::automatic: return "automatic";
    case Strategy::balanced: return "balanced";
    default: return "naive";
  }
}

}  // namespace ch12
