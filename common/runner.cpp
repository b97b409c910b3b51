#include "runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace red {

namespace {

constexpr std::size_t kStageBytes = std::size_t{64} << 20;

// Two pinned host buffers of kStageBytes each: one is filled or read by the host while the other's
// copy is in flight on `stream`.
class Staging {
 public:
  Staging() {
    for (auto& b : buffer_) CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&b), kStageBytes));
    for (auto& e : done_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~Staging() {
    for (auto b : buffer_) cudaFreeHost(b);
    for (auto e : done_) cudaEventDestroy(e);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  std::byte* buffer(std::size_t piece) const { return buffer_[piece % 2]; }
  cudaEvent_t done(std::size_t piece) const { return done_[piece % 2]; }
  cudaStream_t stream() const { return stream_.get(); }

 private:
  std::byte* buffer_[2] = {nullptr, nullptr};
  cudaEvent_t done_[2] = {nullptr, nullptr};
  Stream stream_;
};

constexpr std::size_t kBlock = std::size_t{1} << 20;  // the unit of work of the parallel host loops

void parallel_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
  const std::ptrdiff_t blocks = static_cast<std::ptrdiff_t>((bytes + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t b = 0; b < blocks; ++b) {
    const std::size_t at = static_cast<std::size_t>(b) * kBlock;
    std::memcpy(dst + at, src + at, std::min(kBlock, bytes - at));
  }
}

bool parallel_equal(const std::byte* a, const std::byte* b, std::size_t bytes) {
  const std::ptrdiff_t blocks = static_cast<std::ptrdiff_t>((bytes + kBlock - 1) / kBlock);
  bool differ = false;
#pragma omp parallel for schedule(static) reduction(|| : differ)
  for (std::ptrdiff_t k = 0; k < blocks; ++k) {
    const std::size_t at = static_cast<std::size_t>(k) * kBlock;
    differ = differ || std::memcmp(a + at, b + at, std::min(kBlock, bytes - at)) != 0;
  }
  return !differ;
}

void upload_bytes(void* device, const std::byte* host, std::size_t bytes) {
  if (bytes <= kStageBytes) {
    if (bytes == 0) return;
    CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));  // the DMA done, as DeviceBuffer::upload
    return;
  }
  Staging stage;
  for (std::size_t piece = 0, at = 0; at < bytes; ++piece, at += kStageBytes) {
    const std::size_t len = std::min(kStageBytes, bytes - at);
    CUDA_CHECK(cudaEventSynchronize(stage.done(piece)));  // this buffer's previous copy has left
    parallel_copy(stage.buffer(piece), host + at, len);
    CUDA_CHECK(cudaMemcpyAsync(static_cast<std::byte*>(device) + at, stage.buffer(piece), len, cudaMemcpyHostToDevice,
                               stage.stream()));
    CUDA_CHECK(cudaEventRecord(stage.done(piece), stage.stream()));
  }
  CUDA_CHECK(cudaStreamSynchronize(stage.stream()));
}

}  // namespace

DeviceInput upload(const HostArray& host, std::size_t offset) {
  DeviceInput d;
  const std::size_t elem = size_of(host.dtype);
  d.buffer = DeviceBuffer((offset + host.n) * elem);
  d.data = static_cast<const char*>(d.buffer.get()) + offset * elem;
  upload_bytes(const_cast<void*>(d.data), static_cast<const std::byte*>(host.data()), host.size_bytes());
  d.n = host.n;
  return d;
}

bool device_holds(const DeviceInput& in, const HostArray& host) {
  const std::size_t bytes = host.size_bytes();
  if (in.n != host.n) return false;
  if (bytes == 0) return true;
  const auto* device = static_cast<const std::byte*>(in.data);
  const auto* expected = static_cast<const std::byte*>(host.data());
  if (bytes <= kStageBytes) {
    HostArray back = HostArray::uninitialised(host.dtype, host.n);
    CUDA_CHECK(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost));
    return std::memcmp(back.data(), expected, bytes) == 0;
  }
  Staging stage;
  const std::size_t pieces = (bytes + kStageBytes - 1) / kStageBytes;
  auto fetch = [&](std::size_t piece) {
    const std::size_t at = piece * kStageBytes;
    CUDA_CHECK(cudaMemcpyAsync(stage.buffer(piece), device + at, std::min(kStageBytes, bytes - at),
                               cudaMemcpyDeviceToHost, stage.stream()));
    CUDA_CHECK(cudaEventRecord(stage.done(piece), stage.stream()));
  };
  fetch(0);
  bool same = true;
  for (std::size_t piece = 0; piece < pieces; ++piece) {
    if (piece + 1 < pieces) fetch(piece + 1);  // in flight while this piece is compared
    CUDA_CHECK(cudaEventSynchronize(stage.done(piece)));
    const std::size_t at = piece * kStageBytes;
    same = same && parallel_equal(stage.buffer(piece), expected + at, std::min(kStageBytes, bytes - at));
  }
  CUDA_CHECK(cudaStreamSynchronize(stage.stream()));
  return same;
}

Workspace::Workspace(const Chapter& ch, Op op, DType t, std::size_t n)
    : scratch(ch.scratch_bytes(op, t, n)), zeroed(ch.zeroed_scratch_bytes ? ch.zeroed_scratch_bytes(op, t) : 0) {
  if (zeroed > scratch.bytes())
    throw std::logic_error(ch.name + ": zeroed_scratch_bytes exceeds scratch_bytes for n = " + std::to_string(n));
  scratch.zero_prefix(zeroed);
}

Workspace::Workspace(std::size_t scratch_bytes, std::size_t zeroed_bytes) : scratch(scratch_bytes), zeroed(zeroed_bytes) {
  if (zeroed > scratch.bytes()) throw std::logic_error("zeroed scratch bytes exceed the scratch");
  scratch.zero_prefix(zeroed);
}

bool Workspace::zeroed_bytes_are_zero() const { return scratch.prefix_is_zero(zeroed); }

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

CheckOutcome exact_check(const Chapter& ch, Op op, DType t, std::size_t n, std::uint64_t seed) {
  CheckOutcome c;
  c.passed = true;
  if ((op != Op::sum && op != Op::dot) || !is_floating(t) || n == 0) return c;
  const HostArray a = exact_sum_input(t, n, seed);
  const HostArray b = op == Op::dot ? exact_sum_input(t, n, seed + 1) : HostArray{};
  const DeviceInput in = upload(a);
  const DeviceInput in2 = op == Op::dot ? upload(b) : DeviceInput{};
  Workspace ws(ch, op, t, n);
  const DeviceResult got = decode_result(run_once(ch, make_call(op, t, in.data, n, ws, nullptr, in2.data), ws), t, op);
  const Reference ref = op == Op::dot ? reference_dot(a, b) : reference(a, op);
  c.abs_error = std::fabs(got.value - ref.value);
  c.passed = got.value == ref.value;
  if (!c.passed)
    c.why = "on integer data every order of additions is exact: expected " + std::to_string(ref.value) + ", got " +
            std::to_string(got.value);
  return c;
}

RawResult run_once(const Chapter& ch, const ReduceCall& call, const Workspace& ws) {
  ws.output.fill(0xFF, call.stream);
  ws.poison_scratch(0xA5, call.stream);
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
