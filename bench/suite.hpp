// What the benchmark runs, one translation unit per group of chapters (bench/suite_*.cu), so the
// build compiles the chapters' kernels in parallel instead of in one long file.
#pragma once

#include <vector>

#include "chapter.hpp"

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
// suite_09.cu
const Chapter& chapter_09();
// cub::DeviceReduce::Max, Min, ArgMax as shipped: what 09's semantics (Reduce with this project's
// operators) cost
const Chapter& chapter_09_builtin();

}  // namespace red::bench::suite

namespace red::bench {
// timing_methods.cu: chapter 07 and CUB's Sum timed four ways, as a Markdown table on stdout.
void print_timing_methods();
}  // namespace red::bench
