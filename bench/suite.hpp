// What the benchmark runs, one translation unit per group of chapters (bench/suite_*.cu), so the
// build compiles the chapters' kernels in parallel instead of in one long file.
#pragma once

#include <memory>
#include <vector>

#include "bench.hpp"
#include "chapter.hpp"
#include "inputs.hpp"
#include "runner.hpp"

namespace red::bench::suite {

// suite_01_05.cu
std::vector<const Chapter*> chapters_01_to_05();
std::vector<const Chapter*> coarsening_sweep_05();  // factors 1, 2, 4, 8, 32, 64 (16 is the chapter's)
// suite_06.cu
const Chapter& chapter_06();
// suite_07.cu
const Chapter& chapter_07();
const Chapter& chapter_07_plain_launch();  // pass 2 launched the ordinary way, not early
// suite_07_sweep.cu
// the fixed grid and the vector loads each taken out, other unroll depths, an L2 prefetch hint
std::vector<const Chapter*> variants_07();
// suite_08.cu
std::vector<const Chapter*> dot_steps_f32();  // dot_shared, dot_coarsened, dot_fma, cuBLAS Sdot
const Chapter& chapter_08();
const Chapter& dot_cub();
// A kernel and the cases the benchmark measures it on, for registrations that bring their own sizes.
struct Registration {
  const Chapter* chapter;
  std::vector<Case> cases;
};
// suite_classic.cu: Harris's steps 1-7 rebuilt on chapter 03's code (03_shared/variants.cuh), and
// chapter 03's exercise; f32 and i32 sums at Harris's n (2^22) and at DRAM sizes
std::vector<Registration> classic_steps();
// suite_solutions_04_06.cu: the solutions of chapters 04, 05 and 06's exercises (solutions/)
std::vector<Registration> solutions_04_to_06();
// suite_solutions_07_08.cu: the solutions of chapters 07 and 08's exercises (solutions/)
std::vector<Registration> solutions_07_08();
// suite_10.cu
const Chapter& chapter_10();
// every partial through the acq_rel ticket, the classic __threadfence() ticket, one block up to one
// tile (07's rule), grid.sync() in a cooperative launch instead of the ticket, the block's tree
// with cooperative groups, programmatic dependent launch, and both (the kernel 13 runs)
std::vector<const Chapter*> variants_10();
// The elements of chapters 11 and 12's cases: the same 256 MiB for every type (2^26 f32, 2^27
// f16). At equal elements a 16-bit call would read half the bytes, and its fixed costs (the launch,
// the last wave, the combine of partials) would weigh twice as much in its GB/s.
inline std::size_t batched_elements(DType t) { return (std::size_t{1} << 28) / size_of(t); }
// suite_11.cu: chapter 11's batched shapes (rows, columns) with their strategies and
// cub::DeviceSegmentedReduce, registered with register_timed
void register_batched();
// The normal input of n elements of dtype t that chapters 11 and 12's cases share with the cases
// that follow (one at a time: asking for another frees the last one's device memory).
struct BatchedInput {
  HostArray host;
  DeviceInput device;
};
std::shared_ptr<BatchedInput> batched_input(DType t, std::size_t n);
// suite_12.cu: chapter 12's segments of two length distributions, balanced and naive, and
// cub::DeviceSegmentedReduce, registered with register_timed
void register_segmented();
// suite_13.cu: chapter 13's operators at 1 GiB through its kernels and CUB's TransformReduce with
// the same functors, registered with register_timed (counters error, error_bound, passed)
void register_custom_ops();
// suite_09.cu
const Chapter& chapter_09();
// cub::DeviceReduce::Max, Min, ArgMax as shipped: what 09's semantics (Reduce with this project's
// operators) cost
const Chapter& chapter_09_builtin();
// CUB's TransformReduce with the chapters' Sum, for the types chapter 09 does not take (f64, i32,
// i64, u8): the library's counterpart of every chapter's sum of those types
const Chapter& cub_sum_other_types();

}  // namespace red::bench::suite

namespace red::bench {
// timing_methods.cu: chapter 07 and CUB's Sum timed four ways, as a Markdown table on stdout.
void print_timing_methods();
}  // namespace red::bench
