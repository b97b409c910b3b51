// The longest chain of additions in cub::DeviceReduce's sum (and TransformReduce), for the error
// bound its results must meet (reference.hpp), read from the CCCL sources installed with CUDA 13.0:
//   - agent/agent_reduce.cuh: a thread folds each of its tiles' 16 items into its running
//     aggregate (ThreadReduce with a prefix: 16 additions a tile), then one BlockReduce;
//   - tuning/tuning_reduce.cuh, agent_reduce.cuh (MemBoundScaling): on sm_60 to sm_90, 256 threads x
//     16 items for a 4-byte accumulator (every CUB sum and dot product here adds in float): 4096;
//   - dispatch_reduce.cuh: one block if n fits a tile; else a grid of at most SMs x occupancy x
//     subscription factor (5) blocks over the tiles (grid/grid_even_share.cuh: a block's tiles
//     differ by one at most), then one block over the grid's partials, then op(init, aggregate).
// The grid is bounded, not read: at least one block per SM is resident (the fewest blocks, the
// longest per-thread chain) and at most 2048 threads (8 blocks) per SM (the most partials).
// BlockReduce (warp reductions): 5 shuffle levels, then the 8 warps' values one after another: 12.
// Other GPUs (sm_100 has tuned policies of its own) get n - 1, which holds for any order.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "cuda_check.hpp"
#include "per_device.hpp"

namespace red {

inline std::size_t cub_sum_depth(std::size_t n) {
  if (n <= 1) return 0;
  struct Gpu {
    int sms = 0, major = 0;
  };
  const Gpu gpu = per_device<Gpu>([](int device) {
    Gpu g;
    CUDA_CHECK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&g.major, cudaDevAttrComputeCapabilityMajor, device));
    return g;
  });
  if (gpu.major < 6 || gpu.major > 9) return n - 1;
  constexpr std::size_t kTile = 256 * 16, kPerTile = 16, kBlockReduce = 5 + 7, kSubscription = 5;
  const auto ceil_div = [](std::size_t a, std::size_t b) { return (a + b - 1) / b; };
  const std::size_t sms = static_cast<std::size_t>(gpu.sms);
  const std::size_t tiles = ceil_div(n, kTile);
  if (tiles == 1) return kPerTile + kBlockReduce + 1;
  const std::size_t fewest_blocks = std::min(tiles, sms * kSubscription);
  const std::size_t most_blocks = std::min(tiles, sms * 8 * kSubscription);
  const std::size_t pass1 = ceil_div(tiles, fewest_blocks) * kPerTile + kBlockReduce;
  const std::size_t pass2 = ceil_div(most_blocks, kTile) * kPerTile + kBlockReduce;
  return pass1 + pass2 + 1;  // + op(init, aggregate)
}

}  // namespace red
