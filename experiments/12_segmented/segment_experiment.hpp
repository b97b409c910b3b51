// What chapter 12's segment experiments (segment_tuning.cu, segment_timeline.cu) share: the
// benchmark's four segment shapes (sums of 256 MiB of elements, 2^26 f32 or 2^27 f16, in segments
// of mean length 32 and 1024, lengths uniform or heavy-tailed), each one's input built on the device, and the header of a
// table with a column a shape.
#pragma once

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <vector>

#include "12_segmented/host_reference.hpp"
#include "device_buffer.hpp"
#include "runner.hpp"

namespace ch12 {

struct ExperimentShape {
  const char* name;
  std::size_t mean;
  SegmentDist dist;
};
inline constexpr ExperimentShape kExperimentShapes[] = {{"uniform", 32, SegmentDist::uniform},
                                                        {"heavy", 32, SegmentDist::heavy},
                                                        {"uniform", 1024, SegmentDist::uniform},
                                                        {"heavy", 1024, SegmentDist::heavy}};

// One shape: its offsets and normal input (f32 unless told) on the host and the device, and room
// for the results.
struct SegmentInput {
  std::vector<std::int64_t> offsets;
  std::size_t segments, n;
  red::HostArray host;
  red::DeviceInput in;
  red::DeviceBuffer offsets_device, out;

  explicit SegmentInput(const ExperimentShape& shape, red::DType dtype = red::DType::f32)
      : offsets(make_offsets((std::size_t{1} << 28) / red::size_of(dtype) / shape.mean, shape.mean, shape.dist, 11)),
        segments(offsets.size() - 1),
        n(static_cast<std::size_t>(offsets.back())),
        host(red::generate(dtype, n, red::Dist::normal, 12)),
        in(red::upload(host)),
        offsets_device(offsets.size() * sizeof(std::int64_t)),
        out(segments * 4) {
    offsets_device.upload(offsets.data(), offsets.size() * sizeof(std::int64_t));
  }
  // A sum over this shape on `stream`, with `scratch` (at least the plan's scratch_bytes).
  SegmentedCall call(const red::DeviceBuffer& scratch, cudaStream_t stream) const {
    SegmentedCall c;
    c.input = in.data;
    c.n = n;
    c.segments = segments;
    c.offsets = static_cast<const std::int64_t*>(offsets_device.get());
    c.output = out.get();
    c.scratch = scratch.get();
    c.scratch_bytes = scratch.bytes();
    c.stream = stream;
    return c;
  }
  // The bytes a call's GB/s counts (counted_bytes): the elements and the offsets read once plus
  // the results written.
  double bytes() const { return static_cast<double>(counted_bytes(n, segments, red::size_of(host.dtype))); }
};

// "| <first> | uniform, mean 32 | ... |" and its rule, "|<rule>---:|...|".
inline void print_shape_header(const char* first, const char* rule) {
  std::printf(*first ? "| %s |" : "|%s |", first);
  for (const ExperimentShape& s : kExperimentShapes) std::printf(" %s, mean %zu |", s.name, s.mean);
  std::printf("\n|%s", rule);
  for (std::size_t i = 0; i < std::size(kExperimentShapes); ++i) std::printf("---:|");
  std::printf("\n");
}

}  // namespace ch12
