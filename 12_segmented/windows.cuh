// The tuned balanced kernel's parts (variants.cuh): the cost search that finds several bounds at
// once from probes loaded early and placed around a guess, the warp's search for a segment, and a
// window's shared memory (the marks of the segments' ends, the partials put aside at them, and the
// window's elements as cp.async copies them). The lesson's own search is warp_cost_bound
// (reduce.cuh), which this generalizes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "12_segmented/reduce.cuh"

namespace ch12 {

// The first segment s >= from whose end is past element p (the segment holding p, once the ends at
// or before p are closed), found by a whole warp: 32 probes at a time, each step narrowing the
// range 31-fold (5 dependent loads for 2^24 segments instead of 24). Every lane gets the answer.
__device__ inline std::size_t warp_segment_after(const std::int64_t* offsets, std::size_t segments, std::size_t from,
                                                 std::size_t p) {
  const unsigned lane = threadIdx.x % 32;
  std::size_t a_lo = from, a_hi = segments;  // the answer is in [a_lo, a_hi]
  while (a_lo < a_hi) {
    const std::size_t step = (a_hi - a_lo + 30) / 31;
    const std::size_t c = std::min(a_lo + lane * step, a_hi);
    const bool past = c >= segments || static_cast<std::size_t>(offsets[c + 1]) > p;
    const unsigned k = __ffs(__ballot_sync(0xffffffffu, past)) - 1;  // lane 31 probes a_hi: always past
    const std::size_t ck = __shfl_sync(0xffffffffu, c, k), before = __shfl_sync(0xffffffffu, c, k == 0 ? 0 : k - 1);
    if (k == 0) return ck;
    a_lo = before + 1;
    a_hi = ck;
  }
  return a_hi;
}

// The lesson's range_cost_step for the tuned kernel's ranges, whose origin is offsets[0] rounded
// down to a lane's share `items` (so that every window's loads are aligned).
__host__ __device__ inline std::size_t window_cost_step(std::size_t first, std::size_t last, std::size_t segments,
                                                        std::size_t items, std::size_t cost, std::size_t ranges) {
  const std::size_t total = last - first / items * items + cost * segments;
  return (total + ranges - 1) / ranges;
}

// The cost search of the tuned kernel: the lesson's warp_cost_bound (reduce.cuh) for N bounds at
// once, 32 probes of each a step, so that one trip to memory serves them all; every lane gets each
// bound's j (its `ends`) and the end of that segment (`last` for j = segments), from the probes'
// own loads. The caller turns them into elements as the lesson does.
template <unsigned N>
struct CostBounds {
  std::size_t j[N];
  std::size_t end[N];
};
// The search's first step probes the same segments for every bound and in every warp:
// first_probe(segments) says which one this lane probes. `first_end` is the end the caller
// loaded there, together with offsets[0] and offsets[segments], so that the search makes one trip
// to memory fewer after those.
__device__ inline std::size_t first_probe(std::size_t segments) {
  return std::min<std::size_t>(std::size_t{threadIdx.x % 32} * ((segments + 30) / 31), segments);
}
// Guessed probes: for bound q, lane l probes segment c[q] (nondecreasing in l, at most
// `segments`), loaded before the search as e[q] = offsets[c[q] + 1] (anything where c[q] ==
// segments). Uniform lengths put a bound within a few hundred segments of the guess for 2^21
// segments; the heavy tail's big segment moves most bounds far from it, and those searches take
// the usual first step instead, whose probes were loaded with the guess's.
template <unsigned N>
struct GuessedProbes {
  std::size_t c[N];
  std::size_t e[N];
};
// guessed_probe: the segment this lane probes for the bound where range `range` begins: the guess,
// range x segments / ranges, from 16 spacings below it (lane 0) to 15 above (lane 31), within
// [0, segments]. The spacing is sqrt(segments) / 4, but at most 31, so that one more step of the
// search ends it where the probes bracket the bound. Doubles, not 64-bit integer division, which
// sm_90 does in software.
__device__ inline std::size_t guessed_probe(std::size_t range, std::size_t ranges, std::size_t segments) {
  const double spacing = std::max(1.0, std::min(31.0, floor(sqrt(static_cast<double>(segments)) / 4)));
  const double guess = floor(static_cast<double>(range) * (static_cast<double>(segments) / static_cast<double>(ranges)));
  const double c = guess + (static_cast<double>(threadIdx.x % 32) - 16) * spacing;
  return static_cast<std::size_t>(std::min(static_cast<double>(segments), std::max(0.0, c)));
}
template <unsigned N>
__device__ __forceinline__ CostBounds<N> warp_cost_bounds(const std::int64_t* offsets, std::size_t segments,
                                                          std::size_t last, std::size_t origin, std::size_t cost,
                                                          const std::size_t (&t)[N], std::size_t first_end,
                                                          const GuessedProbes<N>& guessed) {
  const unsigned lane = threadIdx.x % 32;
  std::size_t a[N];
  CostBounds<N> b;  // each answer in [a, b.j]
  bool preloaded[N];  // whether bound q's first step's probes are first_end
#pragma unroll
  for (unsigned q = 0; q < N; ++q) {
    a[q] = 0;
    b.j[q] = segments;
    b.end[q] = last;
    preloaded[q] = true;
  }
  // Where the guessed probes bracket the bound (lane k the first past it, k > 0, or lane 0's
  // probe segment 0), the search goes on between lanes k - 1 and k. Where the bound lies below
  // lane 0's probe or above lane 31's, the guess is dropped, and the first step is the usual
  // one (first_end, loaded with the guess): a miss costs no trip to memory.
#pragma unroll
  for (unsigned q = 0; q < N; ++q) {
    const std::size_t c = guessed.c[q];
    const bool past = c >= segments || guessed.e[q] - origin + cost * (c + 1) > t[q];
    const unsigned ballot = __ballot_sync(0xffffffffu, past);
    const unsigned k = ballot ? __ffs(ballot) - 1 : 0;
    const std::size_t ck = __shfl_sync(0xffffffffu, c, k), ek = __shfl_sync(0xffffffffu, guessed.e[q], k);
    const std::size_t before = __shfl_sync(0xffffffffu, c, k == 0 ? 0 : k - 1);
    if (ballot != 0 && (k > 0 || ck == 0)) {
      a[q] = k > 0 ? before + 1 : 0;
      b.j[q] = ck;
      b.end[q] = ck >= segments ? last : ek;
      preloaded[q] = false;
    }
  }
  for (bool first_step = true;; first_step = false) {
    bool searching = false;
#pragma unroll
    for (unsigned q = 0; q < N; ++q) searching |= a[q] < b.j[q];
    if (!searching) break;
    std::size_t c[N], e[N];
#pragma unroll
    for (unsigned q = 0; q < N; ++q) {  // every probe's load issued before any is used
      c[q] = std::min(a[q] + lane * ((b.j[q] - a[q] + 30) / 31), b.j[q]);
      const bool first = first_step && preloaded[q];
      e[q] = c[q] >= segments ? last : first ? first_end : static_cast<std::size_t>(offsets[c[q] + 1]);
    }
#pragma unroll
    for (unsigned q = 0; q < N; ++q) {
      if (a[q] == b.j[q]) continue;  // found (the same for the whole warp)
      const bool past = c[q] >= segments || e[q] - origin + cost * (c[q] + 1) > t[q];
      const unsigned k = __ffs(__ballot_sync(0xffffffffu, past)) - 1;  // lane 31 probes b.j: always past
      const std::size_t ck = __shfl_sync(0xffffffffu, c[q], k), ek = __shfl_sync(0xffffffffu, e[q], k);
      const std::size_t before = __shfl_sync(0xffffffffu, c[q], k == 0 ? 0 : k - 1);
      a[q] = k == 0 ? ck : before + 1;
      b.j[q] = ck;
      b.end[q] = ek;
    }
  }
  return b;
}

// A window's partials of the segments its lanes close, by position: lane l's j-th element at
// [j][l], so that the lanes writing their j-th elements hit 32 different banks. An argmax keeps its
// value and the index's offset from the lane's first element (a closed segment's elements in a
// lane are fewer than kItems), so the array stays 5 bytes an element.
template <class Op, unsigned kItems, class Acc = typename Op::Acc>
struct ClosedPartials {
  Acc v[kItems][32];
  __device__ void put(unsigned j, unsigned lane, Acc a, std::size_t) { v[j][lane] = a; }
  __device__ Acc get(unsigned j, unsigned lane, std::size_t) const { return v[j][lane]; }
};
template <class Op, unsigned kItems, class W>
struct ClosedPartials<Op, kItems, red::ValueIndex<W>> {
  W value[kItems][32];
  unsigned char offset[kItems][32];
  __device__ void put(unsigned j, unsigned lane, red::ValueIndex<W> a, std::size_t g) {
    value[j][lane] = a.value;
    offset[j][lane] = static_cast<unsigned char>(a.index - static_cast<long long>(g));
  }
  __device__ red::ValueIndex<W> get(unsigned j, unsigned lane, std::size_t g) const {
    return {value[j][lane], static_cast<long long>(g + offset[j][lane])};
  }
};

// One warp's shared memory for a window.
template <class Op, unsigned kItems>
struct WindowMarks {
  unsigned ends[kItems];                 // bit p of the window: a segment ends with element w0 + p
  ClosedPartials<Op, kItems> partials;   // what each lane put aside at each mark
  typename Op::Acc before[32];           // lane l: the elements of lanes < l (and the carry) in its first segment
};

// A lane's kItems elements of a window, held as the 32-bit words its 16-byte loads bring: an
// element is taken out of its word where the walk adds it. Held as kItems separate 16-bit
// registers, a half or bfloat16 vector is unpacked right after its load, and that unpacking waits
// for the data: the next window's loads, issued after the walk, would not fly during the rest of
// the window (the scan and the writing pass), and the elements would take twice the registers.
// An input off a 16-byte boundary is loaded an element at a time (kWords false): there each
// element keeps a register of its own, since merging it into a word would wait for its load.
template <class T, unsigned kItems, bool kWords = true>
struct LaneElements {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "32-bit words of one or two elements");
  static constexpr unsigned kPerWord = 4 / sizeof(T);
  unsigned w[kItems / kPerWord];
  __device__ __forceinline__ void set_vector(unsigned u, uint4 v) {
    w[4 * u] = v.x, w[4 * u + 1] = v.y, w[4 * u + 2] = v.z, w[4 * u + 3] = v.w;
  }
  __device__ __forceinline__ T get(unsigned j) const {
    T e[kPerWord];
    memcpy(e, &w[j / kPerWord], 4);
    return e[j % kPerWord];
  }
  __device__ __forceinline__ void set(unsigned j, T value) {
    T e[kPerWord];
    memcpy(e, &w[j / kPerWord], 4);
    e[j % kPerWord] = value;
    memcpy(&w[j / kPerWord], e, 4);
  }
};
template <class T, unsigned kItems>
struct LaneElements<T, kItems, false> {
  T e[kItems];
  __device__ __forceinline__ void set_vector(unsigned u, uint4 v) { memcpy(&e[u * (16 / sizeof(T))], &v, 16); }
  __device__ __forceinline__ T get(unsigned j) const { return e[j]; }
  __device__ __forceinline__ void set(unsigned j, T value) { e[j] = value; }
};

// A window's elements as cp.async copies them (SegmentTuning::kStagedLoads). The copies take
// 16-byte vectors l, 32 + l, ... of the window in lane l, so that each copy instruction of the warp
// reads 512 contiguous bytes: 4 lines of 128 bytes. A lane loading its own kVecs vectors makes each
// load instruction of the warp touch 16 lines, and the L1 passes one line's data a cycle, on the
// same pipe as the marks, the shuffles and the shared memory of the window's work. The walk wants
// lane l's vectors l x kVecs to l x kVecs + kVecs - 1. Vector v lies at slot v ^ ((v >> 3) & (kVecs - 1)):
// the 8 lanes of a quarter warp then hit 8 different 16-byte bank groups both when the copies
// write their vectors (v's low 3 bits vary) and when the lanes read theirs (bits 3 and up vary).
template <unsigned kVecs>
struct StagedWindow {
  static_assert(kVecs == 1 || kVecs == 2 || kVecs == 4 || kVecs == 8, "the swizzle below");
  uint4 slot[32 * kVecs];
  static __device__ unsigned of(unsigned v) { return v ^ ((v >> 3) & (kVecs - 1)); }
};
struct NoStagedWindow {};

// cp.async of 16 bytes global -> shared, cached in L2 only (.cg) and marked evict-first there
// (each element is read once), and the waits for it.
__device__ __forceinline__ std::uint64_t evict_first_policy() {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ void copy16_async(void* shared, const void* global, std::uint64_t policy) {
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(to), "l"(global), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void copies_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void copies_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

}  // namespace ch12
