// 11_batched: many reductions at once, checked and timed.
//
//   11_batched [--rows B --cols L [--stride S] [--axis 1|0]] [--op sum|max|argmax] [--dtype f32|f16|bf16] [--dist D] [--seed S] [--input FILE]
//              [--strategy NAME] [--kernels tuned|teaching] [--output FILE] [--repeat R] [--json]
//
// Rows (--axis 1, the default) give one result per row, columns (--axis 0) one per column
// (segments of any lengths: 12_segmented). --kernels teaching runs the lesson's teaching kernels
// (reduce.cuh) instead of the tuned ones (variants.cuh), under the same plan of mappings.
// Every result is checked against a float64 reference with the chapter's bound; the report gives
// the results checked, the worst error as a fraction of its bound, pass or fail, the time per call
// (steady state, common/timing.hpp) and the GB/s (counted_bytes: the input read once plus the
// results written); --json prints it as one JSON object (common/json_report.hpp). --output writes
// the results as they came from the GPU: one little-endian float per row or column (sum, max), or
// one int32 index into it (argmax).
// Every argument and file is checked before the GPU is looked for and before anything is
// allocated.
// Exit codes: 0 passed, 1 a result failed its check, 2 bad arguments or shape, 3 no GPU, 4 a CUDA error.
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "11_batched/host_reference.hpp"
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
  std::size_t rows = 65536, cols = 1024, stride = 0;
  int axis = 1;
  std::string op = "sum", dtype = "f32", dist = "normal", input, output, strategy = "automatic", kernels = "tuned";
  std::uint64_t seed = 1;
  int repeat = 20;
  bool json = false;
};

using Usage = red::BadInput;

ch11::Strategy strategy_named(const std::string& s) {
  for (ch11::Strategy k :
       {ch11::Strategy::automatic, ch11::Strategy::thread_per_row, ch11::Strategy::group_per_row,
        ch11::Strategy::block_per_row, ch11::Strategy::blocks_per_row, ch11::Strategy::columns_tiled,
        ch11::Strategy::columns_naive})
    if (ch11::name(k) == s) return k;
  throw Usage("--strategy: unknown strategy '" + s + "'");
}

// A call made ready from the flags: the input on the device, the output and the scratch allocated,
// and the chapter's launch function for it. main() makes the call; finish() checks, times and
// reports it.
struct Run {
  Options opt;
  red::Op op;
  red::DType t;
  ch11::Shape shape;
  red::DeviceInfo dev;
  std::size_t counted = 0;
  red::HostArray host;
  red::DeviceInput in;
  std::optional<red::Stream> stream;
  std::unique_ptr<ch11::Prepared> prepared;
  ch11::LaunchFn launch = nullptr;

  const ch11::BatchedCall& call() const { return prepared->call; }
  int finish() const;
};

std::unique_ptr<Run> prepare(const Options& opt) {
  auto r = std::make_unique<Run>();
  r->opt = opt;
  const red::Op op = r->op = *red::parse_op(opt.op);  // CLI11 has checked the names
  const red::DType t = r->t = *red::parse_dtype(opt.dtype);
  const std::optional<red::Dist> dist = red::parse_dist(opt.dist);
  if (!dist) throw Usage("--dist: unknown distribution '" + opt.dist + "'");
  if (!ch11::supported(op, t)) throw Usage("11_batched reduces sum, max and argmax of f32, f16 and bf16");
  const ch11::Strategy strategy = strategy_named(opt.strategy);
  const ch11::Kernels kernels = opt.kernels == "teaching" ? ch11::Kernels::teaching : ch11::Kernels::tuned;
  const ch11::Shape shape = r->shape =
      ch11::matrix_shape(opt.axis == 1 ? ch11::Layout::rows : ch11::Layout::columns, opt.rows, opt.cols, opt.stride);
  if (const std::string why = ch11::why_invalid(shape); !why.empty()) throw Usage("bad shape: " + why);
  if (!ch11::reduces(strategy, shape.layout))
    throw Usage("--strategy " + opt.strategy + " does not reduce " + ch11::name(shape.layout));
  const std::size_t elements = ch11::input_elements(shape);
  if (!opt.input.empty()) {
    const std::size_t available = red::raw_element_count(opt.input, t);
    if (available < elements)
      throw Usage("--input: '" + opt.input + "' holds " + std::to_string(available) + " elements, the shape needs " +
                  std::to_string(elements));
  }
  const std::size_t results = ch11::outputs(shape);
  // The host holds the input, and per result its value and its check's outcome (check_all).
  if (const std::string why = red::why_host_cannot_hold(static_cast<double>(elements) * red::size_of(t) +
                                                       results * (4.0 + sizeof(red::CheckOutcome)));
      !why.empty())
    throw Usage("the shape: " + why);
  if (!opt.output.empty()) red::check_writable(opt.output);
  const red::DeviceInfo& dev = r->dev = red::query_device();  // NoGpuError without a GPU
  // At most 2^60 elements (why_invalid) of at most 4 bytes: no sum here wraps.
  r->counted = ch11::counted_bytes(shape, red::size_of(t));
  const std::size_t need = elements * red::size_of(t) + results * 4 +
                           (red::l2_resident(r->counted, dev) ? 0 : 2 * dev.l2_bytes);  // + the L2 scrub
  if (need > dev.free_memory)
    throw Usage("the shape needs " + std::to_string(need) + " bytes of device memory, " + std::to_string(dev.free_memory) +
                " are free");

  r->host = !opt.input.empty() ? red::load_raw(opt.input, t, elements)
                               : red::generate(t, std::max<std::size_t>(elements, 1), *dist, opt.seed);
  r->in = red::upload(r->host);
  r->stream.emplace();
  r->prepared = ch11::prepare(op, t, r->in.data, shape, strategy, kernels, r->stream->get());
  r->launch = ch11::launch_for(r->call());
  return r;
}

int Run::finish() const {
  CUDA_CHECK(cudaStreamSynchronize(call().stream));
  const ch11::Plan& plan = prepared->plan;
  const std::vector<std::byte> got = prepared->results();
  const ch11::BatchCheck check = ch11::check_all(host, shape, op, plan, got);
  const red::TimedCall timed = red::time_call([&] { launch(call()); }, counted, dev, opt.repeat, stream->get());
  const bool passed = check.failed == 0;
  const std::size_t results = ch11::outputs(shape);
  const std::size_t length = shape.layout == ch11::Layout::rows ? shape.cols : shape.rows;
  if (!opt.output.empty()) red::write_raw(opt.output, got.data(), got.size());
  if (opt.json) {
    red::Json j;
    j["chapter"] = "11_batched";
    j["device"] = dev.name;
    j["layout"] = ch11::name(shape.layout);
    j["op"] = opt.op;
    j["dtype"] = opt.dtype;
    j["results"] = results;
    j["length"] = length;
    j["strategy"] = ch11::name(plan.strategy);
    j["kernels"] = ch11::name(plan.kernels);
    j["lanes"] = plan.lanes;
    j["split"] = plan.split;
    red::add_check_and_time(j, check, timed);
    std::fputs(red::json_line(j).c_str(), stdout);
  } else {
    std::printf("11_batched on %s: %s of %s, %zu results of length %zu, %s\n", dev.name.c_str(),
                ch11::name(shape.layout).c_str(), opt.dtype.c_str(), results, length, opt.op.c_str());
    std::printf("  strategy:  %s (lanes %u, split %u), %s kernels\n", ch11::name(plan.strategy).c_str(), plan.lanes,
                plan.split, ch11::name(plan.kernels).c_str());
    red::print_check_and_time(check, timed, opt.repeat);
  }
  return passed ? red::kExitPassed : red::kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"Many reductions at once: the rows or the columns of a matrix, each checked and timed.",
               "11_batched"};
  red::add_count(app, "--rows", opt.rows, "B: rows of the matrix (default 65536)");
  red::add_count(app, "--cols", opt.cols, "L: elements per row (default 1024)");
  red::add_count(app, "--stride", opt.stride, "elements from one row's start to the next (default L; at least L)");
  app.add_option("--axis", opt.axis, "1: a result per row (default); 0: a result per column")->check(CLI::IsMember({0, 1}));
  app.add_option("--op", opt.op, "sum, max or argmax (default sum)")->check(CLI::IsMember({"sum", "max", "argmax"}));
  app.add_option("--dtype", opt.dtype, "f32, f16 or bf16 (default f32)")->check(CLI::IsMember({"f32", "f16", "bf16"}));
  app.add_option("--dist", opt.dist, "generated data: normal, uniform, ints, ... (default normal)");
  red::add_count(app, "--seed", opt.seed, "generated data's seed (default 1)");
  app.add_option("--input", opt.input, "raw little-endian array of the dtype instead of generated data");
  app.add_option("--strategy", opt.strategy, "automatic (default), or force one: thread_per_row, group_per_row, "
                                             "block_per_row, blocks_per_row, columns_tiled, columns_naive");
  app.add_option("--kernels", opt.kernels, "tuned (default) or teaching: the lesson's simplest kernel for each mapping")
      ->check(CLI::IsMember({"tuned", "teaching"}));
  app.add_option("--output", opt.output, "write the results to this file: a little-endian float (argmax: int32) each");
  red::add_count(app, "--repeat", opt.repeat, "timed calls (default 20)", 1, 100000);
  app.add_flag("--json", opt.json, "one JSON line instead of the report");
  app.footer("Exit codes: 0 passed, 1 a result failed its check, 2 bad arguments or shape, 3 no GPU, 4 a CUDA error.");
  if (const int stop = red::parse_command_line(app, argc, argv); stop >= 0) return stop;
  try {
    const std::unique_ptr<Run> run = prepare(opt);  // input, output and scratch on the GPU
    run->launch(run->call());                       // ch11::launch_tuned<Op, T> or ch11::launch<Op, T>
    return run->finish();                           // waits; the check, the time, the report
  } catch (...) {
    return red::program_failed("11_batched");  // bad input 2, no GPU 3, a CUDA error 4
  }
}
