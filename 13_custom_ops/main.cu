// 13_custom_ops: one reduction with one of the chapter's operators, checked and timed.
//
//   13_custom_ops [--op NAME] [--n N] [--dist D] [--true-at start|middle|end|none]
//                 [--kernel automatic|reordering|ordered|votes|early_exit] [--seed S]
//                 [--input FILE] [--output FILE] [--repeat R] [--json]
//
// Operators (common/dtype.hpp, kCustomOpNames): argmin, minmax, product, log_product,
// scaled_product, lse, lse_naive, mean_variance, mean_variance_naive and sum_of_squares over f32;
// any and all over bytes; affine over (a, b) pairs of floats (a non-commutative composition).
// Generated data (--dist): normal N(0, 1), uniform [0, 1), shifted 10^4 + N(0, 1), near100
// [95, 105), around_one [0.5, 2) with every 7th negated, near_one 1 + N(0, 10^-4) (a product that
// stays in float's range); bytes: zeros with a 1 (any) or ones
// with a 0 (all) at --true-at; pairs: a in [0.5, 1), b in [-1, 1). --input reads a raw array of
// the operator's input type instead (its size sets n; --n beside it is refused).
// The kernel: automatic takes the votes for any/all, the ordered kernel for affine and chapter
// 10's (reordering) for the rest; reordering an affine composition is allowed, to show it fail.
// The result is checked against float64 with the bound host_reference.hpp gives; the products,
// the sum of squares and the affine maps are also run once on exact data of the same n, where the
// result must be equal (ExactGate). The report has the result, its error and bound, the verdict,
// the time per call (steady state, common/timing.hpp) and GB/s (the input's bytes); --json prints
// it as one JSON object (common/json_report.hpp), with the verdict as "check" and the float64 value
// of the number checked as "true_value"; --output writes the result's bytes as the operator stores
// them (host_reference.hpp, ResultOf), little-endian.
// The verdict is "pass", "fail", or, for a product whose bound at this n is 10^-4 or more
// (checks.hpp: the float product past n = 1678, the sum of logs past a few hundred factors),
// "unbounded: not checked": its error is reported, unjudged. Such a run exits 5, neither 0 (the
// result was not checked, so it did not pass) nor 1 (nothing was found wrong): its exact-data gate,
// where it has one, passed, and the result is not lost (off by a factor of 2 or more, 0 or of the
// wrong sign), either of which fails it.
// Exit codes: 0 passed, 1 the check failed, 2 bad arguments, 3 no GPU, 4 a CUDA error, 5 not
// checked (unbounded).
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "13_custom_ops/host_reference.hpp"
#include "13_custom_ops/user_op.cuh"
#include "batch_report.hpp"
#include "command_line.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "inputs.hpp"
#include "json_report.hpp"
#include "timing.hpp"

namespace {

using namespace ch13;

struct Options {
  std::string op = "lse", dist = "normal", true_at = "middle", kernel = "automatic", input, output;
  std::size_t n = std::size_t{1} << 24;
  std::uint64_t seed = 1;
  int repeat = 20;
  bool json = false;
};

using Usage = red::BadInput;

// A run whose result could not be checked: a product's bound too loose at this n (main.cu's header).
constexpr int kExitNotChecked = 5;

// The run's verdict: its check's, unless the result is lost or the exact-data gate failed.
enum class Outcome { passed, failed, not_checked };
Outcome outcome_of(const Verdict& v, const GateOutcome& gate) {
  if (v.lost || (gate.ran && !gate.passed)) return Outcome::failed;
  if (!v.bounded) return Outcome::not_checked;
  return v.passed ? Outcome::passed : Outcome::failed;
}
const char* outcome_word(Outcome o) {
  return o == Outcome::passed ? "pass" : o == Outcome::failed ? "fail" : "unbounded: not checked";
}

// The input: from --input (n elements, its size), or generated.
template <class In>
std::vector<In> input_for(const Options& opt, std::size_t n) {
  if (!opt.input.empty()) {
    std::vector<In> x(n);
    std::ifstream f(opt.input, std::ios::binary);
    f.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(n * sizeof(In)));
    if (!f) throw red::FileError("--input: could not read " + std::to_string(n * sizeof(In)) + " bytes of '" + opt.input + "'");
    return x;
  }
  if constexpr (std::is_same_v<In, std::uint8_t>)
    return generate_bytes(opt.op == "all", opt.true_at, n);
  else if constexpr (std::is_same_v<In, float2>)
    return generate_pairs(n, opt.seed);
  else
    return generate_floats(opt.dist, n, opt.seed);
}

// The report: one JSON line, or a few lines of text.
struct Report {
  std::string op, shown;
  const char* kernel;
  std::size_t n;
  Verdict verdict;
  GateOutcome gate;
  Outcome outcome;
  red::TimedCall timed;
};

void print(const Report& r, const red::DeviceInfo& dev, int repeat, bool json) {
  const Verdict& v = r.verdict;
  if (json) {
    red::Json j;
    j["chapter"] = "13_custom_ops";
    j["device"] = dev.name;
    j["op"] = r.op;
    j["n"] = r.n;
    j["kernel"] = r.kernel;
    j["result"] = v.result;
    j["error"] = red::json_number(v.error);
    j["bound"] = red::json_number(v.bound);
    j["true_value"] = red::json_number(v.want);  // the float64 value of the number checked: p, or ln|p|
    j["bounded"] = v.bounded;
    j["exact_check"] = r.gate.ran ? red::Json(r.gate.passed) : red::Json(nullptr);
    j["check"] = outcome_word(r.outcome);
    j["passed"] = r.outcome == Outcome::passed;
    j["time_us"] = red::json_number(r.timed.timing.median_us);
    j["gbps"] = red::json_number(r.timed.gbps);
    std::fputs(red::json_line(j).c_str(), stdout);
    return;
  }
  std::printf("13_custom_ops on %s: %s of %zu elements, kernel %s\n", dev.name.c_str(), r.op.c_str(), r.n, r.kernel);
  std::printf("  result:   %s\n", r.shown.c_str());
  if (v.bounded)
    std::printf("  checked:  against float64, error %.3g (bound %.3g): %s\n", v.error, v.bound,
                v.passed ? "PASS" : ("FAIL (" + v.why + ")").c_str());
  else
    std::printf("  checked:  against float64, error %.3g: %s (%s)\n", v.error,
                v.lost ? "FAIL" : "unbounded: not checked", v.why.c_str());
  if (r.gate.ran)
    std::printf("  exact:    %s (exact data of the same n: the result must be equal)\n",
                r.gate.passed ? "PASS" : ("FAIL (" + r.gate.why + ")").c_str());
  std::printf("  time:     %.2f us per call (steady state, median of %d), %.1f GB/s\n", r.timed.timing.median_us,
              repeat, r.timed.gbps);
}

// One call of kernel k with operator Op, prepared: the input on the device, the output and the
// scratch allocated, and the chapter's launch function for k. main() makes the call itself; then
// finish() checks it, times it and prints the report.
struct Prepared {
  Call call;
  void (*launch)(const Call&) = nullptr;
  virtual ~Prepared() = default;
  virtual int finish() = 0;  // waits for the call; the check, the time and the report
};

// The launch function for kernel k: ch13::launch (chapter 10's kernel) for a commutative operator,
// launch_reordering_anyway to show a non-commutative one fail there, launch_ordered, launch_votes.
template <class Op>
void (*launch_for(Kernel k))(const Call&) {
  if (k == Kernel::ordered) return &launch_ordered<Op>;
  if (k == Kernel::reordering) {
    if constexpr (Op::kCommutative)
      return &launch<Op>;
    else
      return &launch_reordering_anyway<Op>;
  }
  if constexpr (std::is_same_v<Op, AnyNonzero> || std::is_same_v<Op, AllNonzero>) {
    constexpr bool kAll = std::is_same_v<Op, AllNonzero>;
    return k == Kernel::votes ? &launch_votes<kAll, false> : &launch_votes<kAll, true>;
  }
  throw Usage("the vote kernel reduces bytes with any or all only");
}

template <class Op>
struct PreparedOp : Prepared {
  using In = typename Op::In;
  Options opt;
  Kernel k;
  std::size_t n;
  red::DeviceInfo dev;
  GateOutcome gate;
  std::vector<In> x;
  red::DeviceBuffer input, output, scratch;
  std::optional<red::Stream> stream;  // made once the GPU is known to be there

  PreparedOp(const Options& o, Kernel kernel) : opt(o), k(kernel) {
    // Everything that needs no GPU first: the kernel, the input file, the output file.
    if ((k == Kernel::votes || k == Kernel::votes_early_exit) && !std::is_same_v<In, std::uint8_t>)
      throw Usage("--kernel " + opt.kernel + ": the vote kernel reduces bytes with any or all only");
    n = opt.input.empty() ? opt.n : red::raw_count(opt.input, sizeof(In));
    if (n > (std::size_t{1} << 36)) throw Usage("--input: '" + opt.input + "' holds more than 2^36 elements");
    if (!opt.output.empty()) red::check_writable(opt.output);
    dev = red::query_device();  // NoGpuError without a GPU
    const bool resident = red::l2_resident(n * sizeof(In), dev);
    const std::size_t device_bytes = n * sizeof(In) + scratch_for<Op>(k, n) + red::kResultBytes +
                                     (resident ? 0 : 2 * dev.l2_bytes);  // + the L2 scrub
    if (device_bytes > dev.free_memory)
      throw Usage("n = " + std::to_string(n) + ": the input and scratch need " + std::to_string(device_bytes) +
                  " bytes of device memory, " + std::to_string(dev.free_memory) + " are free");
    // The exact-data gate, on its own input of the same n (freed before the reader's is made).
    if constexpr (ExactGate<Op>::kExists) gate = ExactGate<Op>::run(k, n, opt.seed);

    x = input_for<In>(opt, n);
    input = red::DeviceBuffer(std::max<std::size_t>(1, n * sizeof(In)));
    output = red::DeviceBuffer(red::kResultBytes);
    output.fill(0);  // an operator stores 4 to 16 bytes; all 16 are copied back
    CUDA_CHECK(cudaDeviceSynchronize());  // the fill ran on the default stream, the calls run on their own
    if (n) input.upload(x.data(), n * sizeof(In));
    scratch = red::DeviceBuffer(std::max<std::size_t>(1, scratch_for<Op>(k, n)));
    scratch.zero_prefix(zeroed_for<Op>(k));
    stream.emplace();
    call = Call{input.get(), n, output.get(), scratch.get(), scratch.bytes(), stream->get()};
    launch = launch_for<Op>(k);
  }

  int finish() override {
    stream->sync();
    RawResult raw{};
    output.download(raw.data(), raw.size());
    Report r{opt.op, "", kernel_name(k), n, {}, gate, Outcome::failed, {}};
    r.verdict = verdict_of<Op>(k, x.data(), n, raw, r.shown);
    r.outcome = outcome_of(r.verdict, gate);
    r.timed = red::time_call([&] { launch(call); }, n * sizeof(In), dev, opt.repeat, stream->get());
    if (!opt.output.empty()) red::write_raw(opt.output, raw.data(), ResultOf<Op>::kBytes);
    print(r, dev, opt.repeat, opt.json);
    return r.outcome == Outcome::passed ? red::kExitPassed
           : r.outcome == Outcome::failed ? red::kExitCheckFailed
                                          : kExitNotChecked;
  }
};

std::unique_ptr<Prepared> prepare(const Options& opt, Kernel k) {
  const std::string& op = opt.op;
  if (op == "argmin") return std::make_unique<PreparedOp<ArgMin<float>>>(opt, k);
  if (op == "minmax") return std::make_unique<PreparedOp<MinMax<float>>>(opt, k);
  if (op == "product") return std::make_unique<PreparedOp<Product<float>>>(opt, k);
  if (op == "log_product") return std::make_unique<PreparedOp<LogProduct<float>>>(opt, k);
  if (op == "scaled_product") return std::make_unique<PreparedOp<ScaledProduct<float>>>(opt, k);
  if (op == "any") return std::make_unique<PreparedOp<AnyNonzero>>(opt, k);
  if (op == "all") return std::make_unique<PreparedOp<AllNonzero>>(opt, k);
  if (op == "lse") return std::make_unique<PreparedOp<LogSumExp<float>>>(opt, k);
  if (op == "lse_naive") return std::make_unique<PreparedOp<NaiveLogSumExp<float>>>(opt, k);
  if (op == "mean_variance") return std::make_unique<PreparedOp<MeanVariance<float>>>(opt, k);
  if (op == "mean_variance_naive") return std::make_unique<PreparedOp<NaiveMeanVariance<float>>>(opt, k);
  if (op == "affine") return std::make_unique<PreparedOp<ComposeAffine>>(opt, k);
  return std::make_unique<PreparedOp<user_functors::SumOfSquares>>(opt, k);
}

Kernel kernel_of(const Options& opt) {
  if (opt.kernel == "reordering") return Kernel::reordering;
  if (opt.kernel == "ordered") return Kernel::ordered;
  if (opt.kernel == "votes") return Kernel::votes;
  if (opt.kernel == "early_exit") return Kernel::votes_early_exit;
  const bool bytes = opt.op == "any" || opt.op == "all", pairs = opt.op == "affine";  // automatic
  return bytes ? Kernel::votes : pairs ? Kernel::ordered : Kernel::reordering;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"One reduction with one of chapter 13's operators, checked against float64 and timed.", "13_custom_ops"};
  std::vector<std::string> ops(std::begin(red::kCustomOpNames), std::end(red::kCustomOpNames));
  app.add_option("--op", opt.op, "the operator (default lse)")->check(CLI::IsMember(ops));
  CLI::Option* n_option = red::add_count(app, "--n", opt.n, "elements (default 2^24)", 0, std::size_t{1} << 36);
  app.add_option("--dist", opt.dist, "generated floats: normal, uniform, shifted, near100, around_one, near_one (default normal)")
      ->check(CLI::IsMember({"normal", "uniform", "shifted", "near100", "around_one", "near_one"}));
  app.add_option("--true-at", opt.true_at, "any/all: where the deciding byte is: start, middle, end, none (default middle)")
      ->check(CLI::IsMember({"start", "middle", "end", "none"}));
  app.add_option("--kernel", opt.kernel, "automatic (default), reordering, ordered, votes, early_exit")
      ->check(CLI::IsMember({"automatic", "reordering", "ordered", "votes", "early_exit"}));
  red::add_count(app, "--seed", opt.seed, "generated data's seed (default 1)");
  app.add_option("--input", opt.input, "raw little-endian array of the operator's input type instead of generated data (its size is n)")
      ->excludes(n_option);  // a file sets n: a --n beside it is refused, not ignored
  app.add_option("--output", opt.output, "write the result's bytes, as the operator stores them, to this file");
  red::add_count(app, "--repeat", opt.repeat, "timed calls (default 20)", 1, 100000);
  app.add_flag("--json", opt.json, "one JSON line instead of the report");
  app.footer("Exit codes: 0 passed, 1 the check failed, 2 bad arguments, 3 no GPU, 4 a CUDA error, 5 not checked "
             "(a product whose bound at this n is 10^-4 or more: its error is reported, unjudged).");
  if (const int stop = red::parse_command_line(app, argc, argv); stop >= 0) return stop;
  try {
    const std::unique_ptr<Prepared> run = prepare(opt, kernel_of(opt));  // input, output, scratch
    run->launch(run->call);  // the chapter's launch for the operator and kernel asked for
    return run->finish();
  } catch (...) {
    return red::program_failed("13_custom_ops");  // bad input 2, no GPU 3, a CUDA error 4
  }
}
