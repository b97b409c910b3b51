// 12_segmented_segment_timeline: where the tuned balanced segments kernel's time goes. A copy of
// the tuned kernels (12_segmented/variants.cuh) with timer stamps: lane 0 of every warp reads the
// GPU's global timer when it begins, when the cost search has found its range, when its first
// segment is found, after its first and its last window, and the finishing warp of each range
// when it sees the records and when it has written its segment.
//
// The shapes are the benchmark's (f32 sum, 2^26 / mean segments of mean length 32 and 1024,
// lengths uniform or heavy-tailed). Each shape is called cold (the L2 scrubbed first, as
// common/timing.hpp times a call), 3 times with the tuned kernels themselves, then kCalls times
// with the stamped copy; every figure is the median over the stamped calls of that call's figure,
// in microseconds from the first warp's start. The stamped calls' results must equal the tuned
// kernels' bit for bit (the copy computes what they compute, and the stamps change nothing). It
// prints one Markdown table, a column a shape; results/h200/experiments/segment_timeline.md holds
// the H200's output.
//
//   12_segmented_segment_timeline
//
// Exit codes: 0 done, 1 a stamped call's results differ from the tuned kernels', 2 bad arguments,
// 3 no GPU, 4 a CUDA error.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/12_segmented/segment_experiment.hpp"
#include "experiments/11_batched/timeline_experiment.hpp"
#include "command_line.hpp"
#include "device_info.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace ch12::timeline {

using ch11::global_timer;

// What lane 0 of each warp writes into timeline[range]: the GPU's global timer (ns) at five points
// of the range, and the finishing warp of range r two more.
struct SegmentTimeline {
  enum Point : unsigned {
    entry,           // the warp has begun
    bounds,          // the cost search has found the range's bounds
    first_segment,   // the first segment's end is among the batches: the walk can begin
    first_window,    // the range's first window is done
    last_window,     // all of its windows are done
    finish_visible,  // the finishing warp of this range sees every range's record
    finish_done,     // ... and has written its segment (when the range had a head)
  };
  unsigned long long at[7];
  unsigned sm;              // the SM the warp ran on
  unsigned windows;         // the range's windows
  unsigned long long ends;  // the segment ends it marked
};
__device__ __forceinline__ void mark_time(SegmentTimeline* timeline, std::size_t range, SegmentTimeline::Point point) {
  if (threadIdx.x % 32 == 0) timeline[range].at[point] = global_timer();
}

// The tuned kernels, stamped: segments_balanced_tuned and segments_finish_tuned line for line, with
// mark_time at the points above.
template <class Op, class T, bool kAligned, class Policy = SegmentPolicy<T>>
__global__ void __launch_bounds__(kBlock, Policy::kMinBlocks)
    stamped_balanced(const T* in, const std::int64_t* offsets, std::size_t segments, void* out,
                     Pieces<typename Op::Acc>* records, SegmentTimeline* timeline) {
  using Acc = typename Op::Acc;
  constexpr unsigned kItems = Policy::kItems, kWindow = 32 * kItems, kVecs = kItems * sizeof(T) / 16;
  using Elements = LaneElements<T, kItems, kAligned>;
  constexpr unsigned kAll = 0xffffffffu;
  static_assert(32 % kItems == 0 || kItems == 32, "a lane's marks lie in one 32-bit word");
#if __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();  // the finishing kernel may launch now, and waits
#endif
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
  mark_time(timeline, range, SegmentTimeline::entry);
  // The cost search's first probes, loaded at once with offsets[0] and offsets[segments]: those of
  // its usual first step, and those around a guess of this warp's first bound (and of its last,
  // in the block's last warp, which searches that too).
  const std::size_t probe = first_probe(segments);
  const std::size_t first_end = probe < segments ? static_cast<std::size_t>(offsets[probe + 1]) : 0;
  GuessedProbes<2> guessed{};
  {
    const std::size_t ranges = std::size_t{gridDim.x} * kWarpsPerBlock;
    const bool searches_last = threadIdx.x / 32 + 1 == kWarpsPerBlock;
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
  const std::size_t step = window_cost_step(first, last, segments, kItems, cost, std::size_t{gridDim.x} * kWarpsPerBlock);
  const std::size_t t[2] = {range * step, (range + 1) * step};
  CostBounds<2> bounds;
  {
    // A range ends where the next begins: each warp searches its first bound only (the block's
    // last warp both of its own), and the warps of a block pass theirs on through shared memory.
    __shared__ std::size_t block_j[kWarpsPerBlock + 1], block_end[kWarpsPerBlock + 1];
    const unsigned w = threadIdx.x / 32;
    if (w + 1 < kWarpsPerBlock) {
      const std::size_t t1[1] = {t[0]};
      const GuessedProbes<1> guessed1{{guessed.c[0]}, {guessed.e[0]}};
      const CostBounds<1> b = warp_cost_bounds<1>(offsets, segments, last, origin, cost, t1, first_end, guessed1);
      if (lane == 0) block_j[w] = b.j[0], block_end[w] = b.end[0];
    } else {
      const CostBounds<2> b = warp_cost_bounds<2>(offsets, segments, last, origin, cost, t, first_end, guessed);
      if (lane == 0) block_j[w] = b.j[0], block_end[w] = b.end[0], block_j[w + 1] = b.j[1], block_end[w + 1] = b.end[1];
    }
    __syncthreads();
    bounds = {{block_j[w], block_j[w + 1]}, {block_end[w], block_end[w + 1]}};
  }
  mark_time(timeline, range, SegmentTimeline::bounds);
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
  const auto load = [&](std::size_t w0, Elements& x) {
    const std::size_t g = w0 + std::size_t{lane} * kItems, w1 = std::min(hi, w0 + kWindow);
    if (kAligned && g >= first && g + kItems <= w1) {
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u)  // evict-first (__ldcs): read once
        x.set_vector(u, __ldcs(reinterpret_cast<const uint4*>(in + g) + u));
    } else {
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j)
        if (g + j >= first && g + j < w1) x.set(j, in[g + j]);
    }
  };
  // Staged loads: a whole window inside the range's elements (every window but those holding the
  // first element and the last, where those are not on a window's bound) is copied into `staged`,
  // the others loaded as above when used.
  const auto staged_window = [&](std::size_t w0) { return w0 >= first && w0 + kWindow <= hi; };
  [[maybe_unused]] const std::uint64_t policy = kStaged ? evict_first_policy() : 0;
  const auto stage = [&](std::size_t w0) {
    if constexpr (kStaged) {
      if (!staged_window(w0)) return;
      const uint4* from = reinterpret_cast<const uint4*>(in + w0);
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u)
        copy16_async(&staged.slot[Staged::of(u * 32 + lane)], from + u * 32 + lane, policy);
      copies_commit();
    }
  };
  // x := the window at w0, from `staged` once its copies have landed; every lane has read it
  // before the next window's copies are issued.
  const auto fetch = [&](std::size_t w0, Elements& x) {
    if constexpr (kStaged) {
      if (!staged_window(w0)) {
        load(w0, x);
        return;
      }
      copies_wait_all();
      __syncwarp();
#pragma unroll
      for (unsigned u = 0; u < kVecs; ++u) x.set_vector(u, staged.slot[Staged::of(lane * kVecs + u)]);
      __syncwarp();
    }
  };
  Elements x{};
  if constexpr (kStaged)
    stage(lo);  // in flight while the warp looks for its first segment
  else
    load(lo, x);

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
  const std::size_t first_cursor = cursor;
  mark_time(timeline, range, SegmentTimeline::first_segment);

  Acc carry = Op::identity();  // the open segment's elements in the windows before, but for ...
  Acc own = Op::identity();    // ... this lane's elements in the windows since with no end
  bool own_open = false;       // whether there were such windows (else `own` is the identity)
  bool head_recorded = false;  // whether the range's first segment began in an earlier range

  // One window: x holds its elements; the next window's go into x too, once the walk has used it
  // (or into shared memory, staged).
  const auto window = [&](std::size_t w0) {
    const std::size_t w1 = std::min(hi, w0 + kWindow);
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
      const auto add = [&](unsigned j) { own = Op::combine(own, Op::load(x.get(j), g + j)); };
      if (full)
        each_element(std::false_type{}, add);
      else
        each_element(std::true_type{}, add);
      if (!kStaged && w1 < hi) load(w1, x);
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
      acc = Op::combine(acc, Op::load(x.get(j), g + j));
      if (bits >> j & 1u) {
        marks.partials.put(j, lane, acc, g);
        acc = Op::identity();
      }
    };
    if (full)
      each_element(std::false_type{}, add_and_close);
    else
      each_element(std::true_type{}, add_and_close);
    if (!kStaged && w1 < hi) load(w1, x);  // x is free: the loads fly during the rest
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
  for (std::size_t w0 = lo; w0 < hi; w0 += kWindow) {
    window(w0);
    if (w0 == lo) mark_time(timeline, range, SegmentTimeline::first_window);
  }
  mark_time(timeline, range, SegmentTimeline::last_window);
  if (lane == 0) {
    asm volatile("mov.u32 %0, %%smid;" : "=r"(timeline[range].sm));
    timeline[range].windows = static_cast<unsigned>((hi - lo + kWindow - 1) / kWindow);
    timeline[range].ends = cursor - first_cursor;
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

template <class Op>
__global__ void __launch_bounds__(kBlock)
    stamped_finish(const std::int64_t* offsets, std::size_t segments, unsigned items, unsigned cost, std::size_t ranges,
                   const Pieces<typename Op::Acc>* records, void* out, SegmentTimeline* timeline) {
  using Acc = typename Op::Acc;
  // What depends on the input only is read before the wait: it overlaps the first kernel's end.
  const std::size_t r = (std::size_t{blockIdx.x} * kBlock + threadIdx.x) / 32;
  const std::size_t first = static_cast<std::size_t>(offsets[0]), last = static_cast<std::size_t>(offsets[segments]);
  const std::size_t origin = first / items * items;
  const std::size_t step = window_cost_step(first, last, segments, items, cost, ranges);
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();  // launched early: the records are complete and visible
#endif
  if (r >= ranges || first == last) return;  // whole warps leave together
  mark_time(timeline, r, SegmentTimeline::finish_visible);
  const std::size_t s = records[r].head, begin = records[r].head_begin;
  const Acc head_acc = records[r].head_acc;
  // The record of the range before, loaded with the range's own: the segment most often began
  // there, and then its tail needs no second trip to memory. (No warp leaves before all five
  // loads are issued: a warp with no head goes on and writes nothing.)
  const std::size_t tail_before = r > 0 ? records[r - 1].tail : kNoSegment;
  const Acc acc_before = r > 0 ? records[r - 1].tail_acc : Op::identity();
  const bool head = s != kNoSegment;
  const unsigned lane = threadIdx.x % 32;
  // The range where s began, or one a little before it: the one whose costs hold its first
  // element's, begin - origin elements and s ends (warp_cost_bounds), before the rounding of the
  // bounds moved them down. The ranges between have other tails. A segment can span thousands of
  // ranges (the heavy tail's largest): the records are read 16 a lane at once, both fields
  // whatever the tail, rather than a tail and then its partial, one after the other.
  const std::size_t from = (begin - origin + std::size_t{cost} * s) / step;
  constexpr unsigned kBatch = 16;
  Acc acc = Op::identity();
  if (!head || from + 1 >= r) {  // only the range before can hold a tail of s: as lane 0 below
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
  mark_time(timeline, r, SegmentTimeline::finish_done);
}


// The stamped kernels, launched as launch_balanced_tuned launches the tuned ones.
template <class Op, class T, class Policy = SegmentPolicy<T>>
void launch_stamped(const SegmentedCall& c, const Plan& p, SegmentTimeline* timeline) {
  const T* in = static_cast<const T*>(c.input);
  auto* records = static_cast<Pieces<typename Op::Acc>*>(c.scratch);
  stamped_balanced<Op, T, true, Policy>
      <<<p.blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.output, records, timeline);
  const bool early = ch07::device_limits<stamped_balanced<Op, T, true, Policy>>().programmatic;
  CUDA_CHECK(ch07::launch_early(stamped_finish<Op>, dim3(p.blocks), dim3(kBlock), 0, c.stream, early, c.offsets,
                                c.segments, Policy::kItems, Policy::kSegmentCost, std::size_t{p.blocks} * kWarpsPerBlock,
                                static_cast<const Pieces<typename Op::Acc>*>(records), c.output, timeline));
}

}  // namespace ch12::timeline

namespace {

using Op = red::Sum<float>;
using ch12::timeline::SegmentTimeline;
using Point = SegmentTimeline::Point;
constexpr int kCalls = 5;

using ch11::quantile;

// One stamped call's figures, in the order of kRows.
std::vector<double> figures(const std::vector<SegmentTimeline>& t, double call_us, double gbps) {
  unsigned long long start = ~0ull;
  for (const auto& r : t)
    if (r.at[Point::entry]) start = std::min(start, r.at[Point::entry]);
  const auto us = [&](unsigned long long ns) { return static_cast<double>(ns - start) / 1e3; };
  std::vector<double> bounds, first_segment, first_window, last_window, per_window, visible, done;
  struct Sm {
    std::vector<std::size_t> blocks;  // the blocks that ran on it, lowest-numbered first
  };
  std::vector<Sm> sms(1024);
  for (std::size_t r = 0; r < t.size(); ++r) {
    const auto& x = t[r];
    if (x.at[Point::finish_visible]) visible.push_back(us(x.at[Point::finish_visible]));
    if (x.at[Point::finish_done]) done.push_back(us(x.at[Point::finish_done]));
    if (!x.at[Point::last_window]) continue;  // an empty range
    bounds.push_back(us(x.at[Point::bounds]));
    first_segment.push_back(us(x.at[Point::first_segment]));
    first_window.push_back(us(x.at[Point::first_window]));
    last_window.push_back(us(x.at[Point::last_window]));
    if (x.windows > 1) {
      const double loop_ns = static_cast<double>(x.at[Point::last_window] - x.at[Point::first_window]);
      per_window.push_back(loop_ns / 1e3 / (x.windows - 1));
    }
    const std::size_t block = r / ch12::kWarpsPerBlock;
    auto& blocks = sms[x.sm % sms.size()].blocks;
    if (blocks.empty() || blocks.back() != block) blocks.push_back(block);
  }
  // A block's warps' mean end; an SM's mean over its warps; blocks by their rank on their SM.
  std::vector<double> block_mean(t.size() / ch12::kWarpsPerBlock + 1, 0.0), block_warps(block_mean.size(), 0.0);
  for (std::size_t r = 0; r < t.size(); ++r)
    if (t[r].at[Point::last_window]) {
      block_mean[r / ch12::kWarpsPerBlock] += us(t[r].at[Point::last_window]);
      block_warps[r / ch12::kWarpsPerBlock] += 1;
    }
  std::vector<double> sm_mean, rank_sum(4, 0.0), rank_count(4, 0.0);
  for (const Sm& sm : sms) {
    if (sm.blocks.empty()) continue;
    double sum = 0, warps = 0;
    for (std::size_t i = 0; i < sm.blocks.size(); ++i) {
      const std::size_t b = sm.blocks[i];
      sum += block_mean[b];
      warps += block_warps[b];
      if (i < 4 && block_warps[b] > 0) {
        rank_sum[i] += block_mean[b] / block_warps[b];
        rank_count[i] += 1;
      }
    }
    sm_mean.push_back(sum / warps);
  }
  std::vector<double> f = {call_us, gbps, quantile(bounds, 0.5), quantile(bounds, 1.0), quantile(first_segment, 0.5),
                           quantile(first_window, 0.5), quantile(first_window, 1.0), quantile(per_window, 0.5),
                           quantile(last_window, 0.0), quantile(last_window, 0.5), quantile(last_window, 1.0),
                           quantile(sm_mean, 1.0)};
  for (int i = 0; i < 4; ++i) f.push_back(rank_count[i] > 0 ? rank_sum[i] / rank_count[i] : 0);
  f.push_back(quantile(visible, 0.5));
  f.push_back(quantile(done, 1.0));
  return f;
}

// The per-window row is printed to the nanosecond, the others to a tenth.
constexpr std::size_t kPerWindowRow = 7;
const char* const kRows[] = {
    "the call, between events around it (us)",
    "GB/s (the elements and the offsets read once plus the results written)",
    "cost search done: median warp",
    "cost search done: last warp",
    "first segment found: median warp",
    "first window done: median warp",
    "first window done: last warp",
    "a window (from the first's end to the last's, per window): median warp",
    "last window done: first warp",
    "last window done: median warp",
    "last window done: last warp",
    "last window done: the SM whose warps' mean is latest (the end if each SM shared out its work evenly)",
    "last window done: mean of each SM's lowest-numbered block",
    "last window done: mean of each SM's second block",
    "last window done: mean of each SM's third block",
    "last window done: mean of each SM's fourth block",
    "finishing kernel: the records visible (median warp)",
    "finishing kernel: the last segment written",
};

int run() {
  const red::DeviceInfo dev = red::query_device();
  const red::L2Scrubber scrubber(dev);
  red::Stream stream;
  std::vector<std::vector<double>> columns;
  bool same = true;
  for (const ch12::ExperimentShape& shape : ch12::kExperimentShapes) {
    const ch12::SegmentInput input(shape);
    ch12::Plan p;
    p.vector = true;
    ch12::plan_balanced_tuned<Op, float>(p, input.n, input.segments);
    const red::DeviceBuffer scratch(p.scratch_bytes);
    const ch12::SegmentedCall c = input.call(scratch, stream.get());
    const std::size_t ranges = std::size_t{p.blocks} * ch12::kWarpsPerBlock;
    red::DeviceBuffer stamps(ranges * sizeof(SegmentTimeline));
    bool stamped = false;
    ch11::StampedCalls calls;
    calls.stamp = [&](bool on) {
      stamped = on;
      CUDA_CHECK(cudaMemsetAsync(stamps.get(), 0, stamps.bytes(), stream.get()));
    };
    calls.call = [&] {
      if (stamped)
        ch12::timeline::launch_stamped<Op, float>(c, p, static_cast<SegmentTimeline*>(stamps.get()));
      else
        ch12::launch_balanced_tuned<Op, float>(c, p);
    };
    calls.results = [&] {
      std::vector<unsigned char> got(input.segments * 4);
      input.out.download(got.data(), got.size());
      return got;
    };
    calls.figures = [&](double us) {
      std::vector<SegmentTimeline> host_stamps(ranges);
      stamps.download(host_stamps.data(), stamps.bytes());
      return figures(host_stamps, us, input.bytes() / us / 1e3);
    };
    bool shape_same = true;
    columns.push_back(ch11::median_figures(calls, scrubber, stream, 3, kCalls, shape_same));
    if (!shape_same) {
      std::fprintf(stderr, "%s mean %zu: a stamped call's results differ from the tuned kernels'\n", shape.name,
                   shape.mean);
      same = false;
    }
  }
  std::printf(
      "# Where the tuned balanced segments kernel's time goes: f32 sum, microseconds from the first warp's start\n\n");
  std::printf("Device: %s. Each figure is the median over %d calls, each cold (the L2 scrubbed before it), of that "
              "call's figure; the warps' timer stamps (a stamped copy of the tuned kernels) are read by lane 0 of each "
              "warp.\n\n",
              dev.name.c_str(), kCalls);
  ch12::print_shape_header("", "---|");
  ch11::print_figure_rows(kRows, std::size(kRows), columns,
                          [](std::size_t row) { return row == kPerWindowRow ? " %.3f |" : " %.1f |"; });
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return red::experiment_without_options(
      argc, argv, "12_segmented_segment_timeline",
      "Where the tuned balanced segments kernel's time goes: the warps' timer stamps on the benchmark's\n"
      "four segment shapes (f32 sum); it takes no options.",
      "results/h200/experiments/segment_timeline.md", [] { return run(); });
}
