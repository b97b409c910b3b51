// 10_single_pass_one_call_bound: how short one call from an idle GPU can be, against the lesson and
// CUB, timed the same way in one process.
//
// One call from idle (common/timing.hpp, latency_us) is the host's dispatch, a launch and the
// kernel. This program times four calls that way at the launch-cost table's sizes, in rounds that
// interleave them, so a slow moment of the host or the GPU falls on all four alike:
//   empty      an empty kernel, one block of one thread: the floor;
//   read only  a kernel that does the lesson's reading and nothing else: the lesson's grid, 07's
//              loads and the block tree, each block's partial stored, and no meeting of the blocks
//              at all (no ticket, no combine, no result). No one-launch reduction with this grid
//              can be faster; it is the bound;
//   lesson     chapter 10's call (ch10::chapter().launch);
//   CUB        chapter 09's cub::DeviceReduce::Sum call (ch09::chapter().launch).
// It prints, per n, each call's median over the rounds (and the range of the round medians), and
// the ratios to CUB: the read-only kernel's ratio is the best any one-launch design with this grid
// could reach. results/h200/experiments/one_call_bound.md holds the H200's output.
//
//   10_single_pass_one_call_bound [--rounds N]
//
// Exit codes: 0 done, 2 bad arguments, 3 no GPU, 4 a CUDA error.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <vector>

#include "09_cub_comparison/chapter.cuh"
#include "10_single_pass/chapter.cuh"
#include "command_line.hpp"
#include "device_info.hpp"
#include "inputs.hpp"
#include "runner.hpp"
#include "timing.hpp"

namespace {

using Op = red::Sum<float>;
using Policy = ch07::Tuning;
using Source = ch10::SourceOf<Op, Policy>;

// The lesson's kernel with everything after the block's partial taken out.
__global__ void __launch_bounds__(ch10::kBlock) read_only(Source src, std::size_t n, float* partials) {
  __shared__ float per_warp[ch10::kWarp];
  const float acc = ch06::block_reduce<Op>(ch07::accumulate_share<Op, Policy>(src, n), per_warp);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

struct Sample {
  std::vector<double> one_call;  // one median per round
  double median() const {
    std::vector<double> v = one_call;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  double low() const { return *std::min_element(one_call.begin(), one_call.end()); }
  double high() const { return *std::max_element(one_call.begin(), one_call.end()); }
};

int run(int rounds) {
  const red::DeviceInfo dev = red::query_device();
  const std::vector<std::size_t> sizes = {std::size_t{1} << 10, std::size_t{1} << 14, std::size_t{1} << 18,
                                          std::size_t{1} << 20, std::size_t{1} << 22};
  const red::Stream stream;
  const red::Chapter& lesson = ch10::chapter();
  const red::Chapter& cub = ch09::chapter();

  struct Case {
    std::size_t n;
    red::DeviceInput input;
    red::Workspace lesson_ws, cub_ws;
    red::DeviceBuffer partials;
    unsigned blocks;
    Sample empty, bound, ours, theirs;
  };
  std::vector<Case> cases;
  for (std::size_t n : sizes)
    cases.push_back(Case{n, red::upload(red::generate(red::DType::f32, n, red::Dist::uniform, 0x0CA11 + n)),
                         red::Workspace(lesson, red::Op::sum, red::DType::f32, n),
                         red::Workspace(cub, red::Op::sum, red::DType::f32, n),
                         red::DeviceBuffer(ch10::limits<Op>().max_blocks * sizeof(float)),
                         ch10::grid_blocks<Op>(n, ch10::limits<Op>().max_blocks),
                         {}, {}, {}, {}});

  red::TimingConfig cfg;
  cfg.repetitions = 200;
  const auto one_call = [&](const std::function<void()>& call) {
    return red::time_on_stream(call, stream.get(), cfg).latency_us;
  };
  for (int r = 0; r < rounds; ++r)
    for (Case& c : cases) {
      const red::ReduceCall ours =
          red::make_call(red::Op::sum, red::DType::f32, c.input.data, c.n, c.lesson_ws, stream.get());
      const red::ReduceCall theirs =
          red::make_call(red::Op::sum, red::DType::f32, c.input.data, c.n, c.cub_ws, stream.get());
      const Source src{static_cast<const float*>(c.input.data)};
      c.empty.one_call.push_back(one_call([&] { red::launch_empty_kernel(stream.get()); }));
      c.bound.one_call.push_back(one_call([&] {
        read_only<<<c.blocks, ch10::kBlock, 0, stream.get()>>>(src, c.n, static_cast<float*>(c.partials.get()));
        CUDA_CHECK(cudaGetLastError());
      }));
      c.ours.one_call.push_back(one_call([&] { lesson.launch(ours); }));
      c.theirs.one_call.push_back(one_call([&] { cub.launch(theirs); }));
    }

  std::printf("# One call from idle, f32 sum, %s: µs, the median of %d rounds (each round's figure the median\n"
              "# of %d calls; the range of the rounds in brackets). Read only: the lesson's grid and loads, no\n"
              "# meeting of the blocks: the bound for a one-launch reduction with this grid.\n\n",
              dev.name.c_str(), rounds, cfg.repetitions);
  std::printf("| n | blocks | empty kernel | read only | `reduce_single_pass` | `cub_sum` | read only ÷ CUB | "
              "`reduce_single_pass` ÷ CUB | `reduce_single_pass` − read only |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Case& c : cases) {
    const auto cell = [](const Sample& s) {
      static char text[4][64];
      static int k = 0;
      char* out = text[k++ % 4];
      std::snprintf(out, 64, "%.2f [%.2f, %.2f]", s.median(), s.low(), s.high());
      return out;
    };
    std::printf("| 2^%d | %u | %s | %s | %s | %s | %.3f | %.3f | %.2f |\n", __builtin_ctzll(c.n), c.blocks,
                cell(c.empty), cell(c.bound), cell(c.ours), cell(c.theirs), c.bound.median() / c.theirs.median(),
                c.ours.median() / c.theirs.median(), c.ours.median() - c.bound.median());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  CLI::App app{
      "One call from idle, f32 sum: the lesson and CUB beside an empty kernel and a kernel that only reads\n"
      "the input in the lesson's grid (the bound for any one-launch reduction with that grid), interleaved.",
      "10_single_pass_one_call_bound"};
  app.add_option("--rounds", rounds, "rounds of the four calls at every size (default 5)")->check(CLI::Range(1, 100));
  app.footer("Exit codes: 0 done, 2 bad arguments, 3 no GPU, 4 a CUDA error.");
  if (const int stop = red::parse_command_line(app, argc, argv); stop >= 0) return stop;
  return red::run_experiment("10_single_pass_one_call_bound", "results/h200/experiments/one_call_bound.md", [&] { return run(rounds); });
}
