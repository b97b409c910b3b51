// 13_custom_ops_ordered_tuning: how the ordered kernel cuts a warp's stretch (ordered_cut.cuh),
// each choice changed alone, timed beside the reordering kernel on the benchmark's operators.
//
// The input is the benchmark's: 2^28 floats from N(0, 1) (2^27 affine steps for the affine maps).
// Every variant runs through the experiment's copy of the lesson's kernel and launcher
// (ordered_cut.cuh: 13_custom_ops/ordered.cuh's, with the cut a policy) and is timed as the benchmark
// times a call (common/timing.hpp, the steady state, cold). The variants:
//  - lanes a region: the warp's stretch cut into 32 / G regions of G lanes. G = 32 is one region
//    a warp, the layout of a plain ordered kernel (measured with 2 and with 4 runs): a
//    5-step shuffle tree every step. G = 1 is a region a lane: no tree until the end, but 32
//    separate streams a warp;
//  - load rounds a step: a lane's piece is 8 vectors a round (32 floats);
//  - runs: the side-by-side chains a lane folds its piece in;
//  - the register cap (blocks an SM) that __launch_bounds__ asks for.
// Each variant combines in another tree, so its result must agree with the lesson's: the same bits
// for the exact operators (argmin, min/max, and affine steps of +-1 and {-1, 0, 1}, whose every
// partial composition is exact: a step lost or out of place changes the bits), within 10^-4
// (relative above 1) for the others. The plain product is left out: on this data its partial
// products overflow or underflow depending on the tree.
// It prints GB/s of input and the ratio to the reordering kernel (the issue's target: 0.95).
// results/h200/experiments/ordered_tuning.md holds the H200's output.
//
//   13_custom_ops_ordered_tuning
//
// Exit codes: 0 done, 1 a variant's result disagrees with the lesson's, 2 bad arguments, 3 no GPU, 4 a CUDA
// error.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "13_custom_ops/user_op.cuh"
#include "command_line.hpp"
#include "device_info.hpp"
#include "experiments/13_custom_ops/ordered_cut.cuh"
#include "harness.hpp"
#include "reference.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace {

using namespace ch13;

using ordered_cut::Cut;
using Lesson = Cut<kLanesPerRegion, kRounds, kRuns, 1>;  // the lesson's cut, no register cap

using Launch = std::function<void(const Call&)>;
using red::RawResult;
template <class T>
T word(const RawResult& r, unsigned w) {
  T v;
  std::memcpy(&v, r.data() + 4 * w, sizeof v);
  return v;
}
// What a result says, as numbers to compare within 10^-4; none for the operators compared bit
// for bit.
using Values = std::vector<double> (*)(const RawResult&);
std::vector<double> first_float(const RawResult& r) { return {word<float>(r, 0)}; }
std::vector<double> two_floats(const RawResult& r) { return {word<float>(r, 0), word<float>(r, 1)}; }    // mean, variance
std::vector<double> log_and_sign(const RawResult& r) { return {word<float>(r, 0), double(word<int>(r, 1))}; }
std::vector<double> log2_of_scaled(const RawResult& r) {  // log2 |m 2^e|, and the sign (m: a double at byte 0, e at byte 8)
  const double m = word<double>(r, 0);
  return {std::log2(std::fabs(m)) + word<int>(r, 2), double(m > 0) - double(m < 0)};
}

// One operator: its launchers for every variant, and how results are compared.
struct OpCase {
  const char* name;
  Values values;      // nullptr: results compared bit for bit
  bool affine;        // runs on the affine steps
  Launch reordering;  // empty for the non-commutative operator
  std::vector<Launch> variants;
  std::vector<std::size_t> scratch;
  std::vector<std::string> occupancy;  // "registers / blocks an SM" a variant
};

template <class Op, class Policy>
void add(OpCase& c, unsigned sms) {
  c.variants.push_back([](const Call& call) { ordered_cut::launch_ordered<Op, Policy>(call); });
  c.scratch.push_back(ordered_cut::ordered_scratch_bytes<Op, Policy>(0));
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, ordered_cut::reduce_ordered<Op, Policy, ordered_cut::OrderedSource<Op, Policy>>));
  const unsigned per_sm = ordered_cut::ordered_max_blocks<Op, Policy>() / sms;
  c.occupancy.push_back(std::to_string(attributes.numRegs) + " / " + std::to_string(per_sm));
}

// The variants, in the order of the tables' rows.
const char* const kVariants[] = {
    "lesson: 2 lanes a region, 1 round, 2 runs, no cap",
    "32 lanes a region (one a warp), 1 round, 2 runs, no cap",
    "32 lanes a region (one a warp), 1 round, 4 runs, no cap",
    "16 lanes a region, 1 round, 2 runs, no cap",
    "8 lanes a region, 1 round, 2 runs, no cap",
    "4 lanes a region, 1 round, 2 runs, no cap",
    "1 lane a region, 1 round, 2 runs, no cap",
    "2 lanes a region, 1 round, 1 run, no cap",
    "2 lanes a region, 1 round, 4 runs, no cap",
    "2 lanes a region, 2 rounds, 2 runs, no cap",
    "2 lanes a region, 2 rounds, 2 runs, 2 blocks an SM",
};

template <class Op>
OpCase op_case(const char* name, Values values, unsigned sms) {
  OpCase c{name, values, std::is_same_v<Op, ComposeAffine>, nullptr, {}, {}, {}};
  if constexpr (Op::kCommutative) c.reordering = [](const Call& call) { launch<Op>(call); };
  add<Op, Lesson>(c, sms);
  add<Op, Cut<32, 1, 2, 1>>(c, sms);
  add<Op, Cut<32, 1, 4, 1>>(c, sms);
  add<Op, Cut<16, 1, 2, 1>>(c, sms);
  add<Op, Cut<8, 1, 2, 1>>(c, sms);
  add<Op, Cut<4, 1, 2, 1>>(c, sms);
  add<Op, Cut<1, 1, 2, 1>>(c, sms);
  add<Op, Cut<2, 1, 1, 1>>(c, sms);
  add<Op, Cut<2, 1, 4, 1>>(c, sms);
  add<Op, Cut<2, 2, 2, 1>>(c, sms);
  add<Op, Cut<2, 2, 2, 2>>(c, sms);
  return c;
}

bool agrees(const RawResult& got, const RawResult& lesson, Values values) {
  if (!values) return got == lesson;
  const std::vector<double> g = values(got), l = values(lesson);
  for (std::size_t i = 0; i < g.size(); ++i)
    if (!(g[i] == l[i] || std::fabs(g[i] - l[i]) <= 1e-4 * std::max(1.0, std::fabs(l[i])))) return false;
  return true;
}

int run() {
  const red::DeviceInfo dev = red::query_device();
  const std::size_t n = std::size_t{1} << 28;
  const red::HostArray normal = red::generate(red::DType::f32, n, red::Dist::normal, 12);
  const red::DeviceInput in = red::upload(normal);
  // Affine steps with a = +-1 and b in {-1, 0, 1}, 2^27 of them (1 GiB).
  std::vector<float2> steps(n / 2);
  std::mt19937_64 rng(13);
  for (auto& s : steps) {
    const std::uint64_t bits = rng();
    s = float2{(bits & 1) ? 1.0f : -1.0f, static_cast<float>(static_cast<int>((bits >> 1) % 3) - 1)};
  }
  red::DeviceBuffer affine_in(steps.size() * sizeof(float2));
  affine_in.upload(steps.data(), affine_in.bytes());

  const auto sms = static_cast<unsigned>(dev.sm_count);
  std::vector<OpCase> ops;
  ops.push_back(op_case<user_functors::SumOfSquares>("sum of squares", first_float, sms));
  ops.push_back(op_case<ArgMin<float>>("argmin", nullptr, sms));
  ops.push_back(op_case<MinMax<float>>("min/max", nullptr, sms));
  ops.push_back(op_case<LogProduct<float>>("sum of logs", log_and_sign, sms));
  ops.push_back(op_case<ScaledProduct<float>>("mantissa/exponent", log2_of_scaled, sms));
  ops.push_back(op_case<LogSumExp<float>>("log-sum-exp", first_float, sms));
  ops.push_back(op_case<MeanVariance<float>>("Welford", two_floats, sms));
  ops.push_back(op_case<ComposeAffine>("affine maps", nullptr, sms));

  const red::L2Scrubber scrubber(dev);
  red::Stream stream;
  red::DeviceBuffer out(red::kResultBytes), scratch(std::size_t{16} << 20);
  std::vector<std::vector<double>> gbps(std::size(kVariants), std::vector<double>(ops.size()));
  std::vector<double> reordering(ops.size(), 0.0);
  bool agree = true;
  for (std::size_t o = 0; o < ops.size(); ++o) {
    const OpCase& op = ops[o];
    Call c;
    c.input = op.affine ? affine_in.get() : in.data;
    c.n = op.affine ? steps.size() : n;
    c.output = out.get();
    c.scratch = scratch.get();
    c.scratch_bytes = scratch.bytes();
    c.stream = stream.get();
    const double bytes = static_cast<double>(n) * 4;  // 1 GiB either way
    const auto time = [&](const Launch& launch) {
      scratch.zero_prefix(scratch.bytes());
      red::TimingConfig cfg;
      cfg.scrubber = &scrubber;
      return bytes / red::time_on_stream([&] { launch(c); }, stream.get(), cfg).median_us / 1e3;
    };
    if (op.reordering) reordering[o] = time(op.reordering);
    RawResult lesson{};
    for (std::size_t v = 0; v < op.variants.size(); ++v) {
      if (op.scratch[v] > scratch.bytes()) throw std::runtime_error("scratch too small");
      gbps[v][o] = time(op.variants[v]);
      RawResult got{};
      out.download(got.data(), got.size());
      if (v == 0) {
        lesson = got;
      } else if (!agrees(got, lesson, op.values)) {
        std::fprintf(stderr, "%s: variant \"%s\" disagrees with the lesson\n", op.name, kVariants[v]);
        agree = false;
      }
    }
  }

  std::printf("# The ordered kernel's cut of a warp's stretch, one choice changed at a time: GB/s\n\n");
  std::printf("Device: %s. 2^28 floats from N(0, 1) (2^27 affine steps), 1 GiB of input. Steady state, "
              "cold (common/timing.hpp). In brackets: the ratio to the reordering kernel (chapter 10's) on "
              "the same operator; the affine maps have none.\n\n",
              dev.name.c_str());
  std::printf("| variant |");
  for (const OpCase& op : ops) std::printf(" %s |", op.name);
  std::printf("\n|---|");
  for (std::size_t o = 0; o < ops.size(); ++o) std::printf("---:|");
  std::printf("\n| reordering kernel |");
  for (std::size_t o = 0; o < ops.size(); ++o)
    reordering[o] > 0 ? std::printf(" %.1f |", reordering[o]) : std::printf(" — |");
  std::printf("\n");
  for (std::size_t v = 0; v < std::size(kVariants); ++v) {
    std::printf("| %s |", kVariants[v]);
    for (std::size_t o = 0; o < ops.size(); ++o)
      reordering[o] > 0 ? std::printf(" %.1f (%.3f) |", gbps[v][o], gbps[v][o] / reordering[o])
                        : std::printf(" %.1f |", gbps[v][o]);
    std::printf("\n");
  }
  std::printf("\nRegisters a thread / blocks an SM:\n\n| variant |");
  for (const OpCase& op : ops) std::printf(" %s |", op.name);
  std::printf("\n|---|");
  for (std::size_t o = 0; o < ops.size(); ++o) std::printf("---:|");
  std::printf("\n");
  for (std::size_t v = 0; v < std::size(kVariants); ++v) {
    std::printf("| %s |", kVariants[v]);
    for (const OpCase& op : ops) std::printf(" %s |", op.occupancy[v].c_str());
    std::printf("\n");
  }
  return agree ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return red::experiment_without_options(
      argc, argv, "13_custom_ops_ordered_tuning",
      "How the ordered kernel cuts a warp's stretch (ordered_cut.cuh), each choice changed alone, timed\n"
      "beside the reordering kernel on the benchmark's operators (2^28 floats); it takes no options.",
      "results/h200/experiments/ordered_tuning.md", [] { return run(); });
}
