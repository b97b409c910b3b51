#include "harness.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <new>
#include <sstream>

#include "command_line.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "json_report.hpp"
#include "reference.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace red {

namespace {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A count (command_line.hpp's why_not_count), refused with the flag's name.
std::size_t parse_count(const std::string& flag, const std::string& text, std::size_t least = 0,
                        std::size_t most = std::numeric_limits<std::size_t>::max()) {
  std::size_t value = 0;
  if (const std::string why = why_not_count(text, least, most, value); !why.empty()) throw UsageError(flag + ": " + why);
  return value;
}

std::string supported_list(const Chapter& ch) {
  std::string s;
  for (const OpDType& p : ch.support)
    s += (s.empty() ? "" : ", ") + std::string(name(p.op)) + "/" + std::string(name(p.dtype));
  return s;
}

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  return buf;
}

std::string value_text(double v, std::int64_t iv, bool integer) {
  if (integer) return std::to_string(iv);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

ParseResult parse_options(const Chapter& ch, const std::vector<std::string>& args, std::ostream& out,
                          std::ostream& err) {
  Options opt;
  // The default op is sum, or the chapter's own when it has no sum (08: dot).
  std::string n_text, dtype_text = "f32", dist_text = "normal", seed_text = "1", offset_text = "0", repeat_text = "20";
  std::string op_text(ch.supports(Op::sum, DType::f32) || ch.support.empty() ? "sum" : name(ch.support.front().op));
  CLI::App app{ch.name + ": " + ch.summary, ch.name};
  app.add_option("--n", n_text, "number of elements (default 2^24, or the file's element count)");
  app.add_option("--dtype", dtype_text, "element type: f16 bf16 f32 f64 u8 i32 i64 (default f32)");
  app.add_option("--op", op_text, "operator: sum max min argmax dot (default " + op_text + ")");
  app.add_option("--dist", dist_text, "generated input: uniform normal ints constant signs negative (default normal)");
  app.add_option("--seed", seed_text, "seed of the generated input (default 1)");
  app.add_option("--input", opt.input_file, "raw little-endian array of the dtype to reduce instead of generated data");
  app.add_option("--input2", opt.input2_file, "dot only: the second vector, a raw file like --input");
  app.add_option("--offset", offset_text, "start the data K elements past an aligned allocation (0-255)");
  app.add_option("--repeat", repeat_text, "timed calls, back to back and one at a time; medians are reported (default 20)");
  app.add_flag("--json", opt.json, "print one JSON object on one line");
  app.footer("Supported op/dtype pairs: " + supported_list(ch) +
             "\nExit codes: 0 check passed, 1 check failed, 2 bad input, 3 no GPU, 4 CUDA error.");

  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes from the back
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return {std::nullopt, kExitPassed};
  } catch (const CLI::ParseError& e) {
    err << ch.name << ": error: " << e.what() << " (see --help)\n";
    return {std::nullopt, kExitUsage};
  }

  try {
    auto dtype = parse_dtype(dtype_text);
    if (!dtype) throw UsageError("--dtype: unknown dtype '" + dtype_text + "' (f16 bf16 f32 f64 u8 i32 i64)");
    auto op = parse_op(op_text);
    if (!op && is_custom_op(op_text))
      throw UsageError("--op " + op_text + ": an operator of chapter 13_custom_ops, which its own program 13_custom_ops "
                       "takes; " + ch.name + " takes sum max min argmax dot");
    if (!op) throw UsageError("--op: unknown operator '" + op_text + "' (sum max min argmax dot)");
    auto dist = parse_dist(dist_text);
    if (!dist)
      throw UsageError("--dist: unknown distribution '" + dist_text +
                       "' (uniform normal ints constant signs negative)");
    opt.dtype = *dtype;
    opt.op = *op;
    opt.dist = *dist;
    if (!ch.supports(opt.op, opt.dtype))
      throw UsageError(ch.name + " does not support op " + op_text + " on dtype " + dtype_text +
                       "; it supports: " + supported_list(ch));
    opt.seed = parse_count("--seed", seed_text);
    opt.offset = parse_count("--offset", offset_text, 0, kMaxOffset);
    opt.repeat = static_cast<int>(parse_count("--repeat", repeat_text, 1, 100000));
    opt.n_given = !n_text.empty();
    if (opt.n_given) opt.n = parse_count("--n", n_text);
    if (opt.op != Op::dot && !opt.input2_file.empty())
      throw UsageError("--input2: only a dot product reads a second vector (--op dot)");
    if (opt.op == Op::dot && opt.input_file.empty() != opt.input2_file.empty())
      throw UsageError("--op dot reads two vectors: give both --input and --input2, or neither");
    std::size_t first_count = 0;
    for (const std::string* file : {&opt.input_file, &opt.input2_file}) {
      if (file->empty()) continue;
      const std::size_t available = raw_element_count(*file, opt.dtype);  // throws on a bad file
      if (file == &opt.input_file) first_count = available;
      if (!opt.n_given && available != first_count)
        throw UsageError("--input2: '" + *file + "' holds " + std::to_string(available) + " elements, '" +
                         opt.input_file + "' " + std::to_string(first_count) + "; pass --n to use a common prefix");
      if (!opt.n_given) opt.n = available;
      if (opt.n > available)
        throw UsageError("--n: " + std::to_string(opt.n) + " is beyond the " + std::to_string(available) +
                         " elements in '" + *file + "'");
    }
    if (opt.n > (std::numeric_limits<std::size_t>::max() >> 4))
      throw UsageError("--n: " + std::to_string(opt.n) + " elements cannot be addressed");
  } catch (const std::exception& e) {  // UsageError and the file loader's runtime_error
    err << ch.name << ": error: " << e.what() << "\n";
    return {std::nullopt, kExitUsage};
  }
  return {opt, kExitPassed};
}

struct Program::Run {
  DeviceInfo dev;
  Launcher launcher{};
  bool resident = false;
  CheckOutcome exact;
  HostArray host, host2;
  DeviceInput in, in2;
  std::optional<Workspace> ws;
  ReduceCall call;
  RawResult raw{};
  DeviceResult got;
  Reference ref;
  CheckOutcome chk;
  Timing timing;
};

Program::Program(const Chapter& ch, const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
    : ch_(ch), out_(out), err_(err) {
  ParseResult parsed = parse_options(ch, args, out, err);
  options_ = std::move(parsed.options);
  exit_code_ = parsed.exit_code;
}

Program::Program(const Chapter& ch, int argc, char** argv)
    : Program(ch, std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr) {}

Program::~Program() = default;

Launcher Program::launcher() const { return ch_.launcher(options_->op, options_->dtype); }

ReduceCall Program::call(std::size_t scratch_bytes) {
  const Options& opt = *options_;
  run_ = std::make_unique<Run>();
  Run& r = *run_;
  r.dev = query_device();  // throws NoGpuError without a GPU
  r.launcher = launcher();
  const std::size_t elem = size_of(opt.dtype);
  const std::size_t vectors = opt.op == Op::dot ? 2 : 1;
  r.resident = l2_resident(vectors * opt.n * elem, r.dev);

  const double device_bytes = static_cast<double>(vectors * (opt.offset + opt.n) * elem) +
                              static_cast<double>(scratch_bytes) + kResultBytes +
                              (r.resident ? 0.0 : 2.0 * r.dev.l2_bytes);  // the L2 scrub buffer
  if (device_bytes > static_cast<double>(r.dev.free_memory))
    throw std::invalid_argument("n = " + std::to_string(opt.n) + " " + std::string(name(opt.dtype)) + " needs " +
                                gb(device_bytes) + " of device memory (input, scratch, output); " + r.dev.name +
                                " has " + gb(static_cast<double>(r.dev.free_memory)) + " free");
  const double host_bytes = 1.0 * vectors * opt.n * elem;
  if (const std::string why = why_host_cannot_hold(host_bytes); !why.empty())
    throw std::invalid_argument("n = " + std::to_string(opt.n) + ", the input: " + why);

  // First, on data where every order of additions is exact (its arrays are freed before the
  // reader's input is made): a sum that loses, doubles or zeroes anything fails here.
  r.exact = exact_check(ch_, opt.op, opt.dtype, opt.n, opt.seed);

  r.host = opt.input_file.empty() ? generate(opt.dtype, opt.n, opt.dist, opt.seed)
                                  : load_raw(opt.input_file, opt.dtype, opt.n);
  if (opt.op == Op::dot)
    r.host2 = opt.input2_file.empty() ? generate(opt.dtype, opt.n, opt.dist, opt.seed + 1)
                                      : load_raw(opt.input2_file, opt.dtype, opt.n);
  r.in = upload(r.host, opt.offset);
  if (opt.op == Op::dot) r.in2 = upload(r.host2, opt.offset);
  r.ws.emplace(scratch_bytes, r.launcher.zeroed_scratch_bytes ? r.launcher.zeroed_scratch_bytes() : 0);
  r.ws->output.fill(0xFF);
  r.ws->poison_scratch(0xA5);
  r.call = make_call(opt.op, opt.dtype, r.in.data, opt.n, *r.ws, nullptr, r.in2.data);
  return r.call;
}

void Program::read_result(const ReduceCall& call) {
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(call.stream));
  CUDA_CHECK(cudaMemcpy(run_->raw.data(), call.output, run_->raw.size(), cudaMemcpyDeviceToHost));
}

void Program::check() {
  const Options& opt = *options_;
  Run& r = *run_;
  r.got = decode_result(r.raw, opt.dtype, opt.op);
  r.ref = opt.op == Op::dot ? reference_dot(r.host, r.host2) : reference(r.host, opt.op);
  r.chk = check_result(ch_, r.ref, r.got, opt.dtype, opt.op, opt.n);
}

void Program::time() {
  Run& r = *run_;
  std::optional<L2Scrubber> scrubber;  // cold above the L2 size, hot at or under it (timing.hpp)
  if (!r.resident) scrubber.emplace(r.dev);
  TimingConfig cfg;
  cfg.repetitions = options_->repeat;
  cfg.scrubber = scrubber ? &*scrubber : nullptr;
  r.timing = time_on_stream([&] { r.launcher.launch(r.call); }, r.call.stream, cfg);
  CUDA_CHECK_LAUNCH();
}

int Program::report() {
  const Options& opt = *options_;
  const Run& r = *run_;
  const DeviceInfo& dev = r.dev;
  const DeviceResult& got = r.got;
  const Reference& ref = r.ref;
  const CheckOutcome &chk = r.chk, &exact = r.exact;
  const Timing& t = r.timing;
  std::ostream& out = out_;
  const std::size_t vectors = opt.op == Op::dot ? 2 : 1;
  const double bytes = static_cast<double>(vectors * opt.n * size_of(opt.dtype)) +
                       static_cast<double>(size_of(result_dtype(opt.dtype, opt.op)));
  const double gbps = t.median_us > 0 ? bytes / (t.median_us * 1e3) : 0.0;
  const double pct = dev.dram_gbps > 0 ? 100.0 * gbps / dev.dram_gbps : 0.0;
  const bool integer = !is_floating(result_dtype(opt.dtype, opt.op));
  const bool resident = r.resident;
  const Chapter& ch = ch_;
  if (opt.json) {
    Json j;
    j["chapter"] = ch.name;
    j["device"] = dev.name;
    j["dtype"] = name(opt.dtype);
    j["op"] = name(opt.op);
    j["n"] = opt.n;
    j["offset"] = opt.offset;
    j["result"] = integer ? Json(got.ivalue) : json_number(got.value);
    j["reference"] = integer ? Json(ref.ivalue) : json_number(ref.value);
    if (opt.op == Op::argmax) {
      j["index"] = got.index;
      j["reference_index"] = ref.index;
    }
    j["abs_error"] = json_number(chk.abs_error);
    j["bound"] = json_number(chk.bound);
    j["passed"] = chk.passed;
    j["time_us"] = json_number(t.median_us);
    j["time_p10_us"] = json_number(t.p10_us);
    j["time_p90_us"] = json_number(t.p90_us);
    j["latency_us"] = json_number(t.latency_us);
    j["gbps"] = json_number(gbps);
    j["pct_peak"] = json_number(pct);
    j["exact_check"] = exact.passed;
    j["l2_resident"] = resident;
    out << json_line(j);
  } else {
    char line[256];
    out << "device     " << dev.name << " (" << dev.sm_count << " SMs, L2 " << dev.l2_bytes / (1 << 20)
        << " MiB, theoretical DRAM " << static_cast<long>(dev.dram_gbps) << " GB/s)\n";
    out << "chapter    " << ch.name << "\n";
    out << "input      n = " << opt.n << ", " << name(opt.dtype) << ", "
        << (opt.input_file.empty() ? "dist " + std::string(name(opt.dist)) + ", seed " + std::to_string(opt.seed)
                                   : "file " + opt.input_file + (opt.op == Op::dot ? " and " + opt.input2_file : ""))
        << ", offset " << opt.offset << "\n";
    out << "op         " << name(opt.op) << "\n";
    out << "result     " << value_text(got.value, got.ivalue, integer)
        << (opt.op == Op::argmax ? " at index " + std::to_string(got.index) : "") << "\n";
    out << "reference  " << value_text(ref.value, ref.ivalue, integer)
        << (opt.op == Op::argmax ? " at index " + std::to_string(ref.index) : "") << "\n";
    std::snprintf(line, sizeof line, "error      %.3g (bound %.3g)\n", chk.abs_error, chk.bound);
    out << line;
    out << "check      " << (chk.passed ? "PASS" : "FAIL: " + chk.why) << "\n";
    if (opt.op == Op::sum || opt.op == Op::dot)
      out << "exact data " << (exact.passed ? "PASS" : "FAIL: " + exact.why)
          << " (the same n of small integers: every order of additions is exact)\n";
    std::snprintf(line, sizeof line,
                  "time       %.2f us per call, calls back to back (median of %d; p10 %.2f, p90 %.2f)\n",
                  t.median_us, t.repetitions, t.p10_us, t.p90_us);
    out << line;
    std::snprintf(line, sizeof line, "latency    %.2f us for one call from idle, host dispatch included (median)\n",
                  t.latency_us);
    out << line;
    std::snprintf(line, sizeof line, "bandwidth  %.1f GB/s = %.1f%% of theoretical DRAM bandwidth, back to back%s\n",
                  gbps, pct,
                  resident ? " (input fits in L2: L2-resident, measured hot)"
                           : " (input larger than L2: measured cold, L2 cleared before every call)");
    out << line;
  }
  if (t.batches_released_late > 0)
    err_ << ch.name << ": warning: the host did not queue " << t.batches_released_late
        << " batch(es) of calls in time; the back-to-back time may include host work\n";
  if (!chk.passed) err_ << ch.name << ": check failed: " << chk.why << "\n";
  if (!exact.passed) err_ << ch.name << ": exact-data check failed: " << exact.why << "\n";
  return chk.passed && exact.passed ? kExitPassed : kExitCheckFailed;
}

int Program::failed() {
  try {
    throw;
  } catch (const NoGpuError& e) {
    err_ << ch_.name << ": error: " << e.what()
         << ". This program needs an NVIDIA GPU; results/h200/ holds the published H200 figures.\n";
    return exit_code_ = kExitNoGpu;
  } catch (const CudaError& e) {
    err_ << ch_.name << ": CUDA error: " << e.what() << "\n";
    return exit_code_ = kExitCudaError;
  } catch (const std::bad_alloc&) {
    err_ << ch_.name << ": error: out of host memory\n";
    return exit_code_ = kExitUsage;
  } catch (const std::exception& e) {
    err_ << ch_.name << ": error: " << e.what() << "\n";
    return exit_code_ = kExitUsage;
  }
}

int chapter_main(const Chapter& ch, const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Program program(ch, args, out, err);
  if (program.stopped()) return program.exit_code();
  try {
    const Launcher lesson = program.launcher();
    const ReduceCall call = program.call(lesson.scratch_bytes(program.n()));
    lesson.launch(call);
    program.read_result(call);
    program.check();
    program.time();
    return program.report();
  } catch (...) {
    return program.failed();
  }
}

}  // namespace red
