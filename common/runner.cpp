#include "runner.hpp"

#include <cstring>

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

RawResult run_once(const Chapter& ch, const ReduceCall& call, const Workspace& ws) {
  ws.output.fill(0xFF, call.stream);
  ws.scratch.fill(0xA5, call.stream);
  ch.launch(call);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(call.stream));
  RawResult raw{};
  CUDA_CHECK(cudaMemcpy(raw.data(), ws.output.get(), raw.size(), cudaMemcpyDeviceToHost));
  return raw;
}

}  // namespace red
