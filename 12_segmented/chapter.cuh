// Chapter 12's entry points for the program, the tests and the benchmark: the (op, dtype) of a call
// looked up once, then the lesson's plan and launch (reduce.cuh).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "12_segmented/reduce.cuh"

namespace ch12 {

using Ops = red::Ops<red::Sum, red::Max, red::ArgMax>;
using Types = red::Types<float, __half, __nv_bfloat16>;

// The plan a call would run (its mapping, sizes and scratch).
inline Plan plan_of(const SegmentedCall& c) {
  Plan p;
  red::dispatch(Ops{}, Types{}, c.op, c.dtype, [&](auto tag) {
    using Op = typename decltype(tag)::type;
    p = plan<Op, typename Op::In>(c);
  });
  return p;
}

inline std::size_t scratch_bytes_of(const SegmentedCall& c) { return plan_of(c).scratch_bytes; }

// Checks the call and launches it on c.stream; std::invalid_argument for what it refuses.
inline void run(const SegmentedCall& c) {
  if (!supported(c.op, c.dtype))
    throw std::invalid_argument("12_segmented: no kernel for op " + std::string(red::name(c.op)) + " on dtype " +
                                std::string(red::name(c.dtype)) + " (sum, max and argmax of f32, f16 and bf16)");
  if (const std::string why = why_invalid(c.segments, c.n); !why.empty()) throw std::invalid_argument("12_segmented: " + why);
  if (c.segments > 0 && c.output == nullptr) throw std::invalid_argument("12_segmented: null output");
  if (c.segments > 0 && c.offsets == nullptr) throw std::invalid_argument("12_segmented: null offsets");
  if (c.n > 0 && c.input == nullptr) throw std::invalid_argument("12_segmented: null input");
  if (reinterpret_cast<std::uintptr_t>(c.input) % red::size_of(c.dtype) != 0)
    throw std::invalid_argument("12_segmented: input not aligned to its element type");
  const Plan p = plan_of(c);
  red::check_scratch("12_segmented", c.scratch, c.scratch_bytes, p.scratch_bytes);
  red::dispatch(Ops{}, Types{}, c.op, c.dtype, [&](auto tag) {
    using Op = typename decltype(tag)::type;
    launch<Op, typename Op::In>(c);
  });
}

}  // namespace ch12
