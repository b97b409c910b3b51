#include "timing.hpp"

#include <algorithm>
#include <vector>

namespace red {

namespace {
class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};
}  // namespace

Timing time_on_stream(const std::function<void()>& call, cudaStream_t stream, const TimingConfig& cfg) {
  for (int i = 0; i < cfg.warmup; ++i) call();
  CUDA_CHECK(cudaStreamSynchronize(stream));

  Event start, stop;
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(std::max(cfg.repetitions, 1)));
  for (int r = 0; r < std::max(cfg.repetitions, 1); ++r) {
    if (cfg.scrubber) cfg.scrubber->scrub(stream);
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    call();
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    us.push_back(1e3 * ms);
  }
  std::sort(us.begin(), us.end());
  Timing t;
  t.repetitions = static_cast<int>(us.size());
  std::size_t m = us.size() / 2;
  t.median_us = us.size() % 2 ? us[m] : 0.5 * (us[m - 1] + us[m]);
  return t;
}

}  // namespace red
