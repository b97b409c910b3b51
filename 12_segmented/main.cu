// 12_segmented: one reduction per segment, segments of any lengths, checked and timed.
//
//   12_segmented [--segments FILE | --segment-dist uniform|heavy [--segment-count N] [--segment-mean M]]
//                [--op sum|max|argmax] [--dtype f32|f16|bf16] [--dist D] [--seed S] [--input FILE]
//                [--strategy automatic|balanced|naive] [--kernels tuned|teaching] [--output FILE]
//                [--repeat R] [--json]
//
// The segments come from a file of segments + 1 little-endian int64 offsets, or are generated
// (uniform lengths by default; heavy: a heavy tail with one segment of half the elements).
// --kernels picks the balanced mapping's kernel: the tuned one (variants.cuh, the default) or the
// lesson's teaching one (reduce.cuh); the naive mapping has one kernel for both.
// Every result is checked against a float64 reference with the chapter's bound; the report gives
// the results checked, the worst error as a fraction of its bound, pass or fail, the time per call
// (steady state, common/timing.hpp) and the GB/s (counted_bytes: the elements and the offsets read
// once, plus the results written); --json prints it as one JSON object (common/json_report.hpp).
// --output writes the results as they came from the GPU: one little-endian float per segment (sum,
// max), or one int32 index into it (argmax). Every argument and file is checked before the GPU is
// looked for and before anything is allocated: generated segments against the limits before any
// offset is drawn (valid by construction), a file's offsets before the input is made, the host
// memory both need before either is. --segments goes with no flag of the generated segments.
// Exit codes: 0 passed, 1 a result failed its check, 2 bad arguments or offsets, 3 no GPU, 4 a CUDA error.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "12_segmented/host_reference.hpp"
#include "batch_report.hpp"
#include "command_line.hpp"
#include "device_info.hpp"
#include "harness.hpp"
#include "inputs.hpp"
#include "json_report.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace {

struct Options {
  std::string segments_file, segment_dist = "uniform";
  std::size_t segment_count = 1 << 20, segment_mean = 32;
  std::string op = "sum", dtype = "f32", dist = "normal", input, output, strategy = "automatic", kernels = "tuned";
  std::uint64_t seed = 1;
  int repeat = 20;
  bool json = false;
};

using Usage = red::BadInput;

std::vector<std::int64_t> read_offsets(const std::string& path) {
  const std::size_t count = red::raw_count(path, sizeof(std::int64_t));  // a regular file of whole int64s
  if (count < 1) throw Usage("--segments: '" + path + "' must hold segments + 1 int64 offsets (it is empty)");
  if (count - 1 >= 0xffffffffu) throw Usage("--segments: '" + path + "' holds more than 2^32 - 2 segments");
  if (const std::string why = red::why_host_cannot_hold(static_cast<double>(count) * sizeof(std::int64_t)); !why.empty())
    throw Usage("--segments: '" + path + "', its offsets: " + why);
  std::vector<std::int64_t> o(count);
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(o.data()), static_cast<std::streamsize>(count * sizeof(std::int64_t)));
  if (!f) throw red::FileError("--segments: '" + path + "' could not be read");
  // A file's offsets can be anything: the last one is the input's n, and each is held to it and to
  // its neighbours (check_offsets names the first that is wrong).
  const std::size_t n = o.back() > 0 ? static_cast<std::size_t>(o.back()) : 0;
  if (const std::string why = ch12::check_offsets(o.data(), count - 1, n); !why.empty())
    throw Usage("--segments: '" + path + "' has bad offsets: " + why);
  return o;
}

// The generated offsets of --segment-count, --segment-mean and --segment-dist, once the arguments
// are known to give segments every call takes (valid by construction: why_not_generated) and
// offsets the host can hold.
std::vector<std::int64_t> generated_offsets(const Options& opt) {
  const ch12::SegmentDist dist = opt.segment_dist == "heavy" ? ch12::SegmentDist::heavy : ch12::SegmentDist::uniform;
  const std::string args = "--segment-count " + std::to_string(opt.segment_count) + " --segment-mean " +
                           std::to_string(opt.segment_mean) + " --segment-dist " + opt.segment_dist;
  if (const std::string why = ch12::why_not_generated(opt.segment_count, opt.segment_mean, dist); !why.empty())
    throw Usage(args + ": " + why);
  if (const std::string why = red::why_host_cannot_hold((opt.segment_count + 1.0) * sizeof(std::int64_t)); !why.empty())
    throw Usage(args + ", the offsets: " + why);
  return ch12::make_offsets(opt.segment_count, opt.segment_mean, dist, opt.seed + 7);
}

// A call made ready from the flags: the offsets and the input on the device, the output and the
// scratch allocated, and the chapter's launch function for it. main() makes the call; finish()
// checks, times and reports it.
struct Run {
  Options opt;
  std::vector<std::int64_t> offsets;
  std::size_t segments = 0, n = 0, counted = 0;
  red::DeviceInfo dev;
  red::HostArray host;
  red::DeviceInput in;
  std::optional<red::Stream> stream;
  std::unique_ptr<ch12::Prepared> prepared;
  ch12::LaunchFn launch = nullptr;

  const ch12::SegmentedCall& call() const { return prepared->call; }
  int finish() const;
};

std::unique_ptr<Run> prepare(const Options& opt) {
  auto r = std::make_unique<Run>();
  r->opt = opt;
  const red::Op op = *red::parse_op(opt.op);  // CLI11 has checked the names
  const red::DType t = *red::parse_dtype(opt.dtype);
  const std::optional<red::Dist> dist = red::parse_dist(opt.dist);
  if (!dist) throw Usage("--dist: unknown distribution '" + opt.dist + "'");
  const ch12::Strategy strategy = opt.strategy == "balanced" ? ch12::Strategy::balanced
                                  : opt.strategy == "naive"  ? ch12::Strategy::naive
                                                             : ch12::Strategy::automatic;
  const ch12::Kernels kernels = opt.kernels == "teaching" ? ch12::Kernels::teaching : ch12::Kernels::tuned;
  // The files first (their sizes and kinds), then the offsets, read or generated.
  const std::size_t available = opt.input.empty() ? 0 : red::raw_element_count(opt.input, t);
  if (!opt.output.empty()) red::check_writable(opt.output);
  const std::vector<std::int64_t>& offsets = r->offsets =
      !opt.segments_file.empty() ? read_offsets(opt.segments_file) : generated_offsets(opt);
  const std::size_t segments = r->segments = offsets.size() - 1;
  // The input: up to the last offset (elements past it belong to no segment).
  const std::size_t n = r->n = static_cast<std::size_t>(offsets.back());
  if (const std::string why = ch12::why_invalid(segments, n); !why.empty()) throw Usage("bad segments: " + why);
  if (!opt.input.empty() && available < n)
    throw Usage("--input: '" + opt.input + "' holds " + std::to_string(available) + " elements, the segments need " +
                std::to_string(n));
  // The host holds the input, and per segment its result and its check's outcome (check_all).
  if (const std::string why = red::why_host_cannot_hold(static_cast<double>(n) * red::size_of(t) +
                                                       segments * (4.0 + sizeof(red::CheckOutcome)));
      !why.empty())
    throw Usage("the segments' " + std::to_string(n) + " elements: " + why);
  const red::DeviceInfo& dev = r->dev = red::query_device();  // NoGpuError without a GPU
  // At most 2^60 elements (why_invalid) of at most 4 bytes and 2^32 offsets: no sum here wraps.
  const std::size_t counted = r->counted = ch12::counted_bytes(n, segments, red::size_of(t));
  const std::size_t need = counted + (red::l2_resident(counted, dev) ? 0 : 2 * dev.l2_bytes);  // + the L2 scrub
  if (need > dev.free_memory)
    throw Usage("the segments need " + std::to_string(need) + " bytes of device memory, " +
                std::to_string(dev.free_memory) + " are free");

  r->host = !opt.input.empty() ? red::load_raw(opt.input, t, n)
                               : red::generate(t, std::max<std::size_t>(n, 1), *dist, opt.seed);
  r->in = red::upload(r->host);
  r->stream.emplace();
  r->prepared = ch12::prepare(op, t, r->in.data, n, offsets, strategy, kernels, r->stream->get());
  r->launch = ch12::launch_for(r->call());
  return r;
}

int Run::finish() const {
  CUDA_CHECK(cudaStreamSynchronize(call().stream));
  const ch12::SegmentedCall& c = call();
  const std::vector<std::byte> got = prepared->results();
  const ch11::BatchCheck check = ch12::check_all(host, c, offsets, prepared->plan, got);

  const red::TimedCall timed = red::time_call([&] { launch(c); }, counted, dev, opt.repeat, stream->get());
  const bool passed = check.failed == 0;
  const std::size_t mean = segments ? n / segments : 0;
  if (!opt.output.empty()) red::write_raw(opt.output, got.data(), got.size());
  if (opt.json) {
    red::Json j;
    j["chapter"] = "12_segmented";
    j["device"] = dev.name;
    j["op"] = opt.op;
    j["dtype"] = opt.dtype;
    j["segments"] = segments;
    j["n"] = n;
    j["strategy"] = ch12::name(prepared->plan.strategy);
    j["kernels"] = ch12::name(prepared->plan.kernels);
    red::add_check_and_time(j, check, timed);
    std::fputs(red::json_line(j).c_str(), stdout);
  } else {
    std::printf("12_segmented on %s: %zu segments of %s, %zu elements (mean length %zu), %s\n", dev.name.c_str(),
                segments, opt.dtype.c_str(), n, mean, opt.op.c_str());
    std::printf("  mapping:   %s (%s kernels)\n", ch12::name(prepared->plan.strategy).c_str(),
                ch12::name(prepared->plan.kernels).c_str());
    red::print_check_and_time(check, timed, opt.repeat);
  }
  return passed ? red::kExitPassed : red::kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"One reduction per segment, segments of any lengths, each checked and timed.", "12_segmented"};
  auto* file = app.add_option("--segments", opt.segments_file, "segments from a file of segments + 1 int64 offsets");
  // The generated segments' flags have no meaning beside a file's: refused together, not ignored.
  app.add_option("--segment-dist", opt.segment_dist, "generated segments: uniform (default) or heavy")
      ->check(CLI::IsMember({"uniform", "heavy"}))
      ->excludes(file);
  red::add_count(app, "--segment-count", opt.segment_count, "generated segments: how many (default 2^20)", 1,
                 std::size_t{1} << 31)
      ->excludes(file);
  red::add_count(app, "--segment-mean", opt.segment_mean, "generated segments: mean length (default 32)", 1,
                 std::size_t{1} << 30)
      ->excludes(file);
  app.add_option("--op", opt.op, "sum, max or argmax (default sum)")->check(CLI::IsMember({"sum", "max", "argmax"}));
  app.add_option("--dtype", opt.dtype, "f32, f16 or bf16 (default f32)")->check(CLI::IsMember({"f32", "f16", "bf16"}));
  app.add_option("--dist", opt.dist, "generated data: normal, uniform, ints, ... (default normal)");
  red::add_count(app, "--seed", opt.seed, "generated data's seed (default 1)");
  app.add_option("--input", opt.input, "raw little-endian array of the dtype instead of generated data");
  app.add_option("--strategy", opt.strategy, "automatic (default: balanced), balanced or naive")
      ->check(CLI::IsMember({"automatic", "balanced", "naive"}));
  app.add_option("--kernels", opt.kernels, "tuned (default) or teaching: the balanced mapping's kernel")
      ->check(CLI::IsMember({"tuned", "teaching"}));
  app.add_option("--output", opt.output, "write the results to this file: a little-endian float (argmax: int32) each");
  red::add_count(app, "--repeat", opt.repeat, "timed calls (default 20)", 1, 100000);
  app.add_flag("--json", opt.json, "one JSON line instead of the report");
  app.footer("Exit codes: 0 passed, 1 a result failed its check, 2 bad arguments or offsets, 3 no GPU, 4 a CUDA error.");
  if (const int stop = red::parse_command_line(app, argc, argv); stop >= 0) return stop;
  try {
    const std::unique_ptr<Run> run = prepare(opt);  // offsets, input, output and scratch on the GPU
    run->launch(run->call());                       // ch12::launch_tuned<Op, T> or ch12::launch<Op, T>
    return run->finish();                           // waits; the check, the time, the report
  } catch (...) {
    return red::program_failed("12_segmented");  // bad input 2, no GPU 3, a CUDA error 4
  }
}
