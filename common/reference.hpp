// Host references in float64 (compensated) or exact integer arithmetic, and the check a device
// result must pass.
//
// Semantics every chapter follows (and the tests hold it to):
//  - sum of floats: IEEE; any NaN, or +inf together with -inf, gives NaN; otherwise an inf wins.
//  - sum of i32 and u8: exact in int64. Sum of i64: wraps modulo 2^64 (two's complement).
//  - max / min of floats: NaN propagates (the result is NaN if any element is NaN).
//  - argmax: the largest value and its index; ties go to the smaller index; NaN counts as larger
//    than every number, so the first NaN wins.
//  - empty input: sum 0, max the lowest value (-inf for floats), min the highest, argmax
//    (lowest value, index -1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "dtype.hpp"
#include "inputs.hpp"

namespace red {

struct Reference {
  double value = 0;         // the exact or compensated answer, as double
  std::int64_t ivalue = 0;  // the exact answer for integer results
  std::int64_t index = -1;  // argmax only
  double abs_sum = 0;       // sum |x_i| (sum) or sum |a_i b_i| (dot): scales the error bound
};

Reference reference(const HostArray& x, Op op);
Reference reference_dot(const HostArray& a, const HostArray& b);

// What a chapter wrote into its 16-byte result buffer, decoded.
struct DeviceResult {
  double value = 0;
  std::int64_t ivalue = 0;
  std::int64_t index = -1;
};
using RawResult = std::array<std::byte, kResultBytes>;
DeviceResult decode_result(const RawResult& raw, DType input, Op op);

// Machine epsilon of the accumulator a sum of this dtype uses: 2^-52 for f64, 2^-23 otherwise.
double accumulator_eps(DType input);
// Its largest finite value: FLT_MAX, DBL_MAX for f64. A sum whose sum |x| reaches it may overflow
// in some order of additions, and check() then accepts inf or NaN.
double accumulator_max(DType input);

// Error bound for a floating-point sum whose longest chain of roundings has `depth` additions:
// (depth + 1) * eps * sum|x|. A recursive sum in any order with depth d errs by at most
// gamma_d * sum|x| (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., eq. 4.4),
// gamma_d = d u / (1 - d u) with u = eps/2 (the unit roundoff, 2^-24 for float; eps = 2^-23 is
// machine epsilon, the gap above 1). Using eps where u would do makes the bound about twice
// gamma_d, on purpose: it stays valid for d u close to 1. The extra eps covers the final rounding
// to the result type and the reference's own rounding.
double sum_error_bound(std::size_t depth, double eps, double abs_sum);

struct CheckOutcome {
  bool passed = false;
  double abs_error = 0;
  double bound = 0;
  std::string why;  // empty when passed
};

// sum_depth: the chapter's longest rounding chain for this n (Chapter::sum_depth). absolute_slack
// widens the bound of a sum or dot product by a fixed amount: the losses to underflow that a
// relative bound cannot express (runner.hpp, check_result).
CheckOutcome check(const Reference& ref, const DeviceResult& got, DType input, Op op, std::size_t sum_depth,
                   double absolute_slack = 0.0);

}  // namespace red
