// Chapter 12 - segments of any lengths: load balancing.
//
// Idea: map the work by cost, not by segment. The naive mapping gives each segment a group of
// lanes sized to the mean length, as chapter 11 gives a row; it is fast while the lengths are
// alike, and one segment holding half the elements leaves a single group reading them while the
// GPU waits. The balanced mapping splits the elements among warps in ranges of equal cost (an
// element costs 1, a segment's end a fixed number) whatever the segments' lengths: each warp
// marks where its window's segments end, its lanes close the segments at the marks they meet and
// hand on the partials of those that cross a lane, a window or a warp (segments.cuh).
// Cost: the input read once, the offsets about twice more (marking, then writing); a kernel over
// the elements and one over the warps' partials. Deterministic: every partial is combined in an
// order fixed by the offsets.
#pragma once

#include <algorithm>
#include <stdexcept>

#include "11_batched/reduce.cuh"  // chapter 11's device queries (sm_count, blocks_per_sm, with_lanes)
#include "12_segmented/segmented.hpp"
#include "12_segmented/segments.cuh"

namespace ch12 {

// What one call launches: the mapping and its sizes, and the scratch it needs (the balanced
// mapping's records of the warps' partials; nothing needs to be zero before a call).
struct Plan {
  Strategy strategy = Strategy::automatic;
  unsigned lanes = 1;            // naive: lanes per segment
  unsigned blocks = 1;           // balanced: blocks of kWarpsPerBlock ranges
  std::size_t per_warp = 0;      // balanced: the most elements a range can hold
  bool vector = false;           // 16-byte loads (the input on a 16-byte boundary)
  std::size_t scratch_bytes = 0;
};

// The balanced mapping's sizes for n elements in `segments` segments (Policy: the kernel's
// choices): one wave of blocks, since every warp has the same work, and ranges of at least a
// window's cost.
template <class Op, class T, class Policy = SegmentPolicy<T>>
void plan_balanced(Plan& p, std::size_t n, std::size_t segments) {
  p.lanes = 32;
  const unsigned occupancy = red::per_device<unsigned>([](int) {
    return ch11::blocks_per_sm<kBlock>(segments_balanced<Op, T, true, Policy>);
  });
  const std::size_t warps = std::size_t{ch11::sm_count()} * occupancy * kWarpsPerBlock * Policy::kWaves;
  // The elements that belong to segments are known on the device only (the kernels share out
  // their cost exactly, range_cost_step): size the grid for all n, plus the rounding of the
  // ranges' origin.
  constexpr std::size_t kWindow = 32 * Policy::kItems;
  const std::size_t total = n + Policy::kItems + std::size_t{Policy::kSegmentCost} * segments;
  const std::size_t per_warp = red::ceil_div(red::ceil_div(total, warps), kWindow) * kWindow;
  p.blocks = static_cast<unsigned>(red::ceil_div(red::ceil_div(total, per_warp), kWarpsPerBlock));
  if (n == 0) p.blocks = static_cast<unsigned>(std::min<std::size_t>(red::ceil_div(segments, kBlock), 1024));
  // A range's cost is at most the step; its elements at most that plus one end's cost (where it
  // begins on a segment's end) plus the rounding of its first bound (less than a window).
  p.per_warp = red::ceil_div(total, std::size_t{p.blocks} * kWarpsPerBlock) + Policy::kSegmentCost + kWindow;
  p.scratch_bytes = std::size_t{p.blocks} * kWarpsPerBlock * sizeof(Pieces<typename Op::Acc>);
}

// The launcher's choice: the balanced mapping, unless the call asks for the naive one.
template <class Op, class T>
Plan plan(const SegmentedCall& c) {
  Plan p;
  p.strategy = c.strategy == Strategy::automatic ? Strategy::balanced : c.strategy;
  p.vector = reinterpret_cast<std::uintptr_t>(c.input) % 16 == 0;
  if (p.strategy == Strategy::naive) {
    // A group sized to the mean length, about 8 masked vectors a lane (2 without 16-byte loads).
    const std::size_t mean = c.segments ? c.n / c.segments : 0;
    p.lanes = ch11::pow2_at_least(red::ceil_div(mean, (p.vector ? 8 : 2) * Vec16<T>::kCount));
  } else if (c.segments > 0) {
    plan_balanced<Op, T>(p, c.n, c.segments);
  }
  return p;
}

// The balanced mapping's two kernels, as plan_balanced<Op, T, Policy> sized them.
template <class Op, class T, class Policy = SegmentPolicy<T>>
void launch_balanced(const SegmentedCall& c, const Plan& p) {
  const T* in = static_cast<const T*>(c.input);
  auto* records = static_cast<Pieces<typename Op::Acc>*>(c.scratch);
  if (p.vector)
    segments_balanced<Op, T, true, Policy><<<p.blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.output, records);
  else
    segments_balanced<Op, T, false, Policy><<<p.blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.output, records);
  const bool early = Policy::kEarlyFinish && ch07::device_limits<segments_balanced<Op, T, true, Policy>>().programmatic;
  CUDA_CHECK(ch07::launch_early(segments_balanced_finish<Op, Policy::kTimeline, Policy::kPreloadBefore>, dim3(p.blocks),
                                dim3(kBlock), 0, c.stream, early, c.offsets, c.segments, Policy::kItems,
                                Policy::kSegmentCost, std::size_t{p.blocks} * kWarpsPerBlock,
                                static_cast<const Pieces<typename Op::Acc>*>(records), c.output));
}

// The longest chain of roundings one result of `length` elements goes through (sums; the tests'
// and the program's error bound).
inline std::size_t sum_depth(const Plan& p, const SegmentedCall& c, std::size_t length, std::size_t per_vector) {
  const std::size_t warp_tree = 5;
  if (p.strategy == Strategy::naive) return red::ceil_div(length, p.lanes) + per_vector + warp_tree;
  // Balanced: a lane's own partial over the windows of its range (at most all of them), its walk of
  // the closing window, the warp's fold of the lanes' partials, the lanes' scan, the carry, and
  // the ranges a long segment spans (the finishing warp's tree). A range inside a segment holds a
  // step of elements, less a window at most, and the step is at least the segment's cost shared
  // out. The deeper of the two policies' chains: SegmentPolicy picks one by the element's size.
  const auto depth = [&](std::size_t items, std::size_t cost) {
    const std::size_t windows = red::ceil_div(p.per_warp, 32 * items);
    const std::size_t warps = std::size_t{p.blocks} * kWarpsPerBlock;
    const std::size_t share = (length + cost * c.segments) / warps;
    const std::size_t window = 32 * items;
    const std::size_t step = std::max<std::size_t>(window + 1, share) - window;
    const std::size_t ranges = red::ceil_div(length, step) + 1;
    return std::min(length, (windows + 1) * items + 4 * warp_tree + 8 + red::ceil_div(ranges, 32));
  };
  return std::max(depth(SegmentTuning::kItems, SegmentTuning::kSegmentCost),
                  depth(SegmentTuning16::kItems, SegmentTuning16::kSegmentCost));
}

template <class Op, class T>
std::size_t scratch_bytes(const SegmentedCall& c) {
  return plan<Op, T>(c).scratch_bytes;
}

// One call on c.stream. The sizes and offsets must be valid (why_invalid, check_offsets); the
// scratch at least scratch_bytes.
template <class Op, class T>
void launch(const SegmentedCall& c) {
  if (c.segments == 0) return;
  const Plan p = plan<Op, T>(c);
  const T* in = static_cast<const T*>(c.input);
  if (p.strategy == Strategy::naive) {
    ch11::with_lanes(p.lanes, [&](auto g) {
      constexpr unsigned G = decltype(g)::value;
      const unsigned blocks = static_cast<unsigned>(
          std::min<std::size_t>(red::ceil_div(c.segments, kBlock / G), std::size_t{ch11::sm_count()} * 8));
      if (p.vector)
        segments_by_group<Op, T, G, true><<<blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.n, c.output);
      else
        segments_by_group<Op, T, G, false><<<blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.n, c.output);
    });
  } else {
    launch_balanced<Op, T>(c, p);
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch12
