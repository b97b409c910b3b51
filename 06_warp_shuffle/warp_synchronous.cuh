// The warp-synchronous pitfall: the last six levels of a tree by one warp, without a barrier.
//
// Harris's 2007 reduction (rebuilt in 03_shared/variants.cuh, steps 5 to 7) ends its tree with one
// warp: 64 values in shared memory, six steps of "slot t += slot t + stride" by lanes t = 0 .. 31,
// through a `volatile` pointer and with nothing between the steps. It relies on the 32 lanes
// executing each step together: lane t reads slot t + stride after lane t + stride wrote it in the
// step before, and before lane t + stride overwrites it in this one. The programming model never
// promised that; the hardware used to do it.
//
//  - Since Volta (sm_70), independent thread scheduling gives every thread its own program counter:
//    the lanes of a warp may run apart, and run together again only where the program says so.
//    The CUDA Programming Guide (compute capability 7.x) names this very pattern as unsafe. Nothing
//    in the kernel below diverges, so on a given GPU and compiler the lanes may still happen to run
//    together and the sum come out right: right by accident, which is what makes it dangerous.
//  - `volatile` keeps each value out of registers (every step really reads and writes shared
//    memory); it orders nothing between lanes. Two lanes touching one slot with nothing between
//    them is a data race, and compute-sanitizer's racecheck reports it as one.
//  - The `_sync` intrinsics (__shfl_down_sync, __ballot_sync, ...) and __syncwarp() take a mask of
//    the lanes that must take part. Each waits until every lane in the mask has arrived: what a
//    lane did before, the others see after. A shuffle moves the values between registers, so no
//    shared memory is touched at all.
//
// Two repairs: __syncwarp() between each step's read and its write and after the write
// (ch03::reduce_last_warp in 03_shared/variants.cuh), or the shuffles below, chapter 06's warp tree.
// scripts/memory_model_outputs.sh runs racecheck over both kernels here;
// 06_warp_shuffle/test_warp_synchronous.cu checks the shuffles' sums and reports the unsafe tree's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ch06::warp_sync {

constexpr unsigned kWarp = 32;
constexpr unsigned kValues = 2 * kWarp;  // the 64 values of a tree's last six levels
constexpr unsigned kFullWarp = 0xFFFFFFFFu;

// UNSAFE, kept to be shown: Harris's unrolled last warp. Lane 0's value is the sum of the 64.
__device__ inline float sum64_volatile_unsynchronised(float* values, unsigned lane) {
  volatile float* v = values;
#pragma unroll
  for (unsigned stride = kWarp; stride > 0; stride /= 2) v[lane] = v[lane] + v[lane + stride];  // no sync
  return v[lane];
}

// The safe version: one add from shared memory, then five shuffles in registers. Lane 0's value is
// the sum of the 64; every lane of the warp must call it.
__device__ inline float sum64_shuffle(const float* values, unsigned lane) {
  float v = values[lane] + values[lane + kWarp];
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(kFullWarp, v, offset);
  return v;
}

enum class Tree { volatile_unsynchronised, shuffle };

// Block b (one warp) sums in[64 b .. 64 b + 63] into out[b].
template <Tree kTree>
__global__ void __launch_bounds__(kWarp) sum64_per_block(const float* in, float* out) {
  __shared__ float values[kValues];
  const unsigned lane = threadIdx.x;
  const float* mine = in + std::size_t{blockIdx.x} * kValues;
  values[lane] = mine[lane];
  values[lane + kWarp] = mine[lane + kWarp];
  __syncwarp();  // the values in place before any lane reads another's: the only race left is the tree's
  const float total =
      kTree == Tree::shuffle ? sum64_shuffle(values, lane) : sum64_volatile_unsynchronised(values, lane);
  if (lane == 0) out[blockIdx.x] = total;
}

}  // namespace ch06::warp_sync
