#include "bench.hpp"

#include <benchmark/benchmark.h>
#include <cuda_profiler_api.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>

#include "device_info.hpp"
#include "inputs.hpp"
#include "progress.hpp"
#include "reference.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace red::bench {

namespace {

const DeviceInfo& device() {
  static const DeviceInfo dev = query_device();
  return dev;
}

// The most recent input on the device, reused while consecutive benchmarks ask for the same one.
struct CachedInput {
  DType dtype;
  std::size_t n;
  std::size_t offset;  // of dev, in elements past an aligned allocation
  HostArray host, host2;  // host2: the second vector of a dot product
  DeviceInput dev, dev2;
  std::map<Op, Reference> references;
};
std::unique_ptr<CachedInput>& cache() {
  static std::unique_ptr<CachedInput> c;
  return c;
}

CachedInput& input_for(DType t, std::size_t n, std::size_t offset) {
  auto& c = cache();
  if (!c || c->dtype != t || c->n != n) {
    c.reset();  // free the previous input first: large inputs do not fit twice
    auto fresh = std::make_unique<CachedInput>();
    fresh->dtype = t;
    fresh->n = n;
    // uniform data: a sum of n such values never overflows. Values may repeat (ties in max and
    // argmax); the chapters and the reference break them alike, by the smallest index.
    fresh->host = generate(t, n, Dist::uniform, 0xBE4C4 + n);
    fresh->offset = offset;
    fresh->dev = upload(fresh->host, offset);
    c = std::move(fresh);
  } else if (c->offset != offset) {  // the same data at another address: the references still hold
    c->dev = DeviceInput{};
    c->offset = offset;
    c->dev = upload(c->host, offset);
  }
  return *c;
}

// --- progress: every case prints, as it starts, how far along the run is and the time left -------

struct Planned {
  std::string label;
  double weight;
};
std::vector<Planned>& planned() {
  static std::vector<Planned> p;
  return p;
}
struct RunProgress {
  std::optional<Progress> progress;
  std::map<std::string, std::size_t> index;  // label -> position among the cases that will run
  std::chrono::steady_clock::time_point start;
};
RunProgress& run_progress() {
  static RunProgress r;
  return r;
}

// Google Benchmark's --benchmark_filter: a regular expression searched in the name; "" and "all"
// select everything, a leading '-' negates.
bool selected(const std::string& filter, const std::string& label) {
  if (filter.empty() || filter == "all") return true;
  const bool negate = filter[0] == '-';
  try {
    const bool hit = std::regex_search(label, std::regex(negate ? filter.substr(1) : filter));
    return hit != negate;
  } catch (const std::regex_error&) {
    return true;  // Google Benchmark reports a bad filter itself
  }
}

void announce(const std::string& label) {
  RunProgress& r = run_progress();
  if (!r.progress) return;
  auto it = r.index.find(label);
  if (it == r.index.end()) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
  std::fprintf(stderr, "%s  %s\n", r.progress->starting(it->second, elapsed).c_str(), label.c_str());
  std::fflush(stderr);
}

bool& profile_mode() {
  static bool on = false;
  return on;
}

// One call inside the profiler's range, after L2 has been emptied of the input if the timing
// would measure it cold. The range opens with a marker kernel whose grid size is the case's
// ordinal, printed with its label, so a profile of many cases splits into cases
// (scripts/profile_kernels.sh).
void profile_one_call(const Chapter& ch, const ReduceCall& call, bool resident, const std::string& label) {
  static int ordinal = 0;
  ++ordinal;
  std::printf("profile case %d: %s\n", ordinal, label.c_str());
  std::fflush(stdout);
  if (!resident) L2Scrubber(device()).scrub(nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaProfilerStart());
  mark_profiled_case(ordinal, nullptr);
  ch.launch(call);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaProfilerStop());
}

// Enough repetitions for a stable median: about 0.1 s of timed calls or more per case at large
// sizes (a 4 GiB f32 sum takes about 1 ms on the H200), far more at small ones. Each repetition
// is one steady-state sample and one one-call sample (timing.hpp).
int repetitions_for(std::size_t bytes) {
  if (bytes <= (std::size_t{64} << 20)) return 200;
  if (bytes <= (std::size_t{1} << 30)) return 100;
  return 60;
}

// The counters of one row (bench.hpp lists them): what was measured, and the timing's figures.
void set_counters(benchmark::State& state, const Timing& t, double n, double bytes, double gbps, double pct_peak,
                  bool resident, int reps) {
  state.counters["n"] = n;
  state.counters["bytes"] = bytes;
  state.counters["time_us"] = t.median_us;  // steady state: the median call of calls queued back to back
  state.counters["time_p10_us"] = t.p10_us;
  state.counters["time_p90_us"] = t.p90_us;
  state.counters["latency_us"] = t.latency_us;  // one call from idle, host dispatch included
  state.counters["gbps"] = gbps;
  state.counters["pct_peak"] = pct_peak;
  state.counters["l2_resident"] = resident ? 1 : 0;
  state.counters["reps"] = reps;
  if (t.back_to_back_us > 0) state.counters["b2b_us"] = t.back_to_back_us;  // a loop of calls
  if (t.graph_us > 0) state.counters["graph_us"] = t.graph_us;              // the same as one graph
}

// Empty when the case's result is right, on its input and on exact data; else why not.
std::string why_wrong(const Chapter& ch, const Case& c, CachedInput& in, const ReduceCall& call, const Workspace& ws) {
  const DeviceResult got = decode_result(run_once(ch, call, ws), c.dtype, c.op);
  if (!in.references.count(c.op))
    in.references[c.op] = c.op == Op::dot ? reference_dot(in.host, in.host2) : reference(in.host, c.op);
  const CheckOutcome chk = check_result(ch, in.references[c.op], got, c.dtype, c.op, c.n);
  if (!chk.passed) return "wrong result: " + chk.why;
  // And on data where every order of additions is exact: no bound can let a wrong sum through.
  const CheckOutcome exact = exact_check(ch, c.op, c.dtype, c.n, 0xE4AC7 + c.n);
  if (!exact.passed) return "wrong result on exact data: " + exact.why;
  return "";
}

void run_case(benchmark::State& state, const Chapter& ch, Case c, const std::string& label) {
  announce(label);
  const DeviceInfo& dev = device();
  CachedInput& in = input_for(c.dtype, c.n, c.offset);
  if (c.op == Op::dot && in.host2.n != c.n) {
    in.host2 = generate(c.dtype, c.n, Dist::uniform, 0xD07 + c.n);
    in.dev2 = upload(in.host2);
  }
  Workspace ws(ch, c.op, c.dtype, c.n);
  const Stream stream;  // not the legacy default stream: the graph timing captures from it
  ReduceCall call = make_call(c.op, c.dtype, in.dev.data, c.n, ws, stream.get(), in.dev2.data);

  // Correctness first: a benchmark of a wrong answer is worthless. (A profile run skips the checks:
  // the benchmark and the tests check the same kernels on the same sizes.)
  if (!profile_mode()) {
    const std::string wrong = why_wrong(ch, c, in, call, ws);
    if (!wrong.empty()) {
      state.SkipWithError(wrong.c_str());
      return;
    }
  }

  const std::size_t input_bytes = c.n * size_of(c.dtype) * (c.op == Op::dot ? 2 : 1);
  const double bytes = static_cast<double>(input_bytes + size_of(result_dtype(c.dtype, c.op)));
  const bool resident = l2_resident(input_bytes, dev);  // one rule with the programs (timing.hpp)
  if (profile_mode()) {
    for (auto _ : state) {
      profile_one_call(ch, call, resident, label);
      state.SetIterationTime(1e-6);  // nothing timed: Google Benchmark needs a value
    }
    return;
  }
  std::optional<L2Scrubber> scrubber;
  if (!resident) scrubber.emplace(dev);
  TimingConfig cfg;
  cfg.repetitions = repetitions_for(input_bytes);
  cfg.scrubber = scrubber ? &*scrubber : nullptr;
  cfg.back_to_back = resident;  // larger inputs would be read hot in a loop: the cold figure stands
  Timing t{};
  for (auto _ : state) {
    t = time_on_stream([&] { ch.launch(call); }, stream.get(), cfg);
    state.SetIterationTime(t.median_us * 1e-6);
  }
  CUDA_CHECK_LAUNCH();
  if (t.batches_released_late > 0) {  // the steady-state figure would hold host time: not published
    state.SkipWithError("timing: the host did not queue a batch of calls before its hold ran out");
    return;
  }
  const double gbps = bytes / (t.median_us * 1e3);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  set_counters(state, t, static_cast<double>(c.n), bytes, gbps, 100.0 * gbps / dev.dram_gbps, resident,
               cfg.repetitions);
  // What the kernel is, beside its name (chapter.hpp, BenchInfo); a misaligned start is a variant
  // of the kernel that reads it.
  if (c.offset > 0) {
    state.SetLabel("variant of " + ch.kernel_name(c.op, c.dtype));
    state.counters["param_offset"] = static_cast<double>(c.offset);
  } else if (!ch.bench_info.variant_of.empty()) {
    state.SetLabel("variant of " + ch.bench_info.variant_of);
  }
  for (const auto& [key, value] : ch.bench_info.params) state.counters["param_" + key] = value;
}

}  // namespace

void register_chapter(const Chapter& ch, const std::vector<Case>& cases) {
  static std::set<std::string> registered;  // a case asked for twice (two groups of rows meet) runs once
  for (const Case& c : cases) {
    if (!ch.supports(c.op, c.dtype)) continue;
    const std::string kernel =
        ch.kernel_name(c.op, c.dtype) + (c.offset > 0 ? "_offset" + std::to_string(c.offset) : std::string());
    std::string label = ch.name + "/" + kernel + "/" + std::string(name(c.op)) + "/" + std::string(name(c.dtype)) +
                        "/" + std::to_string(c.n);
    if (!registered.insert(label).second) continue;
    // The progress weight: the bytes the case reads, plus a fixed 256 MB for its setup (input
    // generation, the reference, warm-up), so that many small cases are not counted as free.
    const double bytes = static_cast<double>(c.n * size_of(c.dtype) * (c.op == Op::dot ? 2 : 1));
    planned().push_back({label, bytes + 256e6});
    benchmark::RegisterBenchmark(label.c_str(), [&ch, c, label](benchmark::State& s) { run_case(s, ch, c, label); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
}

void register_timed(const std::string& label, double planned_bytes, std::function<TimedCase(cudaStream_t)> prepare) {
  planned().push_back({label, planned_bytes + 256e6});
  benchmark::RegisterBenchmark(
      label.c_str(),
      [label, prepare](benchmark::State& state) {
        announce(label);
        if (profile_mode()) {  // the profile covers the flat chapters' kernels only
          for (auto _ : state) state.SetIterationTime(1e-6);
          return;
        }
        const DeviceInfo& dev = device();
        const Stream stream;
        const TimedCase tc = prepare(stream.get());
        if (!tc.wrong.empty()) {
          state.SkipWithError(("wrong result: " + tc.wrong).c_str());
          return;
        }
        const std::size_t read = static_cast<std::size_t>(tc.bytes);
        const bool resident = l2_resident(read, dev);
        std::optional<L2Scrubber> scrubber;
        if (!resident) scrubber.emplace(dev);
        TimingConfig cfg;
        cfg.repetitions = tc.repetitions > 0 ? tc.repetitions : repetitions_for(read);
        cfg.scrubber = scrubber ? &*scrubber : nullptr;
        cfg.back_to_back = resident;
        Timing t{};
        for (auto _ : state) {
          t = time_on_stream(tc.call, stream.get(), cfg);
          state.SetIterationTime(t.median_us * 1e-6);
        }
        CUDA_CHECK_LAUNCH();
        if (t.batches_released_late > 0) {
          state.SkipWithError("timing: the host did not queue a batch of calls before its hold ran out");
          return;
        }
        const double gbps = tc.reads_known ? tc.bytes / (t.median_us * 1e3) : 0.0;
        if (tc.reads_known) state.SetBytesProcessed(static_cast<std::int64_t>(tc.bytes));
        set_counters(state, t, tc.elements, tc.bytes, gbps, 100.0 * gbps / dev.dram_gbps, resident, cfg.repetitions);
        if (!tc.reads_known) state.counters["reads_unknown"] = 1;
        if (!tc.variant_of.empty()) state.SetLabel("variant of " + tc.variant_of);
        for (const auto& [key, value] : tc.counters) state.counters[key] = value;
      })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMicrosecond);
}

void register_floor() {
  const std::string label = "floor/empty_kernel/none/none/0";
  planned().push_back({label, 256e6});
  benchmark::RegisterBenchmark(
      label.c_str(),
      [label](benchmark::State& state) {
        announce(label);
        if (profile_mode()) {  // nothing of a chapter to profile
          for (auto _ : state) state.SetIterationTime(1e-6);
          return;
        }
        const Stream stream;
        TimingConfig cfg;
        cfg.repetitions = repetitions_for(0);
        cfg.back_to_back = true;
        Timing t{};
        for (auto _ : state) {
          t = time_on_stream([&] { launch_empty_kernel(stream.get()); }, stream.get(), cfg);
          state.SetIterationTime(t.median_us * 1e-6);
        }
        if (t.batches_released_late > 0) {
          state.SkipWithError("timing: the host did not queue a batch before its hold ran out");
          return;
        }
        set_counters(state, t, 0, 0, 0, 0, true, cfg.repetitions);
      })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMicrosecond);
}

void set_profile_mode(bool on) { profile_mode() = on; }

void start_progress() {
  RunProgress& r = run_progress();
  const std::string filter = benchmark::GetBenchmarkFilter();
  std::vector<double> weights;
  for (const Planned& p : planned())
    if (selected(filter, p.label) && !r.index.count(p.label)) {
      r.index[p.label] = weights.size();
      weights.push_back(p.weight);
    }
  r.progress.emplace(std::move(weights));
  r.start = std::chrono::steady_clock::now();
}

}  // namespace red::bench
