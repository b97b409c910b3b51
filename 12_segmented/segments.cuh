// Chapter 12's kernels: the naive mapping (a group per segment) and the balanced one (ranges of
// equal cost, whatever the lengths), with its policies. The launcher is reduce.cuh.
#pragma once

#include "11_batched/ranges.cuh"  // chapter 11's loads, group reduce and result store

namespace ch12 {

// Chapter 11's pieces that the segments' kernels read with.
namespace cg = cooperative_groups;
using ch11::global_timer;
using ch11::group_reduce;
using ch11::kBlock;
using ch11::lane_accumulate;
using ch11::lane_accumulate_masked;
using ch11::load_vector;
using ch11::shfl_down;
using ch11::shfl_up;
using ch11::store_result;
using ch11::Vec16;

// ---- segments -----------------------------------------------------------------------------------------
//
// Segment s is elements [offsets[s], offsets[s + 1]) of the input; offsets are nondecreasing and
// within [0, n] (the program checks them on the host before a call).
//
// The naive mapping: a group of G lanes per segment, G from the mean length, as rows_by_group. It
// is fast while every segment is about the mean; one segment with half the elements leaves a
// single group reading them while the rest of the GPU waits.
// [excerpt: naive]
template <class Op, class T, unsigned G, bool kAligned>
__global__ void __launch_bounds__(kBlock)
    segments_by_group(const T* in, const std::int64_t* offsets, std::size_t segments, std::size_t n, void* out) {
  constexpr unsigned kGroups = kBlock / G;
  const unsigned lane = threadIdx.x % G;
  for (std::size_t s = std::size_t{blockIdx.x} * kGroups + threadIdx.x / G; s < segments;
       s += std::size_t{gridDim.x} * kGroups) {
    const std::size_t begin = static_cast<std::size_t>(offsets[s]), end = static_cast<std::size_t>(offsets[s + 1]);
    const typename Op::Acc acc =
        group_reduce<Op, G>(kAligned ? lane_accumulate_masked<Op>(in, n, begin, end, lane, G)
                                     : lane_accumulate<Op>(in + begin, end - begin, 0, lane, G));
    if (lane == 0) store_result<Op>(out, s, acc);
  }
}
// [end: naive]

// The balanced mapping: split the elements, not the segments. The elements from offsets[0] to
// offsets[segments] are cut into ranges of equal cost, one per warp (warp_cost_bounds), so every
// warp has about the same work whatever the lengths; a warp reads its range in windows of 32 lanes
// x kItems, lane l taking the window's kItems consecutive elements from l * kItems. The warps never
// wait for each other. For each window the warp marks, in shared memory of its own, where the
// window's segments end (one bit per element), reading the offsets in order, 32 at a time and a
// batch ahead. Each lane walks its elements and, at every mark, puts its partial aside and starts a
// new one. A segmented scan over the lanes gives each lane what the lanes before it hold of the
// segment it closes first, and then a lane per segment closed in the window writes its result: the
// partial put aside where the segment ends, after the scan's share if it began in an earlier lane.
// A segment still open at the window's end is carried on: in a window with no end at all each lane
// just adds its elements to a partial of its own, and those are folded into the carry at the next
// window that has one. A segment that began in an earlier warp's range is finished by a last kernel
// over the warps' partials. Every partial is combined in an order fixed by the offsets (the
// result's bits depend on the shape only).
//
// Which window closes a segment: the one holding its last element. A window [w0, w1) owns the
// ends e with w0 < e <= w1; the window that begins at offsets[0] also owns the ends equal to it
// (empty segments at the very start). An empty segment gets its identity in the window that owns
// its end.
constexpr unsigned kWarpsPerBlock = kBlock / 32;
constexpr std::size_t kNoSegment = ~std::size_t{0};

// The balanced kernel's choices; 12_segmented_segment_tuning
// (experiments/12_segmented/segment_tuning.cu) changes one at a time and times them on the
// benchmark's segment shapes (results/h200/experiments/segment_tuning.md).
struct SegmentTuning {
  static constexpr unsigned kItems = 16;        // a lane's consecutive elements in a window: 4 16-byte
                                                // loads of f32 (16-bit inputs: SegmentTuning16)
  static constexpr bool kDoubleBuffer = false;  // the next window's loads go into a second array at the
                                                // window's start (true), or into the same one once the
                                                // walk has used it (false: 16 registers fewer)
  static constexpr unsigned kMinBlocks = 4;     // blocks of 256 threads an SM holds: 64 registers
  static constexpr bool kStreamingLoads = true;  // the elements read evict-first: each is read once,
                                                 // while the offsets are read again (the ends, then
                                                 // the writing pass) and should stay in L1 and L2
                                                 // (the staged copies: in L2; they skip L1)
  static constexpr unsigned kWaves = 1;         // ranges for one wave of blocks (more waves: shorter
                                                // ranges, which the GPU hands out as SMs free up)
  static constexpr unsigned kSegmentCost = 32;  // what a segment's end costs a warp, in elements: the
                                                // ranges hold equal elements + kSegmentCost x ends
                                                // (0: equal elements). A window dense with ends takes
                                                // far longer than one inside a long segment
  static constexpr bool kEarlyFinish = true;    // the finishing kernel launched before the first
                                                // ends, waiting for it inside (sm_90+): its launch
                                                // overlaps the first's last warps
  static constexpr bool kEarlyProbe = true;     // the cost search's first probes loaded with offsets[0]
                                                // and offsets[segments], one trip to memory before
                                                // the others (false: once those have come)
  static constexpr bool kGuessProbe = true;     // with those, probes around where the bound would
                                                // lie if every segment cost the same
                                                // (GuessedProbes), so that where the bound lies among
                                                // them one more step of the search ends it (in a
                                                // model of the search, 2 trips to memory in all
                                                // instead of 5 for 2^21 segments of uniform
                                                // lengths); where it misses, the usual first
                                                // step's probes, loaded in the same trip, take over
  static constexpr bool kStagedLoads = true;    // a window's elements copied into shared memory
                                                // (cp.async), each copy 512 contiguous bytes a warp,
                                                // then read from there by the lanes (StagedWindow);
                                                // false: each lane loads its own 16 into registers
  static constexpr bool kTimeline = false;      // the timer read at points of each warp's range
                                                // (SegmentTimeline): for 12_segmented_segment_timeline only
  static constexpr bool kPreloadBefore = true;  // the finishing kernel loads the record of the range
                                                // before a head's with the head's (one trip to
                                                // memory where the segment began there); false: the
                                                // head's record, then the tails (two trips)
  static constexpr bool kSharedBounds = true;   // each warp searches its range's first bound alone and
                                                // takes its last from the next warp of its block
                                                // (half the search's probes, a barrier); false: a
                                                // warp searches both
};

// 16-bit inputs: the same elements are half the bytes, and the warp's fixed work a window (the
// marks, the scan, the writing pass) is then spread over half the bytes. 32 elements a lane make a
// window the bytes of an f32 one, in half as many windows. They are loaded by each lane into its
// registers: copied into shared memory, the window and its 32 x 32 closed partials would take a
// block of 8 warps past the 48 KB of static shared memory. 16 registers more than 4 blocks an SM
// allow leave 3.
struct SegmentTuning16 : SegmentTuning {
  static constexpr unsigned kItems = 32;
  static constexpr bool kStagedLoads = false;
  static constexpr unsigned kMinBlocks = 3;
};
template <class T>
using SegmentPolicy = std::conditional_t<sizeof(T) == 2, SegmentTuning16, SegmentTuning>;

// Where the balanced kernels' time goes, for 12_segmented_segment_timeline
// (experiments/12_segmented/segment_timeline.cu): with
// Policy::kTimeline, lane 0 of each warp writes the GPU's global timer (ns) at five points of its
// range into segment_timeline[range] (a device array the experiment sets; none: nothing is
// written), and the finishing warp of range r two more. The lesson's policy compiles every stamp out.
struct SegmentTimeline {
  enum Point : unsigned {
    entry,                // the warp has begun
    bounds,               // the cost search has found the range's bounds
    first_segment,        // the first segment's end is among the batches: the walk can begin
    first_window,         // the range's first window is done
    last_window,          // all of its windows are done
    finish_visible,       // the finishing warp of this range sees every range's record
    finish_done,          // ... and has written its segment (when the range had a head)
  };
  unsigned long long at[7];
  unsigned sm;       // the SM the warp ran on
  unsigned windows;  // the range's windows
  unsigned long long ends;  // the segment ends it marked
};
static __device__ SegmentTimeline* segment_timeline = nullptr;
template <bool kTimeline>
__device__ __forceinline__ void mark_time(std::size_t range, SegmentTimeline::Point point) {
  if constexpr (kTimeline) {
    if (threadIdx.x % 32 != 0 || segment_timeline == nullptr) return;
    segment_timeline[range].at[point] = global_timer();
  }
}

// What a warp leaves for whoever finishes its first and last segments.
template <class Acc>
struct Pieces {
  std::size_t head;        // a segment that began before the warp's range and ends in it, or kNoSegment
  std::size_t head_begin;  // its first element (offsets[head]: the finishing kernel need not read it)
  Acc head_acc;            // its elements in the range
  std::size_t tail;  // the segment still open at the range's end if it has elements in it, or kNoSegment
  Acc tail_acc;      // its elements in the range
};

// A segment's result. The balanced kernels index an argmax by its position in the input; the
// result is its position in the segment, which begins at `begin`.
template <class Op>
__device__ void store_segment(void* out, std::size_t s, std::size_t begin, typename Op::Acc a) {
  if constexpr (Op::op == red::Op::argmax)
    if (a.index != red::ArgMax<float>::kNoIndex) a.index -= static_cast<long long>(begin);
  store_result<Op>(out, s, a);
}

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

// Where the warps' ranges begin: along the merge of the elements (cost 1 each) and the segments'
// ends (cost c each, the end of segment s coming right after its last element), range w takes the
// costs [w x step, (w + 1) x step). A range's bound at cost t is (i, j): j the first segment whose
// end's cost is past t, and i = t - c x j elements from the origin, but no further than segment
// j's end (the cost t then falls on that end). The warp finds N bounds at once, 32 probes of each
// a step, narrowing 31-fold (as warp_segment_after); every lane gets each bound's j and the end of
// that segment (`last` for j = segments), from the probes' own loads.
template <unsigned N>
struct CostBounds {
  std::size_t j[N];
  std::size_t end[N];
};
// The search's first step probes the same segments for every bound and in every warp:
// first_probe(segments) says which one this lane probes. With have_first_end, `first_end` is the
// end the caller already loaded there, together with offsets[0] and offsets[segments]
// (SegmentTuning::kEarlyProbe), so that the search makes one trip to memory fewer after those.
__device__ inline std::size_t first_probe(std::size_t segments) {
  return std::min<std::size_t>(std::size_t{threadIdx.x % 32} * ((segments + 30) / 31), segments);
}
// SegmentTuning::kGuessProbe: for bound q, lane l probes segment c[q] (nondecreasing in l, at most
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
template <unsigned N, bool kGuessed = false>
__device__ __forceinline__ CostBounds<N> warp_cost_bounds(const std::int64_t* offsets, std::size_t segments,
                                                          std::size_t last, std::size_t origin, std::size_t cost,
                                                          const std::size_t (&t)[N], bool have_first_end,
                                                          std::size_t first_end,
                                                          const GuessedProbes<N>* guessed = nullptr) {
  const unsigned lane = threadIdx.x % 32;
  std::size_t a[N];
  CostBounds<N> b;  // each answer in [a, b.j]
#pragma unroll
  for (unsigned q = 0; q < N; ++q) {
    a[q] = 0;
    b.j[q] = segments;
    b.end[q] = last;
  }
  [[maybe_unused]] bool preloaded[N];  // kGuessed: whether bound q's first step's probes are first_end
  if constexpr (kGuessed) {
#pragma unroll
    for (unsigned q = 0; q < N; ++q) preloaded[q] = have_first_end;
    // Where the guessed probes bracket the bound (lane k the first past it, k > 0, or lane 0's
    // probe segment 0), the search goes on between lanes k - 1 and k. Where the bound lies below
    // lane 0's probe or above lane 31's, the guess is dropped, and the first step is the usual
    // one (first_end, loaded with the guess): a miss costs no trip to memory.
#pragma unroll
    for (unsigned q = 0; q < N; ++q) {
      const std::size_t c = guessed->c[q];
      const bool past = c >= segments || guessed->e[q] - origin + cost * (c + 1) > t[q];
      const unsigned ballot = __ballot_sync(0xffffffffu, past);
      const unsigned k = ballot ? __ffs(ballot) - 1 : 0;
      const std::size_t ck = __shfl_sync(0xffffffffu, c, k), ek = __shfl_sync(0xffffffffu, guessed->e[q], k);
      const std::size_t before = __shfl_sync(0xffffffffu, c, k == 0 ? 0 : k - 1);
      if (ballot != 0 && (k > 0 || ck == 0)) {
        a[q] = k > 0 ? before + 1 : 0;
        b.j[q] = ck;
        b.end[q] = ck >= segments ? last : ek;
        preloaded[q] = false;
      }
    }
  }
  for (bool first_step = have_first_end;; first_step = false) {
    bool searching = false;
#pragma unroll
    for (unsigned q = 0; q < N; ++q) searching |= a[q] < b.j[q];
    if (!searching) break;
    std::size_t c[N], e[N];
#pragma unroll
    for (unsigned q = 0; q < N; ++q) {  // every probe's load issued before any is used
      c[q] = std::min(a[q] + lane * ((b.j[q] - a[q] + 30) / 31), b.j[q]);
      bool first = first_step;
      if constexpr (kGuessed) first = first && preloaded[q];
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

// cp.async of 16 bytes global -> shared, cached in L2 only (.cg), marked evict-first there when
// kStreaming (each element is read once: SegmentTuning::kStreamingLoads), and the waits for it.
__device__ __forceinline__ std::uint64_t evict_first_policy() {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
template <bool kStreaming>
__device__ __forceinline__ void copy16_async(void* shared, const void* global, std::uint64_t policy) {
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  if constexpr (kStreaming)
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(to), "l"(global), "l"(policy)
                 : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global) : "memory");
}
__device__ __forceinline__ void copies_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void copies_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

// [excerpt: cost-step]
// The cost of a range (warp_cost_bounds): the elements from offsets[0] rounded down to a lane's
// share `items`, plus `cost` for every segment's end, shared out among `ranges` warps.
__host__ __device__ inline std::size_t range_cost_step(std::size_t first, std::size_t last, std::size_t segments,
                                                       std::size_t items, std::size_t cost, std::size_t ranges) {
  const std::size_t total = last - first / items * items + cost * segments;
  return (total + ranges - 1) / ranges;
}
// [end: cost-step]

// A warp's range of elements, window by window: the segments it closes written (one that began in
// an earlier range left in records[range] instead, with the partial of the segment still open at
// the range's end). The ranges hold equal costs (warp_cost_bounds) from offsets[0] rounded down to
// a lane's share, their bounds rounded down to whole windows from there, so that every lane's
// loads are aligned and no two ranges share a window. A range past the last segment's end is empty. With no
// elements at all, every segment is empty and the warps write the identities.
template <class Op, class T, bool kAligned, class Policy = SegmentPolicy<T>>
__global__ void __launch_bounds__(kBlock, Policy::kMinBlocks)
    segments_balanced(const T* in, const std::int64_t* offsets, std::size_t segments, void* out,
                      Pieces<typename Op::Acc>* records) {
  using Acc = typename Op::Acc;
  using V = Vec16<T>;
  constexpr unsigned kItems = Policy::kItems, kWindow = 32 * kItems, kVecs = kItems * sizeof(T) / 16;
  constexpr unsigned kAll = 0xffffffffu;
  static_assert(32 % kItems == 0 || kItems == 32, "a lane's marks lie in one 32-bit word");
#if __CUDA_ARCH__ >= 900
  if constexpr (Policy::kEarlyFinish) cudaTriggerProgrammaticLaunchCompletion();
#endif
  static_assert(!(Policy::kStagedLoads && Policy::kDoubleBuffer), "staged loads keep one array");
  // Copies into shared memory need an input on a 16-byte boundary: an unaligned one keeps the
  // lanes' loads into registers, one window ahead.
  constexpr bool kStaged = Policy::kStagedLoads && kAligned;
  using Staged = std::conditional_t<kStaged, StagedWindow<kVecs>, NoStagedWindow>;
  __shared__ WindowMarks<Op, kItems> shared_marks[kWarpsPerBlock];
  __shared__ Staged shared_staged[kStaged ? kWarpsPerBlock : 1];
  const unsigned lane = threadIdx.x % 32;
  WindowMarks<Op, kItems>& marks = shared_marks[threadIdx.x / 32];
  Staged& staged = shared_staged[kStaged ? threadIdx.x / 32 : 0];
  const std::size_t range = std::size_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;  // this warp's
  mark_time<Policy::kTimeline>(range, SegmentTimeline::entry);
  const std::size_t probe = first_probe(segments);  // the cost search's first probe, loaded at once
  constexpr bool kGuess = Policy::kGuessProbe && Policy::kEarlyProbe;  // guessed probes are loaded early
  const std::size_t first_end =
      Policy::kEarlyProbe && probe < segments ? static_cast<std::size_t>(offsets[probe + 1]) : 0;
  // Or the guessed probes of this warp's first bound, and of its last where it searches that too.
  [[maybe_unused]] GuessedProbes<2> guessed{};
  if constexpr (kGuess) {
    const std::size_t ranges = std::size_t{gridDim.x} * kWarpsPerBlock;
    const bool searches_last = !Policy::kSharedBounds || threadIdx.x / 32 + 1 == kWarpsPerBlock;
#pragma unroll
    for (unsigned q = 0; q < 2; ++q) {
      guessed.c[q] = q == 0 || searches_last ? guessed_probe(range + q, ranges, segments) : segments;
      guessed.e[q] = guessed.c[q] < segments ? static_cast<std::size_t>(offsets[guessed.c[q] + 1]) : 0;
    }
  }
  const std::size_t first = static_cast<std::size_t>(offsets[0]), last = static_cast<std::size_t>(offsets[segments]);
  if (first == last) {
    for (std::size_t s = std::size_t{blockIdx.x} * kBlock + threadIdx.x; s < segments; s += std::size_t{gridDim.x} * kBlock)
      store_result<Op>(out, s, Op::identity());
    return;
  }
  const std::size_t origin = first / kItems * kItems, cost = Policy::kSegmentCost;
  const std::size_t step = range_cost_step(first, last, segments, kItems, cost, std::size_t{gridDim.x} * kWarpsPerBlock);
  const std::size_t t[2] = {range * step, (range + 1) * step};
  CostBounds<2> bounds;
  if constexpr (Policy::kSharedBounds) {
    // A range ends where the next begins: each warp searches its first bound only (the block's
    // last warp both of its own), and the warps of a block pass theirs on through shared memory.
    __shared__ std::size_t block_j[kWarpsPerBlock + 1], block_end[kWarpsPerBlock + 1];
    const unsigned w = threadIdx.x / 32;
    if (w + 1 < kWarpsPerBlock) {
      const std::size_t t1[1] = {t[0]};
      const GuessedProbes<1> guessed1{{guessed.c[0]}, {guessed.e[0]}};
      const CostBounds<1> b = warp_cost_bounds<1, kGuess>(offsets, segments, last, origin, cost, t1, Policy::kEarlyProbe,
                                                          first_end, &guessed1);
      if (lane == 0) block_j[w] = b.j[0], block_end[w] = b.end[0];
    } else {
      const CostBounds<2> b = warp_cost_bounds<2, kGuess>(offsets, segments, last, origin, cost, t, Policy::kEarlyProbe,
                                                          first_end, &guessed);
      if (lane == 0) block_j[w] = b.j[0], block_end[w] = b.end[0], block_j[w + 1] = b.j[1], block_end[w + 1] = b.end[1];
    }
    __syncthreads();
    bounds = {{block_j[w], block_j[w + 1]}, {block_end[w], block_end[w + 1]}};
  } else {
    bounds = warp_cost_bounds<2, kGuess>(offsets, segments, last, origin, cost, t, Policy::kEarlyProbe, first_end,
                                         &guessed);
  }
  mark_time<Policy::kTimeline>(range, SegmentTimeline::bounds);
  // [excerpt: range-bounds]
  // The range's elements [lo, hi): the bounds rounded down to a whole window from the origin (so
  // that the ranges share no window, and every lane's loads are aligned), but for the last
  // element's end.
  const auto cut = [&](std::size_t t, std::size_t j, std::size_t end) {
    const std::size_t i = std::min(t - cost * j, end - origin);
    return origin + i == last ? last : origin + i / kWindow * kWindow;
  };
  const std::size_t lo = cut(range * step, bounds.j[0], bounds.end[0]);
  const std::size_t hi = cut((range + 1) * step, bounds.j[1], bounds.end[1]);
  if (lo >= hi) {
    if (lane == 0) records[range] = {kNoSegment, 0, Op::identity(), kNoSegment, Op::identity()};
    return;
  }
  // [end: range-bounds]
  // This lane's elements of the window at w0 (16-byte loads where they are all in the segments).
  const auto load = [&](std::size_t w0, T(&x)[kItems]) {
    const std::size_t g = w0 + std::size_t{lane} * kItems, w1 = std::min(hi, w0 + kWindow);
    if (kAligned && g >= first && g + kItems <= w1) {
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u) {
        const V v = load_vector<Policy::kStreamingLoads>(reinterpret_cast<const V*>(in + g) + u);
#pragma unroll
        for (unsigned j = 0; j < V::kCount; ++j) x[u * V::kCount + j] = v.e[j];
      }
    } else {
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j)
        if (g + j >= first && g + j < w1) x[j] = in[g + j];
    }
  };
  // Staged loads: a whole window inside the range's elements (every window but those holding the
  // first element and the last, where those are not on a window's bound) is copied into `staged`,
  // the others loaded as above when used.
  const auto staged_window = [&](std::size_t w0) { return w0 >= first && w0 + kWindow <= hi; };
  [[maybe_unused]] const std::uint64_t policy =
      kStaged && Policy::kStreamingLoads ? evict_first_policy() : 0;
  const auto stage = [&](std::size_t w0) {
    if constexpr (kStaged) {
      if (!staged_window(w0)) return;
      const uint4* from = reinterpret_cast<const uint4*>(in + w0);
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u)
        copy16_async<Policy::kStreamingLoads>(&staged.slot[Staged::of(u * 32 + lane)], from + u * 32 + lane, policy);
      copies_commit();
    }
  };
  // x := the window at w0, from `staged` once its copies have landed; every lane has read it
  // before the next window's copies are issued.
  const auto fetch = [&](std::size_t w0, T(&x)[kItems]) {
    if constexpr (kStaged) {
      if (!staged_window(w0)) {
        load(w0, x);
        return;
      }
      copies_wait_all();
      __syncwarp();
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u) {
        const uint4 w = staged.slot[Staged::of(lane * kVecs + u)];
        V v;
        memcpy(&v, &w, sizeof v);
#pragma unroll
        for (unsigned j = 0; j < V::kCount; ++j) x[u * V::kCount + j] = v.e[j];
      }
      __syncwarp();
    }
  };
  T xa[kItems] = {}, xb[Policy::kDoubleBuffer ? kItems : 1] = {};
  if constexpr (kStaged)
    stage(lo);  // in flight while the warp looks for its first segment
  else
    load(lo, xa);

  // The segments' ends, 32 at a time: lane i holds the end of segment base + i in the current
  // batch (a or b, b_current says which) and of base + 32 + i in the other (loaded a batch ahead
  // of its use), as loaded; past the last segment, a sentinel no window reaches. `cursor` is the
  // first segment whose end has not been marked yet.
  const auto load_end = [&](std::size_t s) {
    return s < segments ? static_cast<std::size_t>(offsets[s + 1]) : ~std::size_t{0};
  };
  // The cursor starts at the first segment whose end is past lo. The range that begins at the
  // first element also owns the ends there (empty segments at the very start), which no window's
  // (w0, w1] holds: from segment 0. Elsewhere it is j0, the bound's segment, or one of the segments
  // ending between lo and the bound (less than a window), just before j0: the two batches from
  // j0 - 32 on hold it, and their loads are the ones the windows need anyway. Where they do not
  // (more than 32 segments ending between lo and the bound, or more than 31 after j0 ending on lo:
  // runs of empty segments), a search finds it.
  const std::size_t j0 = bounds.j[0];
  std::size_t base = lo == first ? 0 : j0 >= 32 ? j0 - 32 : 0, cursor = 0;
  std::size_t end_a = load_end(base + lane), end_b = load_end(base + 32 + lane);
  bool b_current = false;  // whether batch b holds the segments from base on (then a holds base + 32 on)
  if (lo != first) {
    const unsigned past_a = __ballot_sync(kAll, end_a > lo), past_b = __ballot_sync(kAll, end_b > lo);
    if (((past_a & 1u) && base > 0) || (past_a | past_b) == 0) {
      cursor = warp_segment_after(offsets, segments, past_a ? 0 : base + 64, lo);
      base = cursor;
      end_a = load_end(base + lane);
      end_b = load_end(base + 32 + lane);
    } else {
      cursor = past_a ? base + __ffs(past_a) - 1 : base + 32 + __ffs(past_b) - 1;
      if (cursor - base >= 32) {  // batch a is used up: b is current, a loads the one after
        end_a = load_end(base + 64 + lane);
        base += 32;
        b_current = true;
      }
    }
  }
  if (lane * kItems % 32 == 0) marks.ends[lane * kItems / 32] = 0;
  [[maybe_unused]] const std::size_t first_cursor = cursor;
  mark_time<Policy::kTimeline>(range, SegmentTimeline::first_segment);

  Acc carry = Op::identity();  // the open segment's elements in the windows before, but for ...
  Acc own = Op::identity();    // ... this lane's elements in the windows since with no end
  bool own_open = false;       // whether there were such windows (else `own` is the identity)
  bool head_recorded = false;  // whether the range's first segment began in an earlier range

  // One window: x holds its elements; the next window's go into `next` (the same array when the
  // loads are single-buffered: then once the walk has used x).
  const auto window = [&](std::size_t w0, T(&x)[kItems], T(&next)[kItems]) {
    const std::size_t w1 = std::min(hi, w0 + kWindow);
    if (Policy::kDoubleBuffer && w1 < hi) load(w1, next);
    if constexpr (kStaged) {  // this window from shared memory; the next one's copies fly
      fetch(w0, x);
      if (w1 < hi) stage(w1);
    }
    // 1. Mark the ends the window owns: those at or before w1 not marked yet. The ends are sorted,
    // so the lanes whose ends are in form a run from the cursor on.
    const std::size_t closes_from = cursor;
    __syncwarp();  // the last window's marks have been read
    // Marks the ends of batch e in the window; whether the batch holds the first end past it.
    const auto mark_batch = [&](std::size_t e) {
      const bool in_window = e <= w1;
      if (in_window && lane >= cursor - base && e > w0) {  // an end at w0 closes an empty segment
        const unsigned p = static_cast<unsigned>(e - w0) - 1;
        atomicOr(&marks.ends[p / 32], 1u << (p % 32));
      }
      const unsigned in = static_cast<unsigned>(__popc(__ballot_sync(kAll, in_window)));
      cursor = base + in;
      return in < 32;
    };
    // The two batches take turns as the current one (b_current), so that the batch loaded ahead is
    // never copied: a copy would wait for its load at once.
    for (;;) {
      if (!b_current) {
        if (mark_batch(end_a)) break;
        end_a = load_end(base + 64 + lane);  // batch a used up: b is current, a loads the one after
        base += 32;
        b_current = true;
      }
      if (mark_batch(end_b)) break;
      end_b = load_end(base + 64 + lane);
      base += 32;
      b_current = false;
    }
    __syncwarp();
    const unsigned word = marks.ends[lane * kItems / 32];
    const unsigned bits = kItems == 32 ? word : (word >> (lane * kItems % 32)) & ((1u << (kItems % 32)) - 1);
    const std::size_t g = w0 + std::size_t{lane} * kItems;
    const bool full = g >= first && g + kItems <= w1;
    // The first and last lanes with elements of the segments take only those in [first, w1):
    // elements j_lo to j_hi - 1 (guarded); every other lane all of its elements, with no test.
    const auto each_element = [&](auto guarded, auto&& f) {
      unsigned j_lo = 0, j_hi = kItems;
      if constexpr (decltype(guarded)::value) {
        j_lo = first > g ? static_cast<unsigned>(std::min<std::size_t>(first - g, kItems)) : 0;
        j_hi = w1 > g ? static_cast<unsigned>(std::min<std::size_t>(w1 - g, kItems)) : 0;
      }
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j)
        if (!decltype(guarded)::value || (j >= j_lo && j < j_hi)) f(j);
    };
    // 2. Walk. With no end in the window, every lane adds its elements to its own partial.
    if (cursor == closes_from) {
      const auto add = [&](unsigned j) { own = Op::combine(own, Op::load(x[j], g + j)); };
      if (full)
        each_element(std::false_type{}, add);
      else
        each_element(std::true_type{}, add);
      if (!Policy::kDoubleBuffer && !kStaged && w1 < hi) load(w1, next);
      own_open = true;
      return;
    }
    if constexpr (kItems < 32) __syncwarp();  // the lanes sharing a word have read it
    if (lane * kItems % 32 == 0) marks.ends[lane * kItems / 32] = 0;  // for the next window
    // The lanes' own partials belong to the segment open before the window: into the carry.
    if (own_open) {  // the warp's windows since the last fold had no end
      carry = Op::combine(carry, group_reduce<Op, 32>(own));
      own = Op::identity();
      own_open = false;
    }
    // At every marked end, the partial so far is put aside and a new one begins; `acc` ends as
    // the partial of the segment still open.
    Acc acc = Op::identity();
    const auto add_and_close = [&](unsigned j) {
      acc = Op::combine(acc, Op::load(x[j], g + j));
      if (bits >> j & 1u) {
        marks.partials.put(j, lane, acc, g);
        acc = Op::identity();
      }
    };
    if (full)
      each_element(std::false_type{}, add_and_close);
    else
      each_element(std::true_type{}, add_and_close);
    if (!Policy::kDoubleBuffer && !kStaged && w1 < hi)
      load(w1, next);  // x is free: the loads fly during the rest
    // 3. A segmented scan over the lanes: a lane's open partial, combined with those of the lanes
    // before it back to the last lane that closed a segment. A lane's `before` is what the lanes
    // before it hold of the segment it closes first; before the window's first closing lane, the
    // carry too.
    const unsigned closing = __ballot_sync(kAll, bits != 0);
    const unsigned closed_upto = closing & (kAll >> (31 - lane));  // lanes 0..lane that closed
    const int seg_start = closed_upto ? 31 - __clz(closed_upto) : -1;
    Acc value = acc;
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
      const Acc other = shfl_up(value, d);
      if (static_cast<int>(lane) - static_cast<int>(d) >= seg_start && lane >= d) value = Op::combine(other, value);
    }
    const Acc value_before = shfl_up(value, 1);
    const bool closed_before = (closing & ((1u << lane) - 1)) != 0;
    marks.before[lane] = closed_before ? value_before : lane == 0 ? carry : Op::combine(carry, value_before);
    const Acc window_total = shfl_down(value, 31 - lane);  // lane 31's, in every lane
    carry = closing ? window_total : Op::combine(carry, window_total);  // the segment open at the window's end
    __syncwarp();
    // 4. A lane per segment closed in the window writes its result: the partial put aside at its
    // end, after the lanes' share if it began before the lane that closes it. The range's first
    // segment, if it began in an earlier range, is left in the record for the last kernel. The
    // ends come from the current batch where it holds them, by shuffles (the batch loaded ahead
    // is not touched); those before it (where the window used a batch up) are read again, from
    // L1 or L2.
    const auto write_closed = [&](std::size_t current) {
      for (std::size_t s0 = closes_from; s0 < cursor; s0 += 32) {  // trips of the whole warp
        const std::size_t s = s0 + lane;
        const std::size_t e_held = __shfl_sync(kAll, current, static_cast<unsigned>(s - base) % 32);
        const std::size_t b_held = __shfl_sync(kAll, current, static_cast<unsigned>(s - base - 1) % 32);
        if (s >= cursor) continue;
        const std::size_t e = s >= base ? e_held : static_cast<std::size_t>(offsets[s + 1]);
        const std::size_t b = s > base ? b_held : static_cast<std::size_t>(offsets[s]);
        if (b == e) {
          store_result<Op>(out, s, Op::identity());
          continue;
        }
        const unsigned p = static_cast<unsigned>(e - w0) - 1, l = p / kItems, j = p % kItems;
        const std::size_t gl = w0 + std::size_t{l} * kItems;
        Acc total = marks.partials.get(j, l, gl);
        if (b < gl) total = Op::combine(marks.before[l], total);
        if (b < lo) {
          records[range].head = s;
          records[range].head_begin = b;
          records[range].head_acc = total;
          head_recorded = true;
        } else {
          store_segment<Op>(out, s, b, total);
        }
      }
    };
    if (b_current)
      write_closed(end_b);
    else
      write_closed(end_a);
  };
  if constexpr (Policy::kDoubleBuffer) {
    for (std::size_t w0 = lo;;) {  // two windows a trip, so that the two arrays swap roles without copies
      window(w0, xa, xb);
      if (w0 == lo) mark_time<Policy::kTimeline>(range, SegmentTimeline::first_window);
      if ((w0 += kWindow) >= hi) break;
      window(w0, xb, xa);
      if ((w0 += kWindow) >= hi) break;
    }
  } else {
    for (std::size_t w0 = lo; w0 < hi; w0 += kWindow) {
      window(w0, xa, xa);
      if (w0 == lo) mark_time<Policy::kTimeline>(range, SegmentTimeline::first_window);
    }
  }
  mark_time<Policy::kTimeline>(range, SegmentTimeline::last_window);
  if constexpr (Policy::kTimeline) {
    if (lane == 0 && segment_timeline != nullptr) {
      asm volatile("mov.u32 %0, %%smid;" : "=r"(segment_timeline[range].sm));
      segment_timeline[range].windows = static_cast<unsigned>((hi - lo + kWindow - 1) / kWindow);
      segment_timeline[range].ends = cursor - first_cursor;
    }
  }
  // The record: whether there was a head (the lane that closed it knows), and the tail, the
  // segment open after the range's last element if some of its elements are in the range (the
  // carry and the lanes' own partials hold them). cursor is the first segment whose end is past
  // the range.
  const bool any_head = __any_sync(kAll, head_recorded);
  const Acc tail_acc = Op::combine(carry, group_reduce<Op, 32>(own));
  if (lane == 0) {
    if (!any_head) {  // the whole head written: the finishing kernel loads it before it looks
      records[range].head = kNoSegment;
      records[range].head_begin = 0;
      records[range].head_acc = Op::identity();
    }
    const bool tail = cursor < segments && static_cast<std::size_t>(offsets[cursor]) < hi;
    records[range].tail = tail ? cursor : kNoSegment;
    records[range].tail_acc = tail ? tail_acc : Op::identity();
  }
}

// The segments that began in an earlier warp's range: a warp per range that closed one (its head)
// combines the tails of the ranges from the one where the segment began, in order, then the head.
// `items`: a lane's elements in a window (the ranges' origin is offsets[0] rounded down to it).
template <class Op, bool kTimeline = false, bool kPreload = true>
__global__ void __launch_bounds__(kBlock)
    segments_balanced_finish(const std::int64_t* offsets, std::size_t segments, unsigned items, unsigned cost,
                             std::size_t ranges, const Pieces<typename Op::Acc>* records, void* out) {
  using Acc = typename Op::Acc;
  // What depends on the input only is read before the wait: it overlaps the first kernel's end.
  const std::size_t r = (std::size_t{blockIdx.x} * kBlock + threadIdx.x) / 32;
  const std::size_t first = static_cast<std::size_t>(offsets[0]), last = static_cast<std::size_t>(offsets[segments]);
  const std::size_t origin = first / items * items;
  const std::size_t step = range_cost_step(first, last, segments, items, cost, ranges);
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();  // launched early: the records are complete and visible
#endif
  if (r >= ranges || first == last) return;  // whole warps leave together
  mark_time<kTimeline>(r, SegmentTimeline::finish_visible);
  const std::size_t s = records[r].head, begin = records[r].head_begin;
  const Acc head_acc = records[r].head_acc;
  // The record of the range before, loaded with the range's own: the segment most often began
  // there, and then its tail needs no second trip to memory. (No warp leaves before all five
  // loads are issued: a warp with no head goes on and writes nothing.)
  const std::size_t tail_before = kPreload && r > 0 ? records[r - 1].tail : kNoSegment;
  const Acc acc_before = kPreload && r > 0 ? records[r - 1].tail_acc : Op::identity();
  const bool head = s != kNoSegment;
  if (!kPreload && !head) return;
  const unsigned lane = threadIdx.x % 32;
  // The range where s began, or one a little before it: the one whose costs hold its first
  // element's, begin - origin elements and s ends (warp_cost_bounds), before the rounding of the
  // bounds moved them down. The ranges between have other tails. A segment can span thousands of
  // ranges (the heavy tail's largest): the records are read 16 a lane at once, both fields
  // whatever the tail, rather than a tail and then its partial, one after the other.
  const std::size_t from = (begin - origin + std::size_t{cost} * s) / step;
  constexpr unsigned kBatch = 16;
  Acc acc = Op::identity();
  if (kPreload && (!head || from + 1 >= r)) {  // only the range before can hold a tail of s: as lane 0 below
    if (lane == 0 && head && from < r && tail_before == s) acc = Op::combine(acc, acc_before);
  } else {
    for (std::size_t k0 = from + lane; k0 < r; k0 += 32 * kBatch) {
      std::size_t tail[kBatch];
      Acc part[kBatch];
#pragma unroll
      for (unsigned u = 0; u < kBatch; ++u) {
        const std::size_t k = k0 + 32 * u;
        tail[u] = k < r ? records[k].tail : kNoSegment;
        part[u] = k < r ? records[k].tail_acc : Op::identity();
      }
#pragma unroll
      for (unsigned u = 0; u < kBatch; ++u)  // in the order of k, as the lane met them
        if (tail[u] == s) acc = Op::combine(acc, part[u]);
    }
  }
  acc = group_reduce<Op, 32>(acc);
  if (!head) return;
  if (lane == 0) store_segment<Op>(out, s, begin, Op::combine(acc, head_acc));
  mark_time<kTimeline>(r, SegmentTimeline::finish_done);
}

}  // namespace ch12
