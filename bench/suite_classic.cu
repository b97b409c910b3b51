#include "03_shared/variants.cuh"
#include "suite.hpp"

namespace red::bench::suite {

// Harris's steps (03_shared/variants.cuh) at his n, 2^22, and at 2^20 and 2^28; chapter 03's
// exercise at 2^20 and 2^28. One registration per (case, kernel), grouped by case: the benchmark
// keeps only the latest input on the device, so the kernels measured on one input in a row share
// it. i32 at 2^28 first: bench_main.cu registers these right after every chapter's i32 sum at 2^28.
std::vector<Registration> classic_steps() {
  const std::size_t n20 = std::size_t{1} << 20, n22 = std::size_t{1} << 22, n28 = std::size_t{1} << 28;
  const std::vector<const Chapter*> exercise = {&ch03::solution_interleaved(), &ch03::solution_interleaved_packed()};
  std::vector<Registration> r;
  for (const Case& c : {Case{Op::sum, DType::i32, n28}, Case{Op::sum, DType::i32, n22}, Case{Op::sum, DType::f32, n22},
                        Case{Op::sum, DType::f32, n20}, Case{Op::sum, DType::f32, n28}}) {
    for (const Chapter* step : ch03::harris_steps()) r.push_back({step, {c}});
    // The exercise is answered at an L2-resident and a DRAM size, on f32.
    if (c.dtype == DType::f32 && c.n != n22)
      for (const Chapter* kernel : exercise) r.push_back({kernel, {c}});
  }
  return r;
}

}  // namespace red::bench::suite
