// Chapter 05's exercise, solved: the max with the early NaN return put back into its combine,
// run by chapter 05's own kernel (ch05::reduce_coarsened), so that the two can be compared in the
// benchmark and in the compiled code (cuobjdump -sass; 05_coarsened.md says what to look for).
#pragma once

#include <string>

#include "05_coarsened/reduce.cuh"
#include "chapter_builder.cuh"

namespace sol05 {

// red::Max with the combine written the obvious way: a NaN on either side is returned at once.
// The same results as red::Max (NaN absorbs), but every combine is now a branch on the value.
// append is restated because red::Max's calls red::Max::combine, not this one.
template <class T>
struct MaxEarlyNan : red::Max<T> {
  using Acc = typename red::Max<T>::Acc;
  __device__ static Acc combine(Acc a, Acc b) {
    if (red::is_nan(a)) return a;
    if (red::is_nan(b)) return b;
    return a > b ? a : b;
  }
  __device__ static Acc append(Acc a, T x, std::size_t i) { return combine(a, red::Max<T>::load(x, i)); }
};

inline const red::Chapter& early_nan_max() {
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<red::Ops<MaxEarlyNan>, red::Types<float>>(
          "solution_05",
          "05's kernel (2 x " + std::to_string(ch05::kCoarsen) +
              " elements per thread, one atomic per block); max with an early return on NaN in its combine",
          [](auto op) {
            using Op = decltype(op);
            return red::Launcher{&ch05::scratch_bytes<Op>, &ch05::launch<Op, ch05::kCoarsen>};
          },
          [](std::size_t) { return std::size_t{0}; },  // a max adds nothing
          "reduce_coarsened_early_nan"),
      {"reduce_coarsened", {{"coarsening", ch05::kCoarsen}, {"early_nan_return", 1}}});
  return ch;
}

}  // namespace sol05
