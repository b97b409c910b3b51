// Chapter 11's entry points for the program, the tests and the benchmark: the (op, dtype) of a call
// looked up once, then the plan and launch of the kernels the call names (BatchedCall::kernels):
// the tuned ones (variants.cuh, the default) or the lesson's teaching kernels (reduce.cuh).
#pragma once

#include <stdexcept>
#include <string>

#include "11_batched/variants.cuh"

namespace ch11 {

using Ops = red::Ops<red::Sum, red::Max, red::ArgMax>;
using Types = red::Types<float, __half, __nv_bfloat16>;

// The plan a call would run (its strategy, sizes and scratch).
inline Plan plan_of(const BatchedCall& c) {
  Plan p;
  red::dispatch(Ops{}, Types{}, c.op, c.dtype, [&](auto tag) {
    using Op = typename decltype(tag)::type;
    p = c.kernels == Kernels::teaching ? plan<Op, typename Op::In>(c) : plan_tuned<Op, typename Op::In>(c);
  });
  return p;
}

inline std::size_t scratch_bytes_of(const BatchedCall& c) { return plan_of(c).scratch_bytes; }

// The longest chain of roundings one result of `length` elements goes through under plan p (sums;
// the tests', the program's and the benchmark's error bound); per_vector: elements a 16-byte load.
inline std::size_t sum_depth_of(const Plan& p, std::size_t length, std::size_t per_vector) {
  return p.kernels == Kernels::teaching ? sum_depth(p, length, per_vector) : sum_depth_tuned(p, length, per_vector);
}

// What a call must be before anything is launched; std::invalid_argument for what it refuses.
inline void check_call(const BatchedCall& c) {
  if (!supported(c.op, c.dtype))
    throw std::invalid_argument("11_batched: no kernel for op " + std::string(red::name(c.op)) + " on dtype " +
                                std::string(red::name(c.dtype)) + " (sum, max and argmax of f32, f16 and bf16)");
  if (const std::string why = why_invalid(c.shape); !why.empty()) throw std::invalid_argument("11_batched: " + why);
  if (outputs(c.shape) > 0 && c.output == nullptr) throw std::invalid_argument("11_batched: null output");
  if (input_elements(c.shape) > 0 && c.input == nullptr) throw std::invalid_argument("11_batched: null input");
  if (reinterpret_cast<std::uintptr_t>(c.input) % red::size_of(c.dtype) != 0)
    throw std::invalid_argument("11_batched: input not aligned to its element type");
  if (c.kernels != Kernels::tuned && c.kernels != Kernels::teaching)
    throw std::invalid_argument("11_batched: unknown kernels");
  red::check_scratch("11_batched", c.scratch, c.scratch_bytes, plan_of(c).scratch_bytes);
}

// The launch function for a checked call: launch_tuned<Op, T> (variants.cuh) or the lesson's
// launch<Op, T> for its op and dtype. A program calls it itself, so that nothing stands between
// its main() and the chapter's launch.
using LaunchFn = void (*)(const BatchedCall&);
inline LaunchFn launch_for(const BatchedCall& c) {
  check_call(c);
  LaunchFn f = nullptr;
  red::dispatch(Ops{}, Types{}, c.op, c.dtype, [&](auto tag) {
    using Op = typename decltype(tag)::type;
    f = c.kernels == Kernels::teaching ? &launch<Op, typename Op::In> : &launch_tuned<Op, typename Op::In>;
  });
  return f;
}

// Checks the call and launches it on c.stream; std::invalid_argument for what it refuses.
inline void run(const BatchedCall& c) { launch_for(c)(c); }

}  // namespace ch11
