// Chapter 06's exercise, second part: how many blocks take chapter 04's argmax lock. Runs 06's
// kernel with the counted lock (sol06::counting_locks) on uniform random f32 data, n = 2^16 ...
// 2^28 (every 2 powers), and prints per n the blocks, how many of them can be resident at once,
// how often a running maximum improves over that many values in random order, and the count of
// several calls. 06_warp_shuffle.md explains what it shows; the H200's output is published in
// results/h200/solutions/06_lock_count.txt.
//
//   solution_06_lock_count [--seed S] [--calls C]
//
// Exit codes: 0 done, 1 a result differs from the reference, 2 bad arguments, 4 a CUDA error,
// 77 no GPU.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "inputs.hpp"
#include "reference.hpp"
#include "runner.hpp"
#include "solutions/06_warp_shuffle.cuh"

namespace {

struct Options {
  std::uint64_t seed = 1;
  int calls = 5;
};

// 1 + 1/2 + ... + 1/k: the expected number of times the maximum so far improves over k values
// in random order (the k-th value is the largest so far with probability 1/k).
double records_expected(std::size_t k) {
  double h = 0;
  for (std::size_t j = 1; j <= k; ++j) h += 1.0 / static_cast<double>(j);
  return h;
}

int run(const Options& opt) {
  using Op = red::ArgMax<float>;
  const red::Chapter& ch = sol06::counting_locks();
  const red::DeviceInfo dev = red::query_device();
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sol06::reduce_counting_locks<Op>, ch06::kBlock, 0));
  const std::size_t resident = static_cast<std::size_t>(per_sm) * static_cast<std::size_t>(dev.sm_count);
  const std::size_t tile = ch06::tile_of<ch06::kBlock>();

  std::printf("# %s: chapter 06's f32 argmax (%u threads, %zu elements per block), uniform random data, seed %llu\n",
              dev.name.c_str(), ch06::kBlock, tile, static_cast<unsigned long long>(opt.seed));
  std::printf("# resident at once: %d SMs x %d blocks = %zu; records: 1 + 1/2 + ... + 1/blocks\n", dev.sm_count, per_sm,
              resident);
  std::printf("| n | blocks | resident at once | records | took the lock, %d calls |\n", opt.calls);
  std::printf("|---|---:|---:|---:|---|\n");
  bool all_right = true;
  for (int log2n = 16; log2n <= 28; log2n += 2) {
    const std::size_t n = std::size_t{1} << log2n;
    const std::size_t blocks = red::ceil_div(n, tile);
    const red::HostArray host = red::generate(red::DType::f32, n, red::Dist::uniform, opt.seed + log2n);
    const red::Reference ref = red::reference(host, red::Op::argmax);
    const red::DeviceInput in = red::upload(host);
    const red::Workspace ws(ch, red::Op::argmax, red::DType::f32, n);
    const red::ReduceCall call = red::make_call(red::Op::argmax, red::DType::f32, in.data, n, ws, nullptr);
    std::string counts;
    for (int c = 0; c < opt.calls; ++c) {
      const red::DeviceResult got = red::decode_result(red::run_once(ch, call, ws), red::DType::f32, red::Op::argmax);
      const red::CheckOutcome check = red::check_result(ch, ref, got, red::DType::f32, red::Op::argmax, n);
      if (!check.passed) {
        std::fprintf(stderr, "solution_06_lock_count: n = 2^%d, call %d: %s\n", log2n, c + 1, check.why.c_str());
        all_right = false;
      }
      unsigned long long taken = 0;
      ws.scratch.download(&taken, sizeof taken, sol06::lock_counter_offset<Op>());
      counts += (c ? ", " : "") + std::to_string(taken);
    }
    std::printf("| 2^%d | %zu | %zu | %.1f | %s |\n", log2n, blocks, resident, records_expected(blocks),
                counts.c_str());
    std::fflush(stdout);
  }
  return all_right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"For n = 2^16 ... 2^28 (every 2 powers) of uniform random f32 data: the blocks of chapter 06's\n"
               "argmax and how many of them took chapter 04's lock, in each of several calls.",
               "solution_06_lock_count"};
  app.add_option("--seed", opt.seed, "the data's seed (default 1; n = 2^k uses seed + k)");
  app.add_option("--calls", opt.calls, "calls per n (default 5)")->check(CLI::Range(1, 100));
  app.footer("Exit codes: 0 done, 1 a result differs from the reference, 2 bad arguments, 4 a CUDA error, 77 no GPU.");
  if (const int stop = red::parse_command_line(app, argc, argv); stop >= 0) return stop;
  if (!red::gpu_available()) {
    std::fprintf(stderr, "SKIPPED: solution_06_lock_count needs a CUDA GPU and this machine has none.\n");
    return 77;
  }
  try {
    return run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "solution_06_lock_count: %s\n", e.what());
    return 4;
  }
}
