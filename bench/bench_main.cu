// Benchmarks every chapter (and the CUB baseline) over n = 2^10 ... 2^30 with Google Benchmark.
// scripts/run_benchmarks.sh runs it and turns its JSON into results/<gpu>/bench.csv.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>

#include "bench.hpp"
#include "cuda_check.hpp"
#include "machine_info.cuh"
#include "suite.hpp"

using namespace red;

int main(int argc, char** argv) {
  if (!gpu_available()) {
    std::fprintf(stderr, "reduction_bench: no usable CUDA GPU; results/h200/ holds the published H200 run.\n");
    return 3;
  }
  const DeviceInfo dev = query_device();
  const double copy_gbps = bench::measure_copy_gbps();
  const auto machine = bench::machine_description(dev, copy_gbps);
  // --machine-info: print the description (results/<gpu>/machine.txt) and stop.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--machine-info") == 0) {
      for (const auto& line : machine) std::printf("%s: %s\n", line.key.c_str(), line.value.c_str());
      std::printf("results_folder: %s\n", gpu_folder_name(dev.name).c_str());
      return 0;
    }
  // --timing-methods: 07 and CUB timed four ways (timing_methods.cu), printed; then stop.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--timing-methods") == 0) {
      bench::print_timing_methods();
      return 0;
    }
  // --profile: one call per case inside a profiler range (bench.hpp, set_profile_mode); taken out
  // of argv before Google Benchmark reads it.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--profile") == 0) {
      bench::set_profile_mode(true);
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  for (const auto& line : machine) benchmark::AddCustomContext(line.key, line.value);

  std::vector<const Chapter*> chapters = bench::suite::chapters_01_to_05();
  for (const Chapter* ch : {&bench::suite::chapter_06(), &bench::suite::chapter_07(), &bench::suite::chapter_10(),
                            &bench::suite::chapter_09(), &bench::suite::chapter_09_builtin()})
    chapters.push_back(ch);

  // The floor under every call: an empty kernel, timed the same ways.
  bench::register_floor();

  // Grouped by (dtype, n) so every chapter reuses the same input on the device; a chapter is
  // registered only for the pairs it supports.
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (int log2n = 10; log2n <= 30; log2n += 2)
      for (Op op : {Op::sum, Op::max, Op::argmax}) {
        if (t != DType::f32 && op != Op::sum) continue;
        for (const Chapter* ch : chapters) bench::register_chapter(*ch, {{op, t, std::size_t{1} << log2n}});
        // Chapter 07 with pass 2 launched the ordinary way: what the early launch is worth where
        // launches dominate (small n).
        if (t == DType::f32 && op == Op::sum && log2n <= 18)
          bench::register_chapter(bench::suite::chapter_07_plain_launch(), {{op, t, std::size_t{1} << log2n}});
        // Chapter 10's variants (the classic fences, grid.sync, cooperative groups' tree,
        // programmatic launch), f32 sum at every size: what each choice costs where launches dominate and
        // where bytes do.
        if (t == DType::f32 && op == Op::sum)
          for (const Chapter* variant : bench::suite::variants_10())
            bench::register_chapter(*variant, {{op, t, std::size_t{1} << log2n}});
      }
  // Chapter 05's sweep of the coarsening factor, f32 sum, at a DRAM-resident and an L2 size.
  for (std::size_t n : {std::size_t{1} << 20, std::size_t{1} << 28})
    for (const Chapter* variant : bench::suite::coarsening_sweep_05())
      bench::register_chapter(*variant, {{Op::sum, DType::f32, n}});

  // Dot products: chapter 08's steps and the two library answers, grouped by (dtype, n). The
  // 16-bit inputs run the main kernel and CUB only (cuBLAS's Sdot is f32).
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (int log2n = 10; log2n <= 30; log2n += 2) {
      const std::vector<bench::Case> at_n = {{Op::dot, t, std::size_t{1} << log2n}};
      if (t == DType::f32)
        for (const Chapter* step : bench::suite::dot_steps_f32()) bench::register_chapter(*step, at_n);
      bench::register_chapter(bench::suite::chapter_08(), at_n);
      bench::register_chapter(bench::suite::dot_cub(), at_n);
    }
  // Chapter 07's variants: without the fixed grid, without vector loads, other numbers of vectors
  // in flight per thread, an L2 prefetch hint on every load.
  for (int log2n : {20, 24, 26, 28, 30})
    for (const Chapter* variant : bench::suite::variants_07())
      bench::register_chapter(*variant, {{Op::sum, DType::f32, std::size_t{1} << log2n}});

  // Harris's table at its own n (2^22 ints) and at a DRAM size: every chapter's i32 sum, and
  // Harris's steps rebuilt on chapter 03 (suite_classic.cu), which also carry f32 rows.
  for (std::size_t n : {std::size_t{1} << 22, std::size_t{1} << 28})
    for (const Chapter* ch : chapters) bench::register_chapter(*ch, {{Op::sum, DType::i32, n}});
  // Every type at equal bytes: the sums of chapters 07 and 10 and CUB's over 16 MiB, 64 MiB, 256 MiB
  // and 1 GiB of f32, f64, f16, bf16, i32, i64 and u8 (n = bytes / element size), so that a table
  // and a chart can show whether the type changes the bandwidth. Cases met above run once.
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8})
    for (int log2_bytes = 24; log2_bytes <= 30; log2_bytes += 2) {
      const std::vector<bench::Case> at = {{Op::sum, t, (std::size_t{1} << log2_bytes) / size_of(t)}};
      for (const Chapter* ch : {&bench::suite::chapter_07(), &bench::suite::chapter_10(), &bench::suite::chapter_09(),
                                &bench::suite::cub_sum_other_types()})
        bench::register_chapter(*ch, at);
    }
  // Misaligned starts: the sums of 2^28 u8 and f16 placed 1 to 3 elements past a 16-byte
  // boundary, for 07, 10 and CUB (which takes f16 only), each to set beside its aligned row above.
  for (DType t : {DType::u8, DType::f16})
    for (std::size_t offset : {1, 2, 3}) {
      const std::vector<bench::Case> at = {{Op::sum, t, std::size_t{1} << 28, offset}};
      for (const Chapter* ch : {&bench::suite::chapter_07(), &bench::suite::chapter_10(), &bench::suite::chapter_09()})
        bench::register_chapter(*ch, at);
    }
  // The exercises' solutions, each on the cases its README reports.
  for (const auto& group : {bench::suite::classic_steps(), bench::suite::solutions_04_to_06(),
                            bench::suite::solutions_07_08()})
    for (const auto& r : group) bench::register_chapter(*r.chapter, r.cases);

  // Chapter 11: many reductions at once, 256 MiB as rows and columns (B x L = 2^26 f32, 2^27 f16).
  bench::suite::register_batched();
  // Chapter 12: 256 MiB (2^26 f32, 2^27 f16) in segments of uniform and heavy-tailed lengths.
  bench::suite::register_segmented();
  // Chapter 13: its operators at 1 GiB, with CUB on the same functors.
  bench::suite::register_custom_ops();

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  bench::start_progress();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
