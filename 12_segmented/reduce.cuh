// Chapter 12 - segments of any lengths: load balancing.
//
// Idea: map the work by cost, not by segment. The naive mapping gives each segment a group of
// lanes sized to the mean length, as chapter 11 gives a row; it is fast while the lengths are
// alike, and one segment holding half the elements leaves a single group reading them while the
// GPU waits. The balanced mapping cuts the elements and the segments' ends into ranges of equal
// cost, one per warp (an element costs 1, an end kEndCost), whatever the segments' lengths: the
// warp reduces the pieces of the segments in its range one after another, writes the segments
// that lie wholly inside it, and leaves the pieces cut by its bounds to a second kernel.
// Cost, counted: the input read once; the offsets twice (a segment's start and its end) and a few
// more for each warp's two searches; a result written per segment and a record of two partials
// per warp, read back by the second kernel; no barrier, no atomic; two launches. Divergence only
// where a piece is shorter than the warp's loads (its idle lanes) and in the finishing kernel's
// warps with no head (they leave at once). Deterministic: every partial is combined in an order
// fixed by the offsets. What it fixes against the naive mapping: no warp waits on a long segment.
// What it pays against the tuned kernel (variants.cuh): a warp tree and a trip to memory per
// segment, which many short segments feel.
#pragma once

#include <algorithm>
#include <cstdint>

#include "11_batched/ranges.cuh"  // chapter 11's loads, group reduce and result store
#include "11_batched/reduce.cuh"  // chapter 11's device queries (sm_count, blocks_per_sm, for_lanes)
#include "12_segmented/segmented.hpp"

namespace ch12 {

using ch11::group_reduce;
using ch11::kBlock;
using ch11::lane_accumulate;
using ch11::lane_accumulate_masked;
using ch11::store_result;
using ch11::Vec16;

// ---- the naive mapping ------------------------------------------------------------------------
//
// Segment s is elements [offsets[s], offsets[s + 1]) of the input; offsets are nondecreasing and
// within [0, n] (the program checks them on the host before a call).
//
// A group of G lanes per segment, G from the mean length, as chapter 11's rows_by_group. It is
// fast while every segment is about the mean; one segment with half the elements leaves a single
// group reading them while the rest of the GPU waits.
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

// ---- the balanced mapping: ranges of equal cost -----------------------------------------------
//
// Picture the elements from offsets[0] to offsets[segments] and the segments' ends merged into one
// list, each end right after its segment's last element: an element costs 1, an end kEndCost (a
// warp does more for a segment it closes than for an element it adds). Range w, a warp's, is the
// costs [w x step, (w + 1) x step) of that list. The segments whose ends fall in it are its own;
// the one still open at its end (its tail) and the first of its own, where that began in an
// earlier range (its head), are cut by its bounds, and the second kernel joins their pieces.
constexpr unsigned kWarpsPerBlock = kBlock / 32;
constexpr std::size_t kNoSegment = ~std::size_t{0};
constexpr unsigned kEndCost = 32;  // what a segment's end costs, in elements

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

// [excerpt: cost-step]
// The cost of a range: the elements from `origin` to `last`, plus `cost` for every segment's
// end, shared out among `ranges` warps.
__host__ __device__ inline std::size_t range_cost_step(std::size_t origin, std::size_t last, std::size_t segments,
                                                       std::size_t cost, std::size_t ranges) {
  const std::size_t total = last - origin + cost * segments;
  return (total + ranges - 1) / ranges;
}
// [end: cost-step]

// A bound of the merged list: the ends of segments 0 to `ends` - 1, and the elements before
// `element`, lie before it.
struct MergeBound {
  std::size_t ends;
  std::size_t element;
};

// [excerpt: cost-bound]
// The bound at cost t, found by a whole warp. Segment j's end lies past t when its cost, the
// elements up to it plus j + 1 ends, is more than t; `ends` is the first such j. Each step the 32
// lanes probe 32 segments evenly spread over what is left, and the first lane whose probe is past
// t narrows the search 31-fold (5 steps for 2^24 segments). The elements before t are then t less
// the ends' cost, but never past segment j's end (t falls on that end itself).
__device__ inline MergeBound warp_cost_bound(const std::int64_t* offsets, std::size_t segments, std::size_t origin,
                                             std::size_t last, std::size_t cost, std::size_t t) {
  const unsigned lane = threadIdx.x % 32;
  std::size_t lo = 0, hi = segments, end = last;  // the answer lies in [lo, hi]; `end` is hi's end
  while (lo < hi) {
    const std::size_t c = std::min(lo + lane * ((hi - lo + 30) / 31), hi);  // lane 31 probes hi
    const std::size_t e = c < segments ? static_cast<std::size_t>(offsets[c + 1]) : last;
    const bool past = c >= segments || e - origin + cost * (c + 1) > t;  // hi always is
    const unsigned k = __ffs(__ballot_sync(0xffffffffu, past)) - 1;
    const std::size_t before = __shfl_sync(0xffffffffu, c, k == 0 ? 0 : k - 1);
    hi = __shfl_sync(0xffffffffu, c, k);
    end = __shfl_sync(0xffffffffu, e, k);
    lo = k == 0 ? hi : before + 1;
  }
  return {hi, origin + std::min(t - cost * hi, end - origin)};
}
// [end: cost-bound]

// [excerpt: balanced]
// A warp per range: it finds its two bounds, then reduces the piece of each segment from its
// first bound's to its last's, one segment after another, with the whole warp (chapter 11's
// lane_accumulate and group_reduce). A segment wholly inside the range is written; the piece of
// one that began before it (the head) or goes on after it (the tail) goes into its record.
template <class Op, class T>
__global__ void __launch_bounds__(kBlock)
    segments_balanced(const T* in, const std::int64_t* offsets, std::size_t segments, void* out,
                      Pieces<typename Op::Acc>* records) {
  using Acc = typename Op::Acc;
  const unsigned lane = threadIdx.x % 32;
  const std::size_t range = (std::size_t{blockIdx.x} * kBlock + threadIdx.x) / 32;
  const std::size_t ranges = std::size_t{gridDim.x} * kWarpsPerBlock;
  const std::size_t first = static_cast<std::size_t>(offsets[0]), last = static_cast<std::size_t>(offsets[segments]);
  if (first == last) {  // no elements: every segment is empty
    for (std::size_t s = std::size_t{blockIdx.x} * kBlock + threadIdx.x; s < segments; s += ranges * 32)
      store_result<Op>(out, s, Op::identity());
    return;
  }
  const std::size_t step = range_cost_step(first, last, segments, kEndCost, ranges);
  const MergeBound lo = warp_cost_bound(offsets, segments, first, last, kEndCost, range * step);
  const MergeBound hi = warp_cost_bound(offsets, segments, first, last, kEndCost, (range + 1) * step);
  Pieces<Acc> record{kNoSegment, 0, Op::identity(), kNoSegment, Op::identity()};
  // Segments lo.ends to hi.ends - 1 end in the range; segment hi.ends is open at its end.
  for (std::size_t s = lo.ends; s <= hi.ends && s < segments; ++s) {
    const std::size_t begin = static_cast<std::size_t>(offsets[s]), end = static_cast<std::size_t>(offsets[s + 1]);
    const std::size_t from = std::max(begin, lo.element), to = std::min(end, hi.element);
    if (s == hi.ends && from >= to) break;  // the open segment has no element here
    const Acc piece = group_reduce<Op, 32>(lane_accumulate<Op>(in + from, to - from, from, lane, 32));
    if (s == hi.ends)
      record.tail = s, record.tail_acc = piece;
    else if (begin < lo.element)
      record.head = s, record.head_begin = begin, record.head_acc = piece;
    else if (lane == 0)
      store_segment<Op>(out, s, begin, piece);
  }
  if (lane == 0) records[range] = record;
}
// [end: balanced]

// [excerpt: finish]
// A warp per range that has a head: the head's segment s began in range `from`, the range whose
// costs hold its first element's (begin - origin elements and s ends come before it). Every range
// from there to this one holds a piece of s as its tail; the lanes combine them, then the head.
template <class Op>
__global__ void __launch_bounds__(kBlock)
    segments_finish(const std::int64_t* offsets, std::size_t segments, const Pieces<typename Op::Acc>* records,
                    void* out) {
  using Acc = typename Op::Acc;
  const unsigned lane = threadIdx.x % 32;
  const std::size_t r = (std::size_t{blockIdx.x} * kBlock + threadIdx.x) / 32;
  const std::size_t ranges = std::size_t{gridDim.x} * kWarpsPerBlock;
  const std::size_t first = static_cast<std::size_t>(offsets[0]), last = static_cast<std::size_t>(offsets[segments]);
  if (first == last || records[r].head == kNoSegment) return;  // whole warps leave together
  const std::size_t s = records[r].head, begin = records[r].head_begin;
  const std::size_t from =
      (begin - first + std::size_t{kEndCost} * s) / range_cost_step(first, last, segments, kEndCost, ranges);
  Acc acc = Op::identity();
  for (std::size_t k = from + lane; k < r; k += 32)
    if (records[k].tail == s) acc = Op::combine(acc, records[k].tail_acc);
  acc = group_reduce<Op, 32>(acc);
  if (lane == 0) store_segment<Op>(out, s, begin, Op::combine(acc, records[r].head_acc));
}
// [end: finish]

// ---- the launcher -----------------------------------------------------------------------------

// What one call launches: the mapping and its sizes, and the scratch it needs (the balanced
// mapping's records; nothing needs to be zero before a call).
struct Plan {
  Strategy strategy = Strategy::automatic;
  Kernels kernels = Kernels::tuned;
  unsigned lanes = 1;        // naive: lanes per segment
  unsigned blocks = 1;       // balanced: blocks of kWarpsPerBlock ranges
  std::size_t per_warp = 0;  // balanced, tuned: the most elements a range can hold
  bool vector = false;       // 16-byte loads (the input on a 16-byte boundary)
  std::size_t scratch_bytes = 0;
};

// The naive mapping's plan, or the mapping the call asks for with its sizes left to the caller.
inline Plan plan_mapping(const SegmentedCall& c, std::size_t element_bytes) {
  Plan p;
  p.strategy = c.strategy == Strategy::automatic ? Strategy::balanced : c.strategy;
  p.kernels = c.kernels;
  p.vector = reinterpret_cast<std::uintptr_t>(c.input) % 16 == 0;
  if (p.strategy == Strategy::naive) {
    // A group sized to the mean length, about 8 masked vectors a lane (2 without 16-byte loads).
    const std::size_t mean = c.segments ? c.n / c.segments : 0;
    p.lanes = ch11::pow2_at_least(red::ceil_div(mean, (p.vector ? 8 : 2) * (16 / element_bytes)));
  }
  return p;
}

// The lesson's plan: one wave of blocks, ranges of at least kMinRangeCost (a shorter range spends
// more on its two searches than on its elements).
template <class Op, class T>
Plan plan(const SegmentedCall& c) {
  constexpr std::size_t kMinRangeCost = 1024;
  Plan p = plan_mapping(c, sizeof(T));
  if (p.strategy == Strategy::naive || c.segments == 0) return p;
  const unsigned occupancy =
      red::per_device<unsigned>([](int) { return ch11::blocks_per_sm<kBlock>(segments_balanced<Op, T>); });
  const std::size_t wave = std::size_t{ch11::sm_count()} * occupancy * kWarpsPerBlock;
  const std::size_t ranges = std::min(wave, red::ceil_div(c.n + std::size_t{kEndCost} * c.segments, kMinRangeCost));
  p.blocks = static_cast<unsigned>(red::ceil_div(ranges, kWarpsPerBlock));
  if (c.n == 0) p.blocks = static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(c.segments, kBlock), 1024));
  p.scratch_bytes = std::size_t{p.blocks} * kWarpsPerBlock * sizeof(Pieces<typename Op::Acc>);
  return p;
}

template <class Op, class T>
std::size_t scratch_bytes(const SegmentedCall& c) {
  return plan<Op, T>(c).scratch_bytes;
}

// The longest chain of roundings one result of `length` elements goes through (sums; the tests'
// and the program's error bound), for the naive mapping and the lesson's balanced one.
inline std::size_t sum_depth(const Plan& p, std::size_t length, std::size_t per_vector) {
  const std::size_t warp_tree = 5;
  if (p.strategy == Strategy::naive) return red::ceil_div(length, p.lanes) + per_vector + warp_tree;
  // A piece: a lane's elements (a 32nd of it, a vector's rounding up, one element at either end)
  // and the warp's tree; then the finishing warp's: a lane's tails, its tree and the head.
  const std::size_t ranges = std::size_t{p.blocks} * kWarpsPerBlock;
  return std::min(length,
                  red::ceil_div(length, 32) + per_vector + 2 + warp_tree + red::ceil_div(ranges, 32) + warp_tree + 1);
}

// The naive mapping's launch with groups of G lanes, which the tuned launcher (variants.cuh) shares.
// A launcher picks G with ch11::for_lanes and calls the instantiation itself.
template <class Op, class T, unsigned G>
void launch_naive(const SegmentedCall& c, const Plan& p) {
  const T* in = static_cast<const T*>(c.input);
  const unsigned blocks = static_cast<unsigned>(
      std::min<std::size_t>(red::ceil_div(c.segments, kBlock / G), std::size_t{ch11::sm_count()} * 8));
  if (p.vector)
    segments_by_group<Op, T, G, true><<<blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.n, c.output);
  else
    segments_by_group<Op, T, G, false><<<blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.n, c.output);
}

// The balanced mapping's two kernels, p.blocks x kWarpsPerBlock ranges (a record each in c.scratch).
template <class Op, class T>
void launch_balanced(const SegmentedCall& c, const Plan& p) {
  auto* records = static_cast<Pieces<typename Op::Acc>*>(c.scratch);
  segments_balanced<Op, T>
      <<<p.blocks, kBlock, 0, c.stream>>>(static_cast<const T*>(c.input), c.offsets, c.segments, c.output, records);
  segments_finish<Op><<<p.blocks, kBlock, 0, c.stream>>>(c.offsets, c.segments, records, c.output);
}

// One call of the lesson's kernels on c.stream. The sizes and offsets must be valid (why_invalid,
// check_offsets); the scratch at least scratch_bytes.
template <class Op, class T>
void launch(const SegmentedCall& c) {
  if (c.segments == 0) return;
  const Plan p = plan<Op, T>(c);
  if (p.strategy == Strategy::naive)
    ch11::for_lanes(p.lanes, [](auto g) { return &launch_naive<Op, T, decltype(g)::value>; })(c, p);
  else
    launch_balanced<Op, T>(c, p);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch12
