// What chapter 10's benchmark measures beside the lesson, and its tests hold to the same answers:
// the lesson's kernel with one choice changed (the flags left out, the classic ticket, one block up
// to one tile), the tuned kernel's two choices alone and together, and the other way for blocks to
// meet, a grid-wide barrier (their kernels and launchers: variant_kernels.cuh). The lesson does not
// include this file.
#pragma once

#include <string>
#include <vector>

#include "10_single_pass/chapter.cuh"
#include "10_single_pass/variant_kernels.cuh"

namespace ch10 {

constexpr const char* kSummary =
    "07's pass 1 in one launch: the last block to take a ticket combines the partials (acquire/release)";

// Every partial through the ticket, the flags left out: with the lesson's acq_rel ticket (what the
// ordering costs), or with the classic pair of fences.
template <bool kFenced>
const red::Chapter& chapter_unflagged() {
  static const red::Chapter ch = single_pass_chapter(
      kFenced ? "reduce_single_pass_threadfence" : "reduce_single_pass_acq_rel", kSummary,
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&unflagged_scratch_bytes<Op, kFenced>, &launch_unflagged<Op, kFenced>,
                             &unflagged_zeroed_scratch_bytes<Op, kFenced>};
      },
      [](auto op, std::size_t n) {
        using Op = decltype(op);
        return grid_blocks<Op>(n, unflagged_limits<Op, kFenced>().max_blocks);
      },
      [] {
        Settings s;
        s.atomic_ref = !kFenced;
        s.flagged_partials = false;
        return s;
      }());
  return ch;
}

// One block up to one of 07's tiles, as in 07: from two tiles on, two blocks and the ticket.
inline const red::Chapter& chapter_one_tile() {
  static const red::Chapter ch = single_pass_chapter(
      "reduce_single_pass_single_block_1_tile", kSummary,
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&scratch_bytes<Op>, &launch_one_tile<Op>, &zeroed_scratch_bytes<Op>};
      },
      [](auto op, std::size_t n) {
        using Op = decltype(op);
        return one_tile_grid_blocks<Op>(n, limits<Op>().max_blocks);
      },
      [] {
        Settings s;
        s.single_block_tiles = 1;
        return s;
      }());
  return ch;
}

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

// The tuned kernel with 07's loads and some of its choices.
template <class Choices>
const red::Chapter& chapter_tuned() {
  std::string summary = kSummary;
  if (Choices::kCooperativeGroups) summary += "; the block's tree with cooperative groups";
  if (Choices::kProgrammaticLaunch) summary += "; programmatic dependent launch";
  static const red::Chapter ch = single_pass_chapter(
      "reduce_single_pass_" + Choices::name(), summary,
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&tuned_scratch_bytes<Op, ch07::Tuning, Choices>, &launch_tuned<Op, ch07::Tuning, Choices>,
                             &tuned_zeroed_scratch_bytes<Op, ch07::Tuning, Choices>};
      },
      [](auto op, std::size_t n) {
        using Op = decltype(op);
        return grid_blocks<Op>(n, tuned_limits<Op, ch07::Tuning, Choices>().max_blocks);
      },
      [] {
        Settings s;
        s.cooperative_groups = Choices::kCooperativeGroups;
        s.programmatic_launch = Choices::kProgrammaticLaunch;
        return s;
      }());
  return ch;
}

// grid.sync() in a cooperative launch instead of the ticket (reduce_grid_sync).
inline const red::Chapter& chapter_grid_sync() {
  static const red::Chapter ch = single_pass_chapter(
      "reduce_single_pass_grid_sync", "07's pass 1, then grid.sync() and block 0 combines: a cooperative launch",
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&grid_sync_scratch_bytes<Op>, &launch_grid_sync<Op>};
      },
      [](auto op, std::size_t n) {
        using Op = decltype(op);
        return grid_blocks<Op>(n, grid_sync_limits<Op>().max_blocks);
      },
      [] {
        Settings s;
        s.atomic_ref = false;
        s.grid_sync = true;
        s.flagged_partials = false;
        return s;
      }());
  return ch;
}

// Every variant above, in the order the benchmark and the tests take them.
inline std::vector<const red::Chapter*> variant_chapters() {
  return {&chapter_unflagged<false>(),
          &chapter_unflagged<true>(),
          &chapter_one_tile(),
          &chapter_tuned<CooperativeGroups>(),
          &chapter_tuned<ProgrammaticLaunch>(),
          &chapter_tuned<CooperativeGroupsProgrammaticLaunch>(),
          &chapter_grid_sync()};
}

}  // namespace ch10
