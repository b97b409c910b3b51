// A user's own operator, as a reader would write one for the chapter's launchers: a transform
// and a combine as functors (CUB's TransformReduce takes the same two), here the sum of squares,
// with its float64 check. The program, the tests and the benchmark all use this one.
#pragma once

#include "13_custom_ops/host_reference.hpp"

namespace user_functors {

struct Plus {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Zero {
  __host__ __device__ float operator()() const { return 0.0f; }
};
struct Square {
  __device__ float operator()(float x) const { return x * x; }
};
using SumOfSquares = ch13::FromFunctors<float, float, Plus, Zero, Square>;

}  // namespace user_functors

namespace ch13 {
// Against a compensated float64 sum of the squares, with a sum's bound.
template <>
struct Checker<user_functors::SumOfSquares> {
  static Verdict check(Kernel k, const float* x, std::size_t n, const RawResult& r, std::string& shown) {
    const double want = sum_of_squares_reference(x, n);
    const float got = result_as<float>(r);
    shown = std::to_string(got);
    return within(got, want, (depth<user_functors::SumOfSquares>(k, n) + 2) * kEps * want, "sum of squares");
  }
};
// Small integers among zeros: every partial sum of squares is an integer below 2^24, exact.
template <>
struct ExactGate<user_functors::SumOfSquares> {
  static constexpr bool kExists = true;
  static GateOutcome run(Kernel k, std::size_t n, std::uint64_t) {
    const std::vector<float> x = generate_exact_squares(n);
    const float want = static_cast<float>(sum_of_squares_reference(x.data(), n));
    const float got = result_as<float>(run_on_device<user_functors::SumOfSquares>(k, x.data(), n).result);
    return gate_outcome(got, want, std::equal_to<float>{},
                        "sum of squares of small integers: got " + std::to_string(got) + ", want " + std::to_string(want));
  }
};
}  // namespace ch13
