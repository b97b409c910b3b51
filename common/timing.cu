#include "timing.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <cstdint>
#include <vector>

namespace red {

namespace {

// Reads every 16-byte word of the buffer. The sum is stored only where it equals a value it never
// takes for a zeroed buffer, so the compiler keeps the loads and nothing is written.
__global__ void read_all(const uint4* buffer, std::size_t words, unsigned* sink) {
  unsigned sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 w = __ldcg(buffer + i);  // through L2, which is what it has to fill
    sum += w.x ^ w.y ^ w.z ^ w.w;
  }
  if (sum == 0xFFFFFFFFu) *sink = sum;
}

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds the stream until the host sets *open (mapped host memory), or until timeout_ns has
// passed, which it then records in *late: a host that cannot queue a batch never hangs the GPU.
__global__ void hold_stream(const volatile int* open, int* late, std::uint64_t timeout_ns) {
  const std::uint64_t start = global_ns();
  while (*open == 0) {
    if (global_ns() - start > timeout_ns) {
      *late = 1;
      return;
    }
    __nanosleep(1000);
  }
}

// A pair of ints in pinned host memory the GPU reads and writes directly: [0] open, [1] late.
class HostFlags {
 public:
  HostFlags() {
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), 2 * sizeof(int), cudaHostAllocMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  }
  ~HostFlags() { cudaFreeHost(host_); }
  HostFlags(const HostFlags&) = delete;
  HostFlags& operator=(const HostFlags&) = delete;
  void hold(cudaStream_t stream) {
    host_[0] = host_[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    hold_stream<<<1, 1, 0, stream>>>(device_, device_ + 1, std::uint64_t{2'000'000'000});
    CUDA_CHECK(cudaGetLastError());
  }
  void release() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    reinterpret_cast<volatile int*>(host_)[0] = 1;
  }
  bool was_late() const { return reinterpret_cast<volatile int*>(host_)[1] != 0; }

 private:
  int* host_ = nullptr;
  int* device_ = nullptr;
};

}  // namespace

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const std::size_t i = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

double median(const std::vector<double>& sorted) {
  if (sorted.empty()) return 0;
  const std::size_t m = sorted.size() / 2;
  return sorted.size() % 2 ? sorted[m] : 0.5 * (sorted[m - 1] + sorted[m]);
}

// Does nothing: its grid size is what a profile reads (mark_profiled_case).
__global__ void profile_case_marker() {}

void mark_profiled_case(int ordinal, cudaStream_t stream) {
  profile_case_marker<<<ordinal, 1, 0, stream>>>();
  CUDA_CHECK(cudaGetLastError());
}

__global__ void empty_kernel() {}

void launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  CUDA_CHECK(cudaGetLastError());
}

double elapsed_us(const Event& start, const Event& stop) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return 1e3 * ms;
}

L2Scrubber::L2Scrubber(const DeviceInfo& dev) : buffer_(2 * dev.l2_bytes / 16 * 16), sink_(sizeof(unsigned)) {
  buffer_.fill(0);
  CUDA_CHECK(cudaDeviceSynchronize());  // the memset's dirty lines are written back before any timing
}

void L2Scrubber::scrub(cudaStream_t stream) const {
  const std::size_t words = buffer_.bytes() / 16;
  read_all<<<1024, 256, 0, stream>>>(static_cast<const uint4*>(buffer_.get()), words,
                                     static_cast<unsigned*>(sink_.get()));
  CUDA_CHECK(cudaGetLastError());
}

double back_to_back_us(const std::function<void()>& call, cudaStream_t stream, int calls, bool graph) {
  Event start, stop;
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (int i = 0; i < calls; ++i) call();
    } catch (const std::exception&) {
      // A call that cannot be captured: end the capture, drop its error, report "not measured".
      cudaStreamEndCapture(stream, &g);
      if (g) cudaGraphDestroy(g);
      cudaGetLastError();
      return 0;
    }
    CUDA_CHECK(cudaStreamEndCapture(stream, &g));
    CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
    CUDA_CHECK(cudaGraphDestroy(g));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));  // warm-up: uploads the graph
  } else {
    for (int i = 0; i < 10; ++i) call();
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaEventRecord(start.get(), stream));
  if (graph)
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
  else
    for (int i = 0; i < calls; ++i) call();
  CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  CUDA_CHECK(cudaEventSynchronize(stop.get()));
  if (exec) CUDA_CHECK(cudaGraphExecDestroy(exec));
  return elapsed_us(start, stop) / calls;
}

Timing time_on_stream(const std::function<void()>& call, cudaStream_t stream, const TimingConfig& cfg) {
  const int reps = std::max(cfg.repetitions, 1);
  const int batch = std::max(cfg.batch, 1);
  for (int i = 0; i < cfg.warmup; ++i) call();
  CUDA_CHECK(cudaStreamSynchronize(stream));

  Timing t;
  t.repetitions = reps;
  HostFlags flags;
  std::vector<Event> starts(static_cast<std::size_t>(batch)), stops(static_cast<std::size_t>(batch));
  std::vector<double> steady, latency;
  for (int done = 0; done < reps;) {
    const int calls = std::min(batch, reps - done);
    flags.hold(stream);
    for (int k = 0; k < calls; ++k) {
      if (cfg.scrubber) cfg.scrubber->scrub(stream);
      CUDA_CHECK(cudaEventRecord(starts[k].get(), stream));
      call();
      CUDA_CHECK(cudaEventRecord(stops[k].get(), stream));
    }
    flags.release();
    CUDA_CHECK(cudaEventSynchronize(stops[calls - 1].get()));
    if (flags.was_late()) ++t.batches_released_late;
    for (int k = 0; k < calls; ++k) steady.push_back(elapsed_us(starts[k], stops[k]));
    done += calls;
  }
  Event start, stop;
  for (int r = 0; r < reps; ++r) {
    if (cfg.scrubber) cfg.scrubber->scrub(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));  // idle: the call's host work is inside the events
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    call();
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    latency.push_back(elapsed_us(start, stop));
  }
  std::sort(steady.begin(), steady.end());
  std::sort(latency.begin(), latency.end());
  t.median_us = median(steady);
  t.p10_us = percentile(steady, 0.1);
  t.p90_us = percentile(steady, 0.9);
  t.latency_us = median(latency);
  if (cfg.back_to_back) {
    constexpr int kCalls = 200;
    t.back_to_back_us = back_to_back_us(call, stream, kCalls, false);
    t.graph_us = back_to_back_us(call, stream, kCalls, true);
  }
  return t;
}

}  // namespace red
