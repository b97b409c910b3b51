// Chapter 13 - any associative operator: chapter 10's kernel made generic.
//
// Idea: chapter 10's single-pass kernel never looked inside its operator: it loads, combines and
// stores through the operator struct (ops.cuh), so any operator with an identity, a combine and a
// transform runs at the memory's speed through it unchanged, as CUB's Reduce and TransformReduce
// take any functor. What the operator must promise: chapter 10 hands a thread vectors a grid apart
// (tile r x grid + block) and its last block takes the partials i, i + 256, ...: it combines
// elements out of order, which is right only for a commutative operator. launch refuses one that
// says kCommutative = false; the order-keeping kernel for those is ordered.cuh, and any / all
// with block votes is votes.cuh. The kernel is chapter 10's tuned one (variant_kernels.cuh): its
// block tree is written with cooperative groups, whose cg::reduce shuffles any accumulator (a struct
// a word at a time), where chapter 06's shuffles take numbers and argmax pairs only.
// Cost: the input read once; one launch; per block one partial and one atomic (chapter 10).
// Scratch: a counter that the caller zeroes once, then one partial per block.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "07_two_pass/reduce.cuh"              // ch07::Array, accumulate_share's loads, unroll_of
#include "10_single_pass/variant_kernels.cuh"  // ch10::launch_tuned (the commutative kernel), take_ticket
#include "13_custom_ops/ops.cuh"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "per_device.hpp"

namespace ch13 {

constexpr unsigned kBlock = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kWarps = kBlock / kWarp;

// One call: n elements of Op::In at `input` into the 16-byte result at `output`.
struct Call {
  const void* input = nullptr;
  std::size_t n = 0;
  void* output = nullptr;
  void* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
};

// ---- the reordering kernel: chapter 10's, for a commutative operator --------------------------

template <class Op>
red::ReduceCall as_reduce_call(const Call& c) {
  red::ReduceCall r;
  r.input = c.input;
  r.n = c.n;
  r.output = c.output;
  r.scratch = c.scratch;
  r.scratch_bytes = c.scratch_bytes;
  r.stream = c.stream;
  return r;
}

// 07's loads (ch07::Tuning), but 16 elements a trip, not 32, for the operators whose load is a dozen
// instructions or more (a log2, a renormalisation): that leaves the registers for more warps.
struct SixteenElements : ch07::Tuning {
  static constexpr unsigned kMaxElements = 16;
};
template <class Op>
struct TuningFor {
  using type = ch07::Tuning;
};
template <class T>
struct TuningFor<LogProduct<T>> {
  using type = SixteenElements;
};
template <class T>
struct TuningFor<ScaledProduct<T>> {
  using type = SixteenElements;
};
template <class Op>
using TuningOf = typename TuningFor<Op>::type;

template <class Op, class Policy = TuningOf<Op>>
std::size_t scratch_bytes(std::size_t n) {
  return ch10::tuned_scratch_bytes<Op, Policy>(n);
}
template <class Op, class Policy = TuningOf<Op>>
std::size_t zeroed_scratch_bytes() {
  return ch10::tuned_zeroed_scratch_bytes<Op, Policy>();
}
// [excerpt: launch]
// The lesson's launcher for a commutative operator: chapter 10's tuned kernel, unchanged.
template <class Op, class Policy = TuningOf<Op>>
void launch(const Call& c) {
  if constexpr (!Op::kCommutative)
    throw std::invalid_argument("13_custom_ops: this operator is not commutative; the reordering kernel would "
                                "combine its elements out of order (use launch_ordered)");
  else
    ch10::launch_tuned<Op, Policy>(as_reduce_call<Op>(c));
}
// [end: launch]
// The same kernel whatever the operator says: the demonstration that a non-commutative operator
// comes out wrong from it (the tests and the program show it).
template <class Op, class Policy = TuningOf<Op>>
void launch_reordering_anyway(const Call& c) {
  ch10::launch_tuned<Op, Policy>(as_reduce_call<Op>(c));
}

}  // namespace ch13
