// Chapter 12's entry points for the program, the tests and the benchmark: the (op, dtype) of a call
// looked up once, then the plan and launch of the kernels it asks for: the tuned balanced kernel
// (variants.cuh) or the lesson's teaching one (reduce.cuh); the naive mapping is the lesson's.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "12_segmented/reduce.cuh"
#include "12_segmented/variants.cuh"

namespace ch12 {

using Ops = red::Ops<red::Sum, red::Max, red::ArgMax>;
using Types = red::Types<float, __half, __nv_bfloat16>;

// The plan a call would run (its mapping, kernels, sizes and scratch).
inline Plan plan_of(const SegmentedCall& c) {
  Plan p;
  red::dispatch(Ops{}, Types{}, c.op, c.dtype, [&](auto tag) {
    using Op = typename decltype(tag)::type;
    p = c.kernels == Kernels::teaching ? plan<Op, typename Op::In>(c) : plan_tuned<Op, typename Op::In>(c);
  });
  return p;
}

inline std::size_t scratch_bytes_of(const SegmentedCall& c) { return plan_of(c).scratch_bytes; }

// The longest chain of roundings one result of `length` elements goes through in the tuned
// balanced kernel (sums): a lane's own partial over the windows of its range (at most all of
// them), its walk of the closing window, the warp's fold of the lanes' partials, the lanes' scan,
// the carry, and the ranges a long segment spans (the finishing warp's tree). A range inside a
// segment holds a step of elements, less a window at most, and the step is at least the segment's
// cost shared out. The deeper of the two policies' chains: SegmentPolicy picks one by the
// element's size.
inline std::size_t sum_depth_tuned(const Plan& p, std::size_t segments, std::size_t length) {
  const std::size_t warp_tree = 5;
  const auto depth = [&](std::size_t items, std::size_t cost) {
    const std::size_t windows = red::ceil_div(p.per_warp, 32 * items);
    const std::size_t warps = std::size_t{p.blocks} * kWarpsPerBlock;
    const std::size_t share = (length + cost * segments) / warps;
    const std::size_t window = 32 * items;
    const std::size_t step = std::max<std::size_t>(window + 1, share) - window;
    const std::size_t ranges = red::ceil_div(length, step) + 1;
    return std::min(length, (windows + 1) * items + 4 * warp_tree + 8 + red::ceil_div(ranges, 32));
  };
  return std::max(depth(SegmentTuning::kItems, SegmentTuning::kSegmentCost),
                  depth(SegmentTuning16::kItems, SegmentTuning16::kSegmentCost));
}

// The longest chain of roundings of one result of `length` elements under plan p (the tests', the
// program's and the benchmark's error bound); per_vector: the elements of a 16-byte vector.
inline std::size_t sum_depth_of(const Plan& p, const SegmentedCall& c, std::size_t length, std::size_t per_vector) {
  if (p.strategy == Strategy::balanced && p.kernels == Kernels::tuned) return sum_depth_tuned(p, c.segments, length);
  return sum_depth(p, length, per_vector);
}

// What a call must be before anything is launched; std::invalid_argument for what it refuses.
inline void check_call(const SegmentedCall& c) {
  if (!supported(c.op, c.dtype))
    throw std::invalid_argument("12_segmented: no kernel for op " + std::string(red::name(c.op)) + " on dtype " +
                                std::string(red::name(c.dtype)) + " (sum, max and argmax of f32, f16 and bf16)");
  if (const std::string why = why_invalid(c.segments, c.n); !why.empty()) throw std::invalid_argument("12_segmented: " + why);
  if (c.segments > 0 && c.output == nullptr) throw std::invalid_argument("12_segmented: null output");
  if (c.segments > 0 && c.offsets == nullptr) throw std::invalid_argument("12_segmented: null offsets");
  if (c.n > 0 && c.input == nullptr) throw std::invalid_argument("12_segmented: null input");
  if (reinterpret_cast<std::uintptr_t>(c.input) % red::size_of(c.dtype) != 0)
    throw std::invalid_argument("12_segmented: input not aligned to its element type");
  red::check_scratch("12_segmented", c.scratch, c.scratch_bytes, plan_of(c).scratch_bytes);
}

// The launch function for a checked call: launch_tuned<Op, T> (variants.cuh) or the lesson's
// launch<Op, T> for its op and dtype. A program calls it itself, so that nothing stands between
// its main() and the chapter's launch.
using LaunchFn = void (*)(const SegmentedCall&);
inline LaunchFn launch_for(const SegmentedCall& c) {
  check_call(c);
  LaunchFn f = nullptr;
  red::dispatch(Ops{}, Types{}, c.op, c.dtype, [&](auto tag) {
    using Op = typename decltype(tag)::type;
    f = c.kernels == Kernels::teaching ? &launch<Op, typename Op::In> : &launch_tuned<Op, typename Op::In>;
  });
  return f;
}

// Checks the call and launches it on c.stream; std::invalid_argument for what it refuses.
inline void run(const SegmentedCall& c) { launch_for(c)(c); }

}  // namespace ch12
