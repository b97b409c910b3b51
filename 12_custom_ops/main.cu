// 12_custom_ops: one reduction with one of the chapter's operators, checked and timed.
//
//   12_custom_ops [--op NAME] [--n N] [--dist D] [--true-at start|middle|end|none]
//                 [--kernel automatic|reordering|ordered|votes|early_exit] [--seed S]
//                 [--input FILE] [--repeat R] [--json]
//
// Operators (common/dtype.hpp, kCustomOpNames): argmin, minmax, product, log_product,
// scaled_product, lse, lse_naive, mean_variance, mean_variance_naive and sum_of_squares over f32;
// any and all over bytes; affine over (a, b) pairs of floats (a non-commutative composition).
// Generated data (--dist): normal N(0, 1), uniform [0, 1), shifted 10^4 + N(0, 1), near100
// [95, 105), around_one [0.5, 2) with every 7th negated, near_one 1 + N(0, 10^-4) (a product that
// stays in float's range); bytes: zeros with a 1 (any) or ones
// with a 0 (all) at --true-at; pairs: a in [0.5, 1), b in [-1, 1). --input reads a raw array of
// the operator's input type instead.
// The kernel: automatic takes the votes for any/all, the ordered kernel for affine and chapter
// 10's (reordering) for the rest; reordering an affine composition is allowed, to show it fail.
// The result is checked against float64 with the bound host_reference.hpp gives; the report has
// the result, its error and bound, pass or fail, the time per call (steady state,
// common/timing.hpp) and GB/s (the input's bytes).
// Exit codes: 0 passed, 1 the check failed, 2 bad arguments, 3 no GPU, 4 a CUDA error.
#include <cstdio>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "12_custom_ops/host_reference.hpp"
#include "12_custom_ops/user_op.cuh"
#include "command_line.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "timing.hpp"

namespace {

using namespace ch12;

struct Options {
  std::string op = "lse", dist = "normal", true_at = "middle", kernel = "automatic", input;
  std::size_t n = std::size_t{1} << 24;
  std::uint64_t seed = 1;
  int repeat = 20;
  bool json = false;
};

using Usage = red::BadInput;

// The input: from --input, or generated.
template <class In>
std::vector<In> input_for(const Options& opt) {
  if (!opt.input.empty()) {
    std::ifstream f(opt.input, std::ios::binary | std::ios::ate);
    if (!f) throw Usage("--input: cannot open '" + opt.input + "'");
    const auto bytes = static_cast<std::size_t>(f.tellg());
    if (bytes % sizeof(In) != 0) throw Usage("--input: '" + opt.input + "' is not a whole number of elements");
    std::vector<In> x(bytes / sizeof(In));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(bytes));
    return x;
  }
  if constexpr (std::is_same_v<In, std::uint8_t>)
    return generate_bytes(opt.op == "all", opt.true_at, opt.n);
  else if constexpr (std::is_same_v<In, float2>)
    return generate_pairs(opt.n, opt.seed);
  else
    return generate_floats(opt.dist, opt.n, opt.seed);
}

template <class Op>
int run_op(const Options& opt, Kernel k) {
  using In = typename Op::In;
  if ((k == Kernel::votes || k == Kernel::votes_early_exit) && !std::is_same_v<In, std::uint8_t>)
    throw Usage("--kernel " + opt.kernel + ": the vote kernel reduces bytes with any or all only");
  if (!red::gpu_available()) {
    std::fprintf(stderr, "12_custom_ops: no usable CUDA GPU\n");
    return red::kExitNoGpu;
  }
  const red::DeviceInfo dev = red::query_device();
  if (opt.n * sizeof(In) + scratch_for<Op>(k, opt.n) > dev.free_memory)
    throw Usage("--n " + std::to_string(opt.n) + ": the input needs " + std::to_string(opt.n * sizeof(In)) +
                " bytes of device memory, " + std::to_string(dev.free_memory) + " are free");
  const std::vector<In> x = input_for<In>(opt);
  const std::size_t n = x.size();
  red::DeviceBuffer input(std::max<std::size_t>(1, n * sizeof(In))), output(red::kResultBytes);
  output.fill(0);  // an operator stores 4 to 16 bytes; all 16 are copied back
  CUDA_CHECK(cudaDeviceSynchronize());  // the fill ran on the default stream, the calls run on their own
  if (n) input.upload(x.data(), n * sizeof(In));
  red::DeviceBuffer scratch(std::max<std::size_t>(1, scratch_for<Op>(k, n)));
  scratch.zero_prefix(zeroed_for<Op>(k));
  const red::Stream stream;
  Call c;
  c.input = input.get();
  c.n = n;
  c.output = output.get();
  c.scratch = scratch.get();
  c.scratch_bytes = scratch.bytes();
  c.stream = stream.get();
  launch_with<Op>(k, c);
  stream.sync();
  RawResult raw{};
  output.download(raw.data(), raw.size());
  std::string shown;
  const Verdict v = verdict_of<Op>(k, x.data(), n, raw, shown);

  std::optional<red::L2Scrubber> scrubber;
  if (!red::l2_resident(n * sizeof(In), dev)) scrubber.emplace(dev);
  red::TimingConfig cfg;
  cfg.repetitions = opt.repeat;
  cfg.scrubber = scrubber ? &*scrubber : nullptr;
  const red::Timing timing = red::time_on_stream([&] { launch_with<Op>(k, c); }, stream.get(), cfg);
  const double gbps = n * sizeof(In) / (timing.median_us * 1e3);
  if (opt.json) {
    std::printf("{\"chapter\":\"12_custom_ops\",\"op\":\"%s\",\"n\":%zu,\"kernel\":\"%s\",\"result\":\"%s\",\"error\":%.6g,"
                "\"bound\":%.6g,\"passed\":%s,\"time_us\":%.3f,\"gbps\":%.1f}\n",
                opt.op.c_str(), n, kernel_name(k), shown.c_str(), v.error, v.bound, v.passed ? "true" : "false",
                timing.median_us, gbps);
  } else {
    std::printf("12_custom_ops on %s: %s of %zu elements, kernel %s\n", dev.name.c_str(), opt.op.c_str(), n, kernel_name(k));
    std::printf("  result:   %s\n", shown.c_str());
    std::printf("  checked:  against float64, error %.3g (bound %.3g): %s\n", v.error, v.bound,
                v.passed ? "PASS" : ("FAIL (" + v.why + ")").c_str());
    std::printf("  time:     %.2f us per call (steady state, median of %d), %.1f GB/s\n", timing.median_us, opt.repeat, gbps);
  }
  return v.passed ? red::kExitPassed : red::kExitCheckFailed;
}

int run(const Options& opt) {
  const bool bytes = opt.op == "any" || opt.op == "all", pairs = opt.op == "affine";
  Kernel k = bytes ? Kernel::votes : pairs ? Kernel::ordered : Kernel::reordering;
  if (opt.kernel == "reordering") k = Kernel::reordering;
  if (opt.kernel == "ordered") k = Kernel::ordered;
  if (opt.kernel == "votes") k = Kernel::votes;
  if (opt.kernel == "early_exit") k = Kernel::votes_early_exit;
  if (opt.op == "argmin") return run_op<ArgMin<float>>(opt, k);
  if (opt.op == "minmax") return run_op<MinMax<float>>(opt, k);
  if (opt.op == "product") return run_op<Product<float>>(opt, k);
  if (opt.op == "log_product") return run_op<LogProduct<float>>(opt, k);
  if (opt.op == "scaled_product") return run_op<ScaledProduct<float>>(opt, k);
  if (opt.op == "any") return run_op<AnyNonzero>(opt, k);
  if (opt.op == "all") return run_op<AllNonzero>(opt, k);
  if (opt.op == "lse") return run_op<LogSumExp<float>>(opt, k);
  if (opt.op == "lse_naive") return run_op<NaiveLogSumExp<float>>(opt, k);
  if (opt.op == "mean_variance") return run_op<MeanVariance<float>>(opt, k);
  if (opt.op == "mean_variance_naive") return run_op<NaiveMeanVariance<float>>(opt, k);
  if (opt.op == "affine") return run_op<ComposeAffine>(opt, k);
  return run_op<user_functors::SumOfSquares>(opt, k);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"One reduction with one of chapter 12's operators, checked against float64 and timed.", "12_custom_ops"};
  std::vector<std::string> ops(std::begin(red::kCustomOpNames), std::end(red::kCustomOpNames));
  app.add_option("--op", opt.op, "the operator (default lse)")->check(CLI::IsMember(ops));
  app.add_option("--n", opt.n, "elements (default 2^24)")->check(CLI::Range(std::size_t{0}, std::size_t{1} << 36));
  app.add_option("--dist", opt.dist, "generated floats: normal, uniform, shifted, near100, around_one, near_one (default normal)")
      ->check(CLI::IsMember({"normal", "uniform", "shifted", "near100", "around_one", "near_one"}));
  app.add_option("--true-at", opt.true_at, "any/all: where the deciding byte is: start, middle, end, none (default middle)")
      ->check(CLI::IsMember({"start", "middle", "end", "none"}));
  app.add_option("--kernel", opt.kernel, "automatic (default), reordering, ordered, votes, early_exit")
      ->check(CLI::IsMember({"automatic", "reordering", "ordered", "votes", "early_exit"}));
  app.add_option("--seed", opt.seed, "generated data's seed (default 1)");
  app.add_option("--input", opt.input, "raw little-endian array of the operator's input type instead of generated data");
  app.add_option("--repeat", opt.repeat, "timed calls (default 20)")->check(CLI::Range(1, 100000));
  app.add_flag("--json", opt.json, "one JSON line instead of the report");
  app.footer("Exit codes: 0 passed, 1 the check failed, 2 bad arguments, 3 no GPU, 4 a CUDA error.");
  if (const int stop = red::parse_command_line(app, argc, argv); stop >= 0) return stop;
  return red::run_program("12_custom_ops", [&] { return run(opt); });
}
