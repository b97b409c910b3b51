// Chapter 07 compiled for compute_80 alone (CMake: CUDA_ARCHITECTURES 80-virtual), as a build for
// A100-class GPUs would be. On an sm_90 GPU the driver compiles that PTX for the GPU it runs on,
// but the code inside `#if __CUDA_ARCH__ >= 900` was left out when the PTX was made: pass 2 has
// no cudaGridDependencySynchronize(). The launcher must then not launch pass 2 early, or pass 2
// could read partials that pass 1 has not written yet.
#include <type_traits>

#include "07_two_pass/chapter.cuh"
#include "test_support.hpp"

using namespace red;

TEST_CASE("07_two_pass built for compute_80: pass 2 is not launched early, and the answers are right") {
  const ch07::DeviceLimits limits = ch07::limits_of<Sum<float>, ch07::Tuning, ch07::Array<float>>();
  CHECK_FALSE(limits.programmatic);
  // Many blocks, so pass 2 reads many partials; repeated, so a race would have chances to show.
  for (int round = 0; round < 20; ++round) {
    test::check_sizes(ch07::chapter(), Op::sum, DType::f32, {(std::size_t{1} << 24) + 3}, Dist::ints);
    test::check_sizes(ch07::chapter(), Op::argmax, DType::f16, {(std::size_t{1} << 23) + 5}, Dist::normal);
  }
}
