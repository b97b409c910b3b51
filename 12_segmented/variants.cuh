// Chapter 12's tuned balanced kernel: the lesson's ranges of equal cost (reduce.cuh), read in
// windows instead of a segment at a time, so that a warp pays for a window, not for a segment.
// The benchmark's reduce_segments and the program's default; the lesson does not include this
// file. Its parts (the cost search, a window's shared memory) are windows.cuh.
//
// A warp reads its range in windows of 32 lanes x kItems, lane l taking the window's kItems
// consecutive elements from l x kItems. For each window the warp marks, in shared memory of its
// own, where the window's segments end (one bit per element), reading the offsets in order, 32 at
// a time and a batch ahead. Each lane walks its elements and, at every mark, puts its partial
// aside and starts a new one. A segmented scan over the lanes gives each lane what the lanes
// before it hold of the segment it closes first, and then a lane per segment closed in the window
// writes its result: the partial put aside where the segment ends, after the scan's share if it
// began in an earlier lane. A segment still open at the window's end is carried on: in a window
// with no end at all each lane just adds its elements to a partial of its own, and those are
// folded into the carry at the next window that has one. The records and the finishing kernel are
// the lesson's, and every partial is combined in an order fixed by the offsets.
//
// Which window closes a segment: the one holding its last element. A window [w0, w1) owns the
// ends e with w0 < e <= w1; the window that begins at offsets[0] also owns the ends equal to it
// (empty segments at the very start). An empty segment gets its identity in the window that owns
// its end.
//
// What the kernels do beyond the lesson's, fixed in the code (the policy holds the numbers and
// the one choice that differs by the element's size):
//   - the elements read evict-first: each is read once, while the offsets are read again (the
//     ends, then the writing pass) and should stay in L1 and L2;
//   - the cost search's first probes loaded at once with offsets[0] and offsets[segments], and
//     around a guess of where the bound lies if every segment cost the same (GuessedProbes);
//   - each warp searches its range's first bound alone and takes its last from the next warp of
//     its block (half the probes, a barrier);
//   - one array of a lane's elements, the next window's loads issued once the walk has used it;
//   - the finishing kernel launched before the first ends, waiting for it inside (sm_90+: its
//     launch overlaps the first's last warps), loading the record of the range before a head's
//     with the head's (one trip to memory where the segment began there).
// 12_segmented_segment_tuning (experiments/12_segmented/segment_tuning.cu) varies the policy's
// numbers and times them on the benchmark's segment shapes.
#pragma once

#include <algorithm>
#include <type_traits>

#include "12_segmented/reduce.cuh"
#include "12_segmented/windows.cuh"

namespace ch12 {

using ch11::shfl_down;
using ch11::shfl_up;

// The tuned kernel's numbers, and its one choice that depends on the element's size.
struct SegmentTuning {
  static constexpr unsigned kItems = 16;       // a lane's consecutive elements in a window: 4 16-byte
                                               // loads of f32
  static constexpr bool kStagedLoads = true;   // a window's elements copied into shared memory
                                               // (cp.async), each copy 512 contiguous bytes a warp,
                                               // then read from there by the lanes (StagedWindow);
                                               // false: each lane loads its own into registers
  static constexpr unsigned kMinBlocks = 4;    // blocks of 256 threads an SM holds: 64 registers
  static constexpr unsigned kWaves = 1;        // ranges for one wave of blocks (more waves: shorter
                                               // ranges, which the GPU hands out as SMs free up)
  static constexpr unsigned kSegmentCost = kEndCost;  // what a segment's end costs, in elements (0:
                                                      // ranges of equal elements)
};

// 16-bit inputs: the same elements are half the bytes, and the warp's fixed work a window (the
// marks, the scan, the writing pass) is then spread over half the bytes. 32 elements a lane make a
// window the bytes of an f32 one, in half as many windows. They are loaded by each lane into its
// registers: copied into shared memory, the window and its 32 x 32 closed partials would take a
// block of 8 warps past the 48 KB of static shared memory. The registers this takes, more than the
// 64 of 4 blocks an SM, leave 3.
struct SegmentTuning16 : SegmentTuning {
  static constexpr unsigned kItems = 32;
  static constexpr bool kStagedLoads = false;
  static constexpr unsigned kMinBlocks = 3;
};
template <class T>
using SegmentPolicy = std::conditional_t<sizeof(T) == 2, SegmentTuning16, SegmentTuning>;

// A warp's range of elements, window by window: the segments it closes written (one that began in
// an earlier range left in records[range] instead, with the partial of the segment still open at
// the range's end). The ranges hold equal costs (warp_cost_bounds) from offsets[0] rounded down to
// a lane's share, their bounds rounded down to whole windows from there, so that every lane's
// loads are aligned and no two ranges share a window. A range past the last segment's end is
// empty. With no elements at all, every segment is empty and the warps write the identities.
template <class Op, class T, bool kAligned, class Policy = SegmentPolicy<T>>
__global__ void __launch_bounds__(kBlock, Policy::kMinBlocks)
    segments_balanced_tuned(const T* in, const std::int64_t* offsets, std::size_t segments, void* out,
                            Pieces<typename Op::Acc>* records) {
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
  for (std::size_t w0 = lo; w0 < hi; w0 += kWindow) window(w0);
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

// The segments that began in an earlier warp's range: the lesson's segments_finish, launched
// before the first kernel ends (it waits for its records inside), with the record of the range
// before loaded at once and the records read 16 a lane at a time. `items`: a lane's elements in a
// window (the ranges' origin is offsets[0] rounded down to it).
template <class Op>
__global__ void __launch_bounds__(kBlock)
    segments_finish_tuned(const std::int64_t* offsets, std::size_t segments, unsigned items, unsigned cost,
                          std::size_t ranges, const Pieces<typename Op::Acc>* records, void* out) {
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
}

// The tuned kernel's sizes for n elements in `segments` segments (Policy: its numbers): one wave
// of blocks, since every warp has the same work, and ranges of at least a window's cost.
template <class Op, class T, class Policy = SegmentPolicy<T>>
void plan_balanced_tuned(Plan& p, std::size_t n, std::size_t segments) {
  p.lanes = 32;
  const unsigned occupancy = red::per_device<unsigned>([](int) {
    return ch11::blocks_per_sm<kBlock>(segments_balanced_tuned<Op, T, true, Policy>);
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

// The tuned kernels, as plan_balanced_tuned<Op, T, Policy> sized them.
template <class Op, class T, class Policy = SegmentPolicy<T>>
void launch_balanced_tuned(const SegmentedCall& c, const Plan& p) {
  const T* in = static_cast<const T*>(c.input);
  auto* records = static_cast<Pieces<typename Op::Acc>*>(c.scratch);
  if (p.vector)
    segments_balanced_tuned<Op, T, true, Policy>
        <<<p.blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.output, records);
  else
    segments_balanced_tuned<Op, T, false, Policy>
        <<<p.blocks, kBlock, 0, c.stream>>>(in, c.offsets, c.segments, c.output, records);
  const bool early = ch07::device_limits<segments_balanced_tuned<Op, T, true, Policy>>().programmatic;
  CUDA_CHECK(ch07::launch_early(segments_finish_tuned<Op>, dim3(p.blocks), dim3(kBlock), 0, c.stream, early, c.offsets,
                                c.segments, Policy::kItems, Policy::kSegmentCost,
                                std::size_t{p.blocks} * kWarpsPerBlock,
                                static_cast<const Pieces<typename Op::Acc>*>(records), c.output));
}

// The call's plan with the tuned kernel for the balanced mapping (the naive one is the lesson's).
template <class Op, class T>
Plan plan_tuned(const SegmentedCall& c) {
  Plan p = plan_mapping(c, sizeof(T));
  if (p.strategy == Strategy::balanced && c.segments > 0) plan_balanced_tuned<Op, T>(p, c.n, c.segments);
  return p;
}

// One call on c.stream with the tuned balanced kernel (or the naive mapping where the call asks
// for it). The sizes and offsets must be valid (why_invalid, check_offsets); the scratch at least
// plan_tuned's.
template <class Op, class T>
void launch_tuned(const SegmentedCall& c) {
  if (c.segments == 0) return;
  const Plan p = plan_tuned<Op, T>(c);
  if (p.strategy == Strategy::naive)
    ch11::for_lanes(p.lanes, [](auto g) { return &launch_naive<Op, T, decltype(g)::value>; })(c, p);
  else
    launch_balanced_tuned<Op, T>(c, p);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace ch12
