// Chapter 13's verdicts, and the products' checks, in plain C++: host_reference.hpp's Checker for
// each product calls these, and the host tests (tests/test_custom_ops_host.cpp) judge a result's
// bytes with them without a GPU.
//
// The products' rule. A float product's rounding errors multiply, whatever the tree: each of its
// n - 1 multiplications rounds the running product, and every rounding reaches the result, so its
// relative error is bounded by gamma_(n-1) = (n - 1) u / (1 - (n - 1) u) (Higham, "Accuracy and
// Stability of Numerical Algorithms", 2nd ed., Lemma 3.1 and section 3.1), with u the unit
// roundoff of the type that multiplies. A check is worth its "pass" only while that bound is small:
// every product's verdict is held to a bound below kLargestProductBound (relative, or in ln|p|);
// where its bound is that or more, a result within it is "unbounded: not checked" (bounded and
// passed false); a result beyond even that bound, or with no correct digit (unless_lost), fails.
//   product (float)                gamma_(n-1), u = 2^-24: below 10^-4 up to n = 1678 only
//   mantissa/exponent (double m)   -ln(1 - gamma_(n-1)) in ln|p|, u = 2^-53: below 10^-4 up to
//                                  n = 9 x 10^11, beyond any input here
//   sum of logs                    (depth + 3) eps sum |ln|x_i|| + n 2^-22 ln 2 in ln|p| (a sum's
//                                  bound, common/reference.hpp, plus each term's rounding and
//                                  __log2f's 2^-22 on the mantissa, CUDA Math API): below 10^-4
//                                  for a few hundred factors at most
// Each bound also carries product_slack, the host's own double arithmetic.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>

#include "13_custom_ops/host_data.hpp"
#include "json_report.hpp"
#include "reference.hpp"  // red::RawResult

namespace ch13 {

constexpr double kEps = 1.0 / (1 << 23);           // float's machine epsilon
constexpr double kUnitRoundoff = 1.0 / (1 << 24);  // u of float: round to nearest errs by at most half of eps
constexpr double kDoubleUnitRoundoff = 0x1p-53;    // u of double: the mantissa/exponent product's
// The largest bound a product's "pass" may rest on (relative, or in ln|p|).
constexpr double kLargestProductBound = 1e-4;

using red::RawResult;  // the 16 result bytes as they came back

template <class T>
T result_as(const RawResult& raw, std::size_t offset = 0) {
  static_assert(sizeof(T) <= red::kResultBytes);
  T v;
  std::memcpy(&v, raw.data() + offset, sizeof(T));
  return v;
}

// The outcome of a check: the error, its bound, and the verdict with the reason. `bounded` false:
// the bound at this n is too loose to judge (a product's, kLargestProductBound or more), so the
// error is reported and not judged; `passed` is then false, and the report says "unbounded: not
// checked". `result`: the result as JSON numbers (json_report.hpp). `got` and `want`: the number
// the error is taken of and its float64 value, where the check is of one number (NaN otherwise),
// so that a report can set the true value beside the result. `lost`: the result has no correct
// digit (a product off by a factor of 2 or more, a variance off by the whole variance): it fails
// whatever its bound or the exact-data gate says.
struct Verdict {
  bool passed = false;
  bool bounded = true;
  bool lost = false;
  double error = 0, bound = 0;
  double got = std::numeric_limits<double>::quiet_NaN(), want = std::numeric_limits<double>::quiet_NaN();
  std::string why;
  red::Json result;
};

inline bool both_nan(double a, double b) { return std::isnan(a) && std::isnan(b); }

inline Verdict within(double got, double want, double bound, const std::string& what) {
  Verdict v;
  v.bound = bound;
  v.got = got;
  v.want = want;
  if (both_nan(got, want) || (std::isinf(want) && got == want)) {
    v.passed = true;
    return v;
  }
  v.error = std::fabs(got - want);
  v.passed = v.error <= bound;
  if (!v.passed)
    v.why = what + ": got " + std::to_string(got) + ", want " + std::to_string(want) + ", error " + std::to_string(v.error) +
            " above the bound " + std::to_string(bound);
  return v;
}

inline Verdict exact(bool equal, const std::string& what) {
  Verdict v;
  v.passed = equal;
  if (!equal) v.why = what;
  return v;
}

// gamma_(n-1) for unit roundoff u (the header above): +inf where (n - 1) u reaches 1/2.
inline double product_gamma(std::size_t n, double u) {
  const double k = n > 1 ? static_cast<double>(n - 1) * u : 0.0;
  return k < 0.5 ? k / (1 - k) : std::numeric_limits<double>::infinity();
}
// What the host's own double arithmetic adds to a product's check: the reference is exp of a
// compensated sum of logs, and the scaled result's ln(m) + e ln 2 is evaluated in double, each
// within a few units of 2^-53 of the terms' magnitudes (at n = 1 the bound is otherwise 0).
inline double product_slack(const ProductReference& want, double ln_result = 0) {
  return 16 * kDoubleUnitRoundoff * (want.abs_log_sum + std::fabs(want.log_abs) + std::fabs(ln_result) + 1);
}

// The products' one rule: a pass against a bound of kLargestProductBound or more says nothing a
// reader can use, so it becomes "unbounded: not checked", its error kept. A failure stands: the
// bound, however loose, is one no correct result exceeds. A result equal to an infinite answer (an
// infinite factor) needs no bound and keeps its pass.
inline Verdict held_to_useful_bound(Verdict v, const std::string& what) {
  if (v.bound < kLargestProductBound || !v.passed || std::isinf(v.want)) return v;
  v.bounded = false;
  v.passed = false;
  v.why = what + ": the bound " + std::to_string(v.bound) + " is not below " + std::to_string(kLargestProductBound) +
          " at this n: unbounded, not checked";
  return v;
}

// A product off by a factor of 2 or more, |ln(got / p)| >= ln 2, has no correct binary digit. Where
// the answer is also read as a logarithm (the log and scaled forms, ln_p = ln|p|), it is lost only
// if ln|p| has none either, |ln(got / p)| >= |ln p|: ln|p| = 4.2 x 10^7 off by 7 keeps six digits.
// A lost result fails whatever its bound or the exact-data gate says.
inline Verdict unless_lost(Verdict v, double ln_error, const std::string& what, double ln_p = 0) {
  if (!(std::fabs(ln_error) >= std::log(2.0) && std::fabs(ln_error) >= std::fabs(ln_p))) return v;  // NaN: judged elsewhere
  v.passed = false;
  v.lost = true;
  v.why = what + ": off by a factor of e^" + std::to_string(std::fabs(ln_error)) + ", the whole answer lost" +
          (v.bounded ? " (the bound " + std::to_string(v.bound) + " is too loose to catch it)" : "");
  return v;
}

// ---- the products' checks, from the result's bytes ------------------------------------------------

// The plain float product (the trap), a float at byte 0: its relative error |got - p| / |p| within
// gamma_(n-1), u = 2^-24, while that is below kLargestProductBound. Where the exact product is
// outside float's range, the check fails (the trap, shown); a lost result fails at any n.
inline Verdict check_product(const float* x, std::size_t n, const RawResult& r, std::string& shown) {
  const ProductReference want = product_reference(x, n);
  const float got = result_as<float>(r);
  shown = std::to_string(got);
  if (want.nan) return exact(std::isnan(got), "product: want NaN");
  if (want.sign == 0) return exact(got == 0.0f, "product: want 0, got " + shown);
  // Outside float's range (past FLT_MAX, or below the smallest subnormal) no float result is right.
  // The error stays relative: 1 for a result that underflowed to 0, inf for one that overflowed.
  // p itself is a double (past double's range too: +-inf).
  const double p = want.value();
  const double relative = std::fabs(got - p) / std::fabs(p);
  const auto beside = [&](Verdict v) {
    v.got = got;
    v.want = p;
    return v;
  };
  if (want.log_abs > std::log(static_cast<double>(std::numeric_limits<float>::max())) ||
      want.log_abs < std::log(static_cast<double>(std::numeric_limits<float>::denorm_min()))) {
    Verdict v = exact(false, "product: |p| = e^" + std::to_string(want.log_abs) + " is outside float's range; got " + shown);
    v.error = std::isnan(relative) ? std::numeric_limits<double>::infinity() : relative;
    return beside(v);
  }
  // got / p <= 0 (a zero or a wrong sign) is as lost as a factor of 2.
  const double ln_error = got / p > 0 ? std::log(got / p) : std::numeric_limits<double>::infinity();
  Verdict v = within(relative, 0.0, product_gamma(n, kUnitRoundoff) + product_slack(want), "product's relative error");
  if (!v.passed) v.why = "product: got " + shown + ", want " + std::to_string(p) + ": " + v.why;
  return beside(unless_lost(held_to_useful_bound(beside(v), "product"), ln_error, "product"));
}

// The sum of logs: ln|p| (float) at byte 0, the sign (int) at byte 4. `depth`: the kernel's longest
// chain of combines (host_reference.hpp, depth()).
inline Verdict check_log_product(const float* x, std::size_t n, std::size_t depth, const RawResult& r, std::string& shown) {
  const ProductReference want = product_reference(x, n);
  const float log_abs = result_as<float>(r);
  const int sign = result_as<int>(r, 4);
  shown = "sign " + std::to_string(sign) + ", ln|p| " + std::to_string(log_abs);
  if (want.nan) return exact(std::isnan(log_abs), "log product: want NaN");
  if (sign != want.sign) return exact(false, "log product: sign " + std::to_string(sign) + ", want " + std::to_string(want.sign));
  const double bound = (depth + 3) * kEps * want.abs_log_sum + n * std::ldexp(std::log(2.0), -22);
  return unless_lost(held_to_useful_bound(within(log_abs, want.log_abs, bound, "ln|product|"), "log product"),
                     log_abs - want.log_abs, "log product", want.log_abs);
}

// The mantissa/exponent product, the one to use: the mantissa (double) at byte 0, the exponent
// (int) at byte 8. Its error is in ln|p|, |ln(1 + theta)| <= -ln(1 - gamma_(n-1)), u = 2^-53.
inline Verdict check_scaled_product(const float* x, std::size_t n, const RawResult& r, std::string& shown) {
  const ProductReference want = product_reference(x, n);
  const double mantissa = result_as<double>(r);
  const int exponent = result_as<int>(r, 8);
  shown = std::to_string(mantissa) + " x 2^" + std::to_string(exponent);
  if (want.nan) return exact(std::isnan(mantissa), "scaled product: want NaN");
  if (want.sign == 0) return exact(mantissa == 0.0, "scaled product: want 0");
  if ((mantissa < 0) != (want.sign < 0)) return exact(false, "scaled product: wrong sign");
  const double ln = std::log(std::fabs(mantissa)) + exponent * std::log(2.0);
  const double bound = -std::log1p(-product_gamma(n, kDoubleUnitRoundoff)) + product_slack(want, ln);
  return unless_lost(held_to_useful_bound(within(ln, want.log_abs, bound, "ln|m 2^e|"), "scaled product"),
                     ln - want.log_abs, "scaled product", want.log_abs);
}

}  // namespace ch13
