// Chapter 13's exercise answered in code: the maximum prefix sum as an operator of functors
// (solutions/13_custom_ops.md), associative and not commutative, run by the order-keeping kernel.
#pragma once

#include "13_custom_ops/ordered.cuh"

namespace sol12 {

struct PrefixSummary {
  float s, m;  // the segment's sum, and its largest prefix sum (the empty prefix included: >= 0)
};
struct Concatenate {  // left, then right
  __device__ PrefixSummary operator()(PrefixSummary a, PrefixSummary b) const { return {a.s + b.s, fmaxf(a.m, a.s + b.m)}; }
};
struct EmptySegment {
  __host__ __device__ PrefixSummary operator()() const { return {0.0f, 0.0f}; }
};
struct OneElement {
  __device__ PrefixSummary operator()(float x) const { return {x, fmaxf(0.0f, x)}; }
};
using MaxPrefixSum = ch13::FromFunctors<float, PrefixSummary, Concatenate, EmptySegment, OneElement, false>;

}  // namespace sol12
