// Running a chapter once on the device: the few steps the harness, the tests and the benchmark
// share (upload with an offset, allocate output and scratch, poison, launch, read back).
#pragma once

#include <cstddef>

#include "chapter.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "reference.hpp"

namespace red {

// Device copy of an input whose first element sits `offset` elements past a 256-byte aligned
// allocation (offset > 0 gives the misaligned starts a real caller may pass).
struct DeviceInput {
  DeviceBuffer buffer;
  const void* data = nullptr;
  std::size_t n = 0;
};
// Inputs over 64 MiB travel through pinned staging buffers, filled on all cores while the
// previous piece is in flight: a 2^31-element input uploads in about a second, not ten.
DeviceInput upload(const HostArray& host, std::size_t offset = 0);
// Whether the device input still holds exactly the bytes of `host` (tests use it to prove the
// input was not written). Read back piece by piece, so no second host copy of a large input.
bool device_holds(const DeviceInput& in, const HostArray& host);

// Output and scratch for one chapter call, sized by the chapter for (op, dtype, n). The scratch's
// first ch.zeroed_scratch_bytes(op, dtype) are zeroed here, once (chapter.hpp); nothing else
// touches them.
struct Workspace {
  DeviceBuffer output{kResultBytes};
  DeviceBuffer scratch;
  std::size_t zeroed = 0;
  Workspace(const Chapter& ch, Op op, DType t, std::size_t n);
  // `scratch_bytes` of scratch whose first `zeroed_bytes` are zeroed.
  Workspace(std::size_t scratch_bytes, std::size_t zeroed_bytes);
  // Poisons the scratch with `byte_value`, all but the zeroed bytes, on `stream`.
  void poison_scratch(int byte_value, cudaStream_t stream = nullptr) const { scratch.fill(byte_value, stream, zeroed); }
  // Whether the zeroed bytes are still all zero (waits for the device).
  bool zeroed_bytes_are_zero() const;
};

ReduceCall make_call(Op op, DType t, const void* in, std::size_t n, const Workspace& ws, cudaStream_t stream,
                     const void* in2 = nullptr);

// check() with the chapter's own rounding depth for n, plus the losses to underflow a relative
// bound cannot cover, for f32 accumulation: 2 FLT_MIN per global f32 atomicAdd (they flush
// subnormals, see Chapter::global_float_atomics), and for a dot product 2^-150 per element (a
// product or FMA whose result is subnormal rounds to the subnormal grid, an absolute error).
CheckOutcome check_result(const Chapter& ch, const Reference& ref, const DeviceResult& got, DType t, Op op,
                          std::size_t n);

// The gate a bound cannot give: the chapter's sum (or dot product) of exact_sum_input data of the
// same n and dtype, compared for equality with the exact answer. For max, min, argmax and integer
// sums, whose ordinary check is already exact, it passes without running.
CheckOutcome exact_check(const Chapter& ch, Op op, DType t, std::size_t n, std::uint64_t seed);

// Poisons output (0xFF bytes: NaN for floats, -1 for integers) and scratch (0xA5; not its zeroed
// bytes, chapter.hpp) so nothing stale or unwritten can pass, launches, waits, and returns the result bytes.
RawResult run_once(const Chapter& ch, const ReduceCall& call, const Workspace& ws);

// Launches, waits for the call's stream and returns the result bytes, touching nothing before:
// for tests that prepare output and scratch themselves (or leave them as the last call left them).
RawResult launch_and_read(const Chapter& ch, const ReduceCall& call, const Workspace& ws);

}  // namespace red
