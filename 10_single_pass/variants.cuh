// What chapter 10's benchmark measures beside the lesson, and its tests hold to the same answers:
// policies that each change one of the lesson's choices (Tuning, reduce.cuh), and the other way
// for blocks to meet, a grid-wide barrier. The lesson does not include this file.
#pragma once

#include <string>
#include <vector>

#include "10_single_pass/chapter.cuh"

namespace ch10 {

// Every partial through the acq_rel ticket, the flags left out: what the ordering costs.
struct AcqRelTicket : Tuning {
  static constexpr bool kFlaggedPartials = false;
  static std::string name() { return "acq_rel"; }
};

// The classic ticket: __threadfence() before and after a relaxed atomicAdd (and no flags).
struct FenceTicket : Tuning {
  static constexpr bool kFlaggedPartials = false;
  static constexpr bool kAtomicRef = false;
  static std::string name() { return "threadfence"; }
};

// One block up to one of 07's tiles, as in 07: from two tiles on, two blocks and the ticket.
struct SingleBlockOneTile : Tuning {
  static constexpr std::size_t kSingleBlockTiles = 1;
  static std::string name() { return "single_block_1_tile"; }
};

// The block's tree with chapter 06's hand-written shuffles instead of cooperative groups.
struct HandwrittenShuffles : Tuning {
  static constexpr bool kCooperativeGroups = false;
  static std::string name() { return "handwritten_shuffles"; }
};

// Launched the ordinary way: a kernel starts only after the previous one on the stream has ended.
struct PlainLaunch : Tuning {
  static constexpr bool kProgrammaticLaunch = false;
  static std::string name() { return "plain_launch"; }
};

// ---- the grid-wide barrier ------------------------------------------------------------------
//
// The other way for the blocks of one grid to meet: cooperative groups' grid.sync(), a barrier
// every block of the grid waits at. It needs every block resident at once (a block that waits
// for one that cannot start would wait forever), so it is launched as a cooperative kernel, which
// the driver refuses when the grid is larger than the GPU holds. Block 0 then combines the
// partials as the lesson's last block does: the same bits, for the same grid. No counter, so no
// scratch to keep zeroed; the barrier's own state is the driver's.

template <class Op, class Source>
__global__ void __launch_bounds__(kBlock)
    reduce_grid_sync(Source src, std::size_t n, typename Op::Acc* partials, void* result) {
  using Acc = typename Op::Acc;
  __shared__ Acc per_warp[kWarp];
  const Acc acc = block_reduce<Op, Tuning>(ch07::accumulate_share<Op, Tuning>(src, n), per_warp);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) Op::store(result, acc);
    return;
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
  cg::this_grid().sync();  // every block's partial is written and visible to every block
  if (blockIdx.x != 0) return;
  Acc total = Op::identity();
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kBlock) total = Op::combine(total, partials[i]);
  total = block_reduce<Op, Tuning>(total, per_warp);
  if (threadIdx.x == 0) Op::store(result, total);
}

template <class Op>
ch07::DeviceLimits grid_sync_limits() {
  return ch07::device_limits<reduce_grid_sync<Op, SourceOf<Op, Tuning>>>();
}

template <class Op>
std::size_t grid_sync_scratch_bytes(std::size_t) {
  return grid_sync_limits<Op>().max_blocks * sizeof(typename Op::Acc);
}

template <class Op>
void launch_grid_sync(const red::ReduceCall& c) {
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  using Source = SourceOf<Op, Tuning>;
  const Source src{static_cast<const typename Op::In*>(c.input)};
  if (!src.element_aligned()) throw std::invalid_argument("10_single_pass: input not aligned to its element type");
  const unsigned blocks = grid_blocks<Op, Tuning>(c.n, grid_sync_limits<Op>().max_blocks);
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kBlock);
  config.stream = c.stream;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, reduce_grid_sync<Op, Source>, src, c.n,
                                static_cast<typename Op::Acc*>(c.scratch), c.output));
}

template <class Op>
std::size_t grid_sync_depth_of(std::size_t n) {
  using Source = SourceOf<Op, Tuning>;
  return single_pass_depth(n, grid_blocks<Op, Tuning>(n, grid_sync_limits<Op>().max_blocks),
                           ch07::unroll_of<Tuning, Source>(), Source::kCount);
}

inline const red::Chapter& chapter_grid_sync() {
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<red::AllOps, red::AllTypes>(
          "10_single_pass", "07's pass 1, then grid.sync() and block 0 combines: a cooperative launch",
          [](auto op) {
            using Op = decltype(op);
            return red::Launcher{&grid_sync_scratch_bytes<Op>, &launch_grid_sync<Op>};
          },
          [](std::size_t n) {
            return std::max(grid_sync_depth_of<red::Sum<float>>(n), grid_sync_depth_of<red::Sum<__half>>(n));
          },
          "reduce_single_pass_grid_sync"),
      {"reduce_single_pass",
       {{"atomic_ref", 0},
        {"grid_sync", 1},
        {"cooperative_groups", 1},
        {"programmatic_launch", 0},
        {"flagged_partials", 0},
        {"single_block_tiles", Tuning::kSingleBlockTiles}}});
  return ch;
}

// Every variant above, in the order the benchmark and the tests take them.
inline std::vector<const red::Chapter*> variant_chapters() {
  return {&chapter_with<AcqRelTicket>(),        &chapter_with<FenceTicket>(),        &chapter_with<PlainLaunch>(),
          &chapter_with<HandwrittenShuffles>(), &chapter_with<SingleBlockOneTile>(), &chapter_grid_sync()};
}

}  // namespace ch10
