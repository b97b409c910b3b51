// What chapter 10's benchmark measures beside the lesson, and its tests hold to the same answers:
// policies that each change one of the lesson's choices (Tuning, reduce.cuh), the tuned kernel's
// two choices alone and together, and the other way for blocks to meet, a grid-wide barrier
// (their kernels: variant_kernels.cuh). The lesson does not include this file.
#pragma once

#include <string>
#include <vector>

#include "10_single_pass/chapter.cuh"
#include "10_single_pass/variant_kernels.cuh"

namespace ch10 {

// Every partial through the acq_rel ticket, the flags left out: what the ordering costs.
struct AcqRelTicket : Tuning {
  static constexpr bool kFlaggedPartials = false;
  static std::string name() { return "acq_rel"; }
};

// The classic ticket: __threadfence() before and after a relaxed atomicAdd, and no flags
// (FenceTicket, variant_kernels.cuh).
template <>
inline constexpr bool fenced_ticket<FenceTicket> = true;

// One block up to one of 07's tiles, as in 07: from two tiles on, two blocks and the ticket.
struct SingleBlockOneTile : Tuning {
  static constexpr std::size_t kSingleBlockTiles = 1;
  static std::string name() { return "single_block_1_tile"; }
};

// The tuned kernel's choices (TunedChoices, variant_kernels.cuh), one at a time: the block's tree
// with cooperative groups, launched the ordinary way; chapter 06's tree, launched early.
struct CooperativeGroups : TunedChoices {
  static constexpr bool kProgrammaticLaunch = false;
  static std::string name() { return "cooperative_groups"; }
};
struct ProgrammaticLaunch : TunedChoices {
  static constexpr bool kCooperativeGroups = false;
  static std::string name() { return "programmatic_launch"; }
};
// Both: the tuned kernel itself, as chapter 13 runs it.
struct CooperativeGroupsProgrammaticLaunch : TunedChoices {
  static std::string name() { return "cooperative_groups_programmatic_launch"; }
};

// The tuned kernel with the lesson's policy and some of its choices.
template <class Choices>
const red::Chapter& chapter_tuned() {
  static const red::Chapter ch = ticket_chapter<Tuning>(
      "reduce_single_pass_" + Choices::name(),
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&tuned_scratch_bytes<Op, Tuning, Choices>, &launch_tuned<Op, Tuning, Choices>,
                             &tuned_zeroed_scratch_bytes<Op, Tuning, Choices>};
      },
      [](auto op) { return tuned_limits<decltype(op), Tuning, Choices>().max_blocks; },
      {Choices::kCooperativeGroups, Choices::kProgrammaticLaunch});
  return ch;
}

// grid.sync() in a cooperative launch instead of the ticket (reduce_grid_sync).
template <class Op>
std::size_t grid_sync_depth_of(std::size_t n) {
  return sum_depth<Tuning, Op>(n, grid_sync_limits<Op>().max_blocks);
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
        {"cooperative_groups", 0},
        {"programmatic_launch", 0},
        {"flagged_partials", 0},
        {"single_block_tiles", Tuning::kSingleBlockTiles}}});
  return ch;
}

// Every variant above, in the order the benchmark and the tests take them.
inline std::vector<const red::Chapter*> variant_chapters() {
  return {&chapter_with<AcqRelTicket>(),
          &chapter_with<FenceTicket>(),
          &chapter_with<SingleBlockOneTile>(),
          &chapter_tuned<CooperativeGroups>(),
          &chapter_tuned<ProgrammaticLaunch>(),
          &chapter_tuned<CooperativeGroupsProgrammaticLaunch>(),
          &chapter_grid_sync()};
}

}  // namespace ch10
