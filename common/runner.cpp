#include "runner.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace red {

DeviceInput upload(const HostArray& host, std::size_t offset) {
  DeviceInput d;
  const std::size_t elem = size_of(host.dtype);
  d.buffer = DeviceBuffer((offset + host.n) * elem);
  d.buffer.upload(host.data(), host.size_bytes(), offset * elem);
  d.data = static_cast<const char*>(d.buffer.get()) + offset * elem;
  d.n = host.n;
  return d;
}

HostArray download(const DeviceInput& in, DType t) {
  HostArray h(t, in.n);
  if (in.n > 0) CUDA_CHECK(cudaMemcpy(h.data(), in.data, h.size_bytes(), cudaMemcpyDeviceToHost));
  return h;
}

ReduceCall make_call(Op op, DType t, const void* in, std::size_t n, const Workspace& ws, cudaStream_t stream,
                     const void* in2) {
  ReduceCall c;
  c.op = op;
  c.dtype = t;
  c.input = in;
  c.input2 = in2;
  c.n = n;
  c.output = ws.output.get();
  c.scratch = ws.scratch.get();
  c.scratch_bytes = ws.scratch.bytes();
  c.stream = stream;
  return c;
}

CheckOutcome check_result(const Chapter& ch, const Reference& ref, const DeviceResult& got, DType t, Op op,
                          std::size_t n) {
  double slack = 0.0;
  if ((op == Op::sum || op == Op::dot) && t != DType::f64) {
    const double flt_min = std::numeric_limits<float>::min();
    if (ch.global_float_atomics) slack += 2.0 * flt_min * static_cast<double>(ch.global_float_atomics(n));
    if (op == Op::dot) slack += std::ldexp(static_cast<double>(n), -150);
  }
  return check(ref, got, t, op, ch.sum_depth(n), slack);
}

RawResult run_once(const Chapter& ch, const ReduceCall& call, const Workspace& ws) {
  ws.output.fill(0xFF, call.stream);
  ws.scratch.fill(0xA5, call.stream);
  return launch_and_read(ch, call, ws);
}

RawResult launch_and_read(const Chapter& ch, const ReduceCall& call, const Workspace& ws) {
  ch.launch(call);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(call.stream));
  RawResult raw{};
  CUDA_CHECK(cudaMemcpy(raw.data(), ws.output.get(), raw.size(), cudaMemcpyDeviceToHost));
  return raw;
}

}  // namespace red
