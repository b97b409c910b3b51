// reduction_bench --timing-methods: the lead two-pass kernel (07) and CUB's Sum, f32, timed four
// ways in one process, to show that their ratio does not hinge on how the benchmark times them:
//   steady     the benchmark's own figure: calls queued behind a stream hold, events around each
//              call (inputs larger than L2 cold, after the L2 scrub), median
//   loop       200 calls launched back to back between two events, no hold, no scrub: total / 200
//   graph      the same 200 calls captured into one CUDA graph, launched once: total / 200
//   one call   a single call from an idle GPU, the host's dispatch included, median
#include <cstdio>
#include <functional>
#include <optional>
#include <vector>

#include "cuda_check.hpp"
#include "device_info.hpp"
#include "inputs.hpp"
#include "runner.hpp"
#include "suite.hpp"
#include "timing.hpp"

namespace red::bench {

namespace {

constexpr int kCalls = 200;

}  // namespace

void print_timing_methods() {
  const DeviceInfo dev = query_device();
  Stream stream;  // a graph is captured from a stream other than the legacy default one
  const std::vector<const Chapter*> kernels = {&suite::chapter_07(), &suite::chapter_09()};
  std::printf("| n | kernel | steady (us) | loop (us) | graph (us) | one call (us) |\n|---:|---|---:|---:|---:|---:|\n");
  for (std::size_t n : {std::size_t{1} << 20, std::size_t{1} << 24, std::size_t{1} << 28}) {
    const HostArray host = generate(DType::f32, n, Dist::uniform, 0x71AE + n);
    const DeviceInput in = upload(host);
    const bool resident = l2_resident(n * sizeof(float), dev);
    std::optional<L2Scrubber> scrubber;
    if (!resident) scrubber.emplace(dev);
    double steady[2], loop[2], graph[2];
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const Chapter& ch = *kernels[k];
      Workspace ws(ch, Op::sum, DType::f32, n);
      const ReduceCall call = make_call(Op::sum, DType::f32, in.data, n, ws, stream.get());
      auto launch = [&] { ch.launch(call); };
      TimingConfig cfg;
      cfg.repetitions = 100;
      cfg.scrubber = scrubber ? &*scrubber : nullptr;
      const Timing t = time_on_stream(launch, stream.get(), cfg);
      steady[k] = t.median_us;
      loop[k] = back_to_back_us(launch, stream.get(), kCalls, false);
      graph[k] = back_to_back_us(launch, stream.get(), kCalls, true);
      std::printf("| 2^%d | `%s` | %.2f | %.2f | %.2f | %.2f |\n", __builtin_ctzll(n), ch.kernel_name(Op::sum, DType::f32).c_str(),
                  steady[k], loop[k], graph[k], t.latency_us);
    }
    std::printf("| 2^%d | CUB time / 07 time | %.3f | %.3f | %.3f | |\n", __builtin_ctzll(n), steady[1] / steady[0],
                loop[1] / loop[0], graph[1] / graph[0]);
  }
  std::printf("\nsteady: the benchmark's figure (%s); loop: %d calls back to back, total / %d; graph: the same "
              "calls as one CUDA graph; one call: from an idle GPU, host dispatch included. Inputs above L2 "
              "(%zu bytes) are cold in steady only: loop and graph reread them at once.\n",
              "calls queued behind a stream hold, events around each, L2 scrubbed above its size", kCalls, kCalls,
              dev.l2_bytes);
}

}  // namespace red::bench
