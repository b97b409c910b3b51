// Chapter 12's calls set up and checked on the host: generated offsets, a call with its device
// buffers, and each segment's result held to chapter 11's check (a segment is a slice of the
// input, as a row is). Shared by the chapter program, its tests and the benchmark.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "11_batched/host_reference.hpp"
#include "12_segmented/chapter.cuh"
#include "device_buffer.hpp"

namespace ch12 {

// Offsets of `count` segments of mean length about `mean`: uniform lengths in [0, 2 mean], or a
// heavy tail, where 40% of the segments are empty, most of the rest short (1 to mean / 2 + 1), 2%
// long (mean to 40 mean), and one, a third of the way in, holds half of count x mean elements.
// std::invalid_argument where why_not_generated refuses the sizes.
inline std::vector<std::int64_t> make_offsets(std::size_t count, std::size_t mean, SegmentDist dist, std::uint64_t seed) {
  if (const std::string why = why_not_generated(count, mean, dist); !why.empty())
    throw std::invalid_argument("make_offsets(" + std::to_string(count) + ", " + std::to_string(mean) + "): " + why);
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> o(count + 1, 0);
  for (std::size_t s = 0; s < count; ++s) {
    std::size_t len = 0;
    if (dist == SegmentDist::uniform) {
      len = std::uniform_int_distribution<std::size_t>(0, 2 * mean)(rng);
    } else if (s == count / 3) {
      len = count * mean / 2;
    } else {
      const double u = std::uniform_real_distribution<double>(0, 1)(rng);
      len = u < 0.4    ? 0
            : u < 0.98 ? std::uniform_int_distribution<std::size_t>(1, mean / 2 + 1)(rng)
                       : std::uniform_int_distribution<std::size_t>(mean, 40 * mean)(rng);
    }
    o[s + 1] = o[s] + static_cast<std::int64_t>(len);
  }
  return o;
}

// A call with its device buffers: the offsets, the results (4 bytes each, at least one) and the
// scratch its plan needs (scratch_bytes: that many instead, for a library's call).
struct Prepared {
  red::DeviceBuffer offsets, output, scratch;
  SegmentedCall call;
  Plan plan;
  // Runs the call (ch12::run) and waits for it.
  void run_and_wait() const {
    run(call);
    CUDA_CHECK(cudaStreamSynchronize(call.stream));
  }
  // The results, once the call has ended.
  std::vector<std::byte> results() const {
    std::vector<std::byte> got(call.segments * 4);
    if (!got.empty()) output.download(got.data(), got.size());
    return got;
  }
};
// The call over an input of n elements cut by `offsets` (segments + 1 of them, at least one),
// with the mapping and the kernels asked for.
inline std::unique_ptr<Prepared> prepare(red::Op op, red::DType t, const void* input, std::size_t n,
                                         const std::vector<std::int64_t>& offsets, Strategy strategy,
                                         Kernels kernels, cudaStream_t stream,
                                         std::optional<std::size_t> scratch_bytes = {}) {
  auto p = std::make_unique<Prepared>();
  p->offsets = red::DeviceBuffer(offsets.size() * sizeof(std::int64_t));
  p->offsets.upload(offsets.data(), offsets.size() * sizeof(std::int64_t));
  SegmentedCall& c = p->call;
  c.op = op;
  c.dtype = t;
  c.input = input;
  c.n = n;
  c.segments = offsets.size() - 1;
  c.offsets = static_cast<const std::int64_t*>(p->offsets.get());
  p->output = red::DeviceBuffer(std::max<std::size_t>(c.segments, 1) * 4);
  c.output = p->output.get();
  c.stream = stream;
  c.strategy = strategy;
  c.kernels = kernels;
  p->plan = plan_of(c);
  c.scratch_bytes = scratch_bytes ? *scratch_bytes : p->plan.scratch_bytes;
  p->scratch = red::DeviceBuffer(c.scratch_bytes);
  c.scratch = p->scratch.get();
  return p;
}

// Every segment's result against its float64 reference, with the bound of the plan's longest chain.
inline ch11::BatchCheck check_all(const red::HostArray& x, const SegmentedCall& c, const std::vector<std::int64_t>& offsets,
                                  const Plan& plan, const std::vector<std::byte>& results) {
  const std::size_t per_vector = 16 / red::size_of(x.dtype);
  const auto slice = [&](std::size_t k) {
    const auto b = static_cast<std::size_t>(offsets[k]), e = static_cast<std::size_t>(offsets[k + 1]);
    return ch11::Slice{b, e - b, 1};
  };
  return ch11::check_slices(
      x, c.segments, c.op, slice, [&](std::size_t length) { return sum_depth_of(plan, c, length, per_vector); }, results);
}

}  // namespace ch12
