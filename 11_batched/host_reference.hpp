// Chapter 11's results checked on the host: one float64 reference per row or column, and the
// device's results decoded and held to the flat chapters' check (reference.hpp). Shared by the
// chapter program, its tests and the benchmark, and by chapter 12's (its segments are slices too).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "11_batched/batched.hpp"
#include "11_batched/chapter.cuh"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "reference.hpp"

namespace ch11 {

// A call with its device buffers: the results (4 bytes each, at least one) and the scratch its plan
// needs (scratch_bytes: that many instead, for a library's call or a larger scratch). The plan is
// the call's either way. The program, the tests and the benchmark all set a call up this way.
struct Prepared {
  red::DeviceBuffer output, scratch;
  BatchedCall call;
  Plan plan;
  // Runs the call (ch11::run) and waits for it.
  void run_and_wait() const {
    run(call);
    CUDA_CHECK(cudaStreamSynchronize(call.stream));
  }
  // Whether the scratch's counters are zero again, once the call has ended.
  bool counters_are_zero() const { return scratch.prefix_is_zero(plan.zeroed_scratch_bytes); }
  // The results, once the call has ended.
  std::vector<std::byte> results() const {
    std::vector<std::byte> got(outputs(call.shape) * 4);
    if (!got.empty()) output.download(got.data(), got.size());
    return got;
  }
};
inline std::unique_ptr<Prepared> prepare(red::Op op, red::DType t, const void* input, const Shape& shape,
                                         Strategy strategy, Kernels kernels, cudaStream_t stream,
                                         std::optional<std::size_t> scratch_bytes = {}) {
  auto p = std::make_unique<Prepared>();
  p->output = red::DeviceBuffer(std::max<std::size_t>(outputs(shape), 1) * 4);
  BatchedCall& c = p->call;
  c.op = op;
  c.dtype = t;
  c.input = input;
  c.shape = shape;
  c.output = p->output.get();
  c.stream = stream;
  c.strategy = strategy;
  c.kernels = kernels;
  p->plan = plan_of(c);
  c.scratch_bytes = scratch_bytes ? *scratch_bytes : p->plan.scratch_bytes;
  p->scratch = red::DeviceBuffer(c.scratch_bytes);
  c.scratch = p->scratch.get();
  // The counters, once: every call leaves them zero. A library's scratch smaller than the plan's
  // holds none of them (ch11::run refuses it for the chapter's kernels).
  p->scratch.zero_prefix(std::min(p->plan.zeroed_scratch_bytes, c.scratch_bytes));
  return p;
}

// Result k's elements: `count` elements of the input, the first at `first`, `step` apart.
struct Slice {
  std::size_t first = 0, count = 0, step = 1;
};

inline Slice slice_of(const Shape& s, std::size_t k) {
  return s.layout == Layout::rows ? Slice{k * s.stride, s.cols, 1} : Slice{k, s.rows, s.stride};
}

// The float64 reference of one slice, with the flat chapters' semantics (reference.hpp): a
// compensated sum; max with NaN propagating; argmax with NaN first, ties to the smaller index.
inline red::Reference reference_of(const red::HostArray& x, const Slice& sl, red::Op op) {
  red::Reference r;
  if (op == red::Op::sum) {
    double sum = 0, carry = 0, abs_sum = 0;
    bool nan = false, pos_inf = false, neg_inf = false;
    for (std::size_t k = 0; k < sl.count; ++k) {
      const double v = x.at(sl.first + k * sl.step);
      if (std::isnan(v)) nan = true;
      else if (std::isinf(v)) (v > 0 ? pos_inf : neg_inf) = true;
      else {
        abs_sum += std::fabs(v);
        const double t = sum + v;
        carry += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
        sum = t;
      }
    }
    r.abs_sum = abs_sum;
    r.value = nan || (pos_inf && neg_inf) ? std::numeric_limits<double>::quiet_NaN()
              : pos_inf                   ? std::numeric_limits<double>::infinity()
              : neg_inf                   ? -std::numeric_limits<double>::infinity()
                                          : sum + carry;
    return r;
  }
  double best = -std::numeric_limits<double>::infinity();
  std::int64_t index = -1;
  for (std::size_t k = 0; k < sl.count; ++k) {
    const double v = x.at(sl.first + k * sl.step);
    const bool beats = index < 0 || (!std::isnan(best) && (std::isnan(v) || v > best));
    if (beats) best = v, index = static_cast<std::int64_t>(k);
  }
  r.value = best;
  r.index = op == red::Op::argmax ? index : -1;
  return r;
}

// Result k as the flat check reads it: the value (argmax: the element at the index) and the index.
inline red::DeviceResult decoded(const std::vector<std::byte>& results, std::size_t k, red::Op op,
                                 const red::HostArray& x, const Slice& sl) {
  red::DeviceResult d;
  if (op == red::Op::argmax) {
    std::int32_t index = 0;
    std::memcpy(&index, results.data() + 4 * k, 4);
    d.index = index;
    d.value = index >= 0 && static_cast<std::size_t>(index) < sl.count ? x.at(sl.first + index * sl.step)
                                                                      : -std::numeric_limits<double>::infinity();
  } else {
    float v = 0;
    std::memcpy(&v, results.data() + 4 * k, 4);
    d.value = v;
  }
  return d;
}

struct BatchCheck {
  std::size_t checked = 0, failed = 0;
  double worst_ratio = 0;  // the largest |error| / bound over the results (0: all exact)
  std::string first_failure;
};

// Each of `count` results against the reference of its slice (slice(k)), with the bound of a
// chain of depth(slice's length) roundings.
template <class SliceOf, class Depth>
BatchCheck check_slices(const red::HostArray& x, std::size_t count, red::Op op, SliceOf slice, Depth depth,
                        const std::vector<std::byte>& results) {
  BatchCheck out;
  std::vector<red::CheckOutcome> outcome(count);
  for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(count); ++k) {
    const Slice sl = slice(static_cast<std::size_t>(k));
    const red::Reference ref = reference_of(x, sl, op);
    const red::DeviceResult got = decoded(results, static_cast<std::size_t>(k), op, x, sl);
    outcome[static_cast<std::size_t>(k)] = red::check(ref, got, x.dtype, op, depth(sl.count));
  }
  for (std::size_t k = 0; k < count; ++k) {
    ++out.checked;
    const red::CheckOutcome& c = outcome[k];
    if (c.bound > 0) out.worst_ratio = std::max(out.worst_ratio, c.abs_error / c.bound);
    if (!c.passed) {
      if (out.failed++ == 0) out.first_failure = "result " + std::to_string(k) + ": " + c.why;
    }
  }
  return out;
}

// Every row's or column's result against its reference, with the bound of the plan's longest chain.
inline BatchCheck check_all(const red::HostArray& x, const Shape& s, red::Op op, const Plan& plan,
                            const std::vector<std::byte>& results) {
  const std::size_t per_vector = 16 / red::size_of(x.dtype);
  return check_slices(
      x, outputs(s), op, [&](std::size_t k) { return slice_of(s, k); },
      [&](std::size_t length) { return sum_depth_of(plan, length, per_vector); }, results);
}

}  // namespace ch11
