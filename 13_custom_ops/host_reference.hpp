// Chapter 13's host side: a call set up on the device (run_on_device), the float64 references of
// every operator in ops.cuh, and the bounds their results are checked against.
//
// Every reference is computed in double with compensated (Neumaier) sums, so its own error is far
// below the float bounds it checks. The bounds, with eps = 2^-23 (float's machine epsilon) and
// `depth` the longest chain of combines an element goes through (depth(), below):
//   argmin, min/max, any/all       exact
//   the three products             checks.hpp: gamma_(n-1) = (n - 1) u / (1 - (n - 1) u) with
//                                  u = 2^-24 for the float product and u = 2^-53 for the
//                                  mantissa/exponent one (its mantissa is a double); the sum of
//                                  logs (depth + 3) eps sum |ln|x_i|| + n 2^-22 ln 2. A product's
//                                  bound of 10^-4 or more judges nothing: "unbounded: not checked"
//                                  (Verdict::bounded false), and the exact-data gate still runs.
//   log-sum-exp (online)           |error| <= (3 depth + 6 + 104) eps + eps |lse|: a thread's
//                                  terms come from __expf, within 2 + 1.16 |y| ulp of exp(y) (CUDA
//                                  Math API), at most 104 ulp for the y >= -88 that matter; each
//                                  merge rescales by one more exp (expf, 2 ulp) and rounds the sum;
//                                  log of a relative error e is an absolute error e. The shifted
//                                  form's analysis is in P. Blanchard,
//                                  D. J. Higham, N. J. Higham, "Accurately computing the
//                                  log-sum-exp and softmax functions", IMA J. Numer. Anal. 41(4),
//                                  2021
//   mean                           |error| <= (depth + 2) eps sum |x_i| / n
//   variance (Welford, Chan)       relative error <= (depth + 2) eps kappa, kappa = sqrt(1 + n
//                                  mean^2 / M2), the condition number of the variance (Chan,
//                                  Golub, LeVeque, The American Statistician 37(3), 1983: the
//                                  pairwise and updating forms err in proportion to kappa, the
//                                  textbook sum of squares in proportion to kappa^2)
//   affine maps (ordered)          |error of a| <= (depth + 1) eps |A|, |error of b| <= 2 (depth +
//                                  1) eps sum_i |b_i| prod_(j>i) |a_j| (each step one rounding of
//                                  the product and one fused multiply-add)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "13_custom_ops/checks.hpp"  // Verdict, within, the products' checks
#include "13_custom_ops/host_data.hpp"
#include "13_custom_ops/ordered.cuh"  // the order-keeping kernel, and reduce.cuh
#include "13_custom_ops/votes.cuh"
#include "device_buffer.hpp"
#include "json_report.hpp"
#include "reference.hpp"  // red::RawResult

namespace ch13 {

// Which kernel a call goes through.
enum class Kernel { reordering, ordered, votes, votes_early_exit };
inline const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::reordering: return "reordering";
    case Kernel::ordered: return "ordered";
    case Kernel::votes: return "votes";
    default: return "votes_early_exit";
  }
}

// The longest chain of combines an element goes through. The reordering kernel: chapter 10's
// count for its grid. The ordered kernel: its lane's piece of a step, the fold of the region's
// lanes, the region's steps, the fold of the warp's regions, the last warp's step after the whole
// steps and the elements after the last whole vector, the fold of the block's warps, the last
// block's share of the partials and its folds.
template <class Op>
std::size_t depth(Kernel k, std::size_t n) {
  if (n == 0) return 0;
  if (k == Kernel::reordering) {
    using Policy = TuningOf<Op>;
    using Source = ch10::SourceOf<Op, Policy>;
    const unsigned blocks = ch10::grid_blocks<Op, Policy>(n, ch10::tuned_limits<Op, Policy>().max_blocks);
    return ch10::single_pass_depth(n, blocks, ch07::unroll_of<Policy, Source>(), Source::kCount);
  }
  using Source = OrderedSource<Op>;
  constexpr std::size_t kStepVectors = ordered_step_vectors<Op>(), kPiece = kStepVectors / kWarp * Source::kCount;
  std::size_t group_steps = 0;
  for (unsigned g = 1; g < lanes_per_region(kStepVectors / kWarp); g *= 2) ++group_steps;
  const std::size_t blocks = ordered_blocks<Op>(n), warps = blocks * kWarps;
  const std::size_t steps = n / Source::kCount / kStepVectors;
  return kPiece + group_steps + red::ceil_div(steps, warps) + 5 + 1 + Source::kCount + kWarps +
         red::ceil_div(blocks, std::size_t{kBlock}) + 5 + kWarps;
}

// ---- a call on the device ------------------------------------------------------------------------

template <class Op>
std::size_t scratch_for(Kernel k, std::size_t n) {
  if (k == Kernel::ordered) return ordered_scratch_bytes<Op>(n);
  if (k == Kernel::reordering) return scratch_bytes<Op>(n);
  constexpr bool kAll = std::is_same_v<Op, AllNonzero>;
  return k == Kernel::votes ? votes_scratch_bytes<kAll, false>() : votes_scratch_bytes<kAll, true>();
}
template <class Op>
std::size_t zeroed_for(Kernel k) {
  if (k == Kernel::ordered) return ordered_zeroed_scratch_bytes<Op>();
  if (k == Kernel::reordering) return zeroed_scratch_bytes<Op>();
  constexpr bool kAll = std::is_same_v<Op, AllNonzero>;
  return k == Kernel::votes ? votes_zeroed_scratch_bytes<kAll, false>() : votes_zeroed_scratch_bytes<kAll, true>();
}
template <class Op>
void launch_with(Kernel k, const Call& c) {
  if (k == Kernel::ordered) return launch_ordered<Op>(c);
  if (k == Kernel::reordering) return launch_reordering_anyway<Op>(c);
  if constexpr (std::is_same_v<Op, AnyNonzero> || std::is_same_v<Op, AllNonzero>) {
    constexpr bool kAll = std::is_same_v<Op, AllNonzero>;
    return k == Kernel::votes ? launch_votes<kAll, false>(c) : launch_votes<kAll, true>(c);
  }
  throw std::invalid_argument("13_custom_ops: the vote kernel reduces bytes with any or all only");
}

// What a call left: its result, and whether everything around it held.
struct DeviceRun {
  RawResult result{};
  bool same_twice = false;      // a second call on the same scratch gave the same bits
  bool counters_zero = false;   // the scratch's zeroed bytes were zero after each call
  bool input_unchanged = false;
};

// n elements of Op::In from `host`, placed `offset` elements past a 256-byte boundary, through
// kernel k: the output poisoned, the scratch's zeroed bytes zeroed once and the rest filled with
// garbage, run twice.
template <class Op>
DeviceRun run_on_device(Kernel k, const typename Op::In* host, std::size_t n, std::size_t offset = 0,
                        cudaStream_t stream = nullptr) {
  using In = typename Op::In;
  const std::size_t bytes = n * sizeof(In);
  red::DeviceBuffer input(std::max<std::size_t>(1, (n + offset) * sizeof(In))), output(red::kResultBytes);
  if (n) input.upload(host, bytes, offset * sizeof(In));
  const std::size_t zeroed = zeroed_for<Op>(k);
  red::DeviceBuffer scratch(std::max<std::size_t>(1, scratch_for<Op>(k, n)));
  scratch.fill(0x5A, stream, zeroed);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  scratch.zero_prefix(zeroed);
  Call c;
  c.input = static_cast<const char*>(input.get()) + offset * sizeof(In);
  c.n = n;
  c.output = output.get();
  c.scratch = scratch.get();
  c.scratch_bytes = scratch.bytes();
  c.stream = stream;
  DeviceRun r;
  RawResult first{};
  output.fill(0xA5, stream);
  launch_with<Op>(k, c);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  output.download(first.data(), first.size());
  r.counters_zero = scratch.prefix_is_zero(zeroed);
  output.fill(0xA5, stream);
  launch_with<Op>(k, c);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  output.download(r.result.data(), r.result.size());
  r.counters_zero = r.counters_zero && scratch.prefix_is_zero(zeroed);
  r.same_twice = first == r.result;
  std::vector<In> back(n);
  if (n) input.download(back.data(), bytes, offset * sizeof(In));
  r.input_unchanged = n == 0 || std::memcmp(back.data(), host, bytes) == 0;
  return r;
}

// ---- every operator's check, for the tests and the program alike -------------------------------------
//
// verdict_of<Op>(k, x, n, result): the result of kernel k on x[0, n) against its reference and bound.
// `shown` gets the result as a reader would print it. Exact operators pass only when equal. The
// references are host_data.hpp's float64 ones (computed on every core); Verdict is checks.hpp's.

template <class Op>
struct Checker;

template <class T>
struct Checker<ArgMin<T>> {
  static Verdict check(Kernel, const T* x, std::size_t n, const RawResult& r, std::string& shown) {
    const ArgMinReference want = argmin_reference(x, n);
    const float value = result_as<float>(r);
    long long index = 0;
    std::memcpy(&index, r.data() + 8, 8);
    shown = "value " + std::to_string(value) + " at " + std::to_string(index);
    return exact(index == want.index && (value == want.value || both_nan(value, want.value)),
                 "argmin: got " + shown + ", want " + std::to_string(want.value) + " at " + std::to_string(want.index));
  }
};
template <class T>
struct Checker<MinMax<T>> {
  static Verdict check(Kernel, const T* x, std::size_t n, const RawResult& r, std::string& shown) {
    const MinMaxReference want = minmax_reference(x, n);
    const Range got = result_as<Range>(r);
    shown = "[" + std::to_string(got.lo) + ", " + std::to_string(got.hi) + "]";
    return exact((got.lo == want.lo || both_nan(got.lo, want.lo)) && (got.hi == want.hi || both_nan(got.hi, want.hi)),
                 "minmax: got " + shown + ", want [" + std::to_string(want.lo) + ", " + std::to_string(want.hi) + "]");
  }
};
// The products' checks are checks.hpp's, on the result's bytes.
template <class T>
struct Checker<Product<T>> {
  static Verdict check(Kernel, const T* x, std::size_t n, const RawResult& r, std::string& shown) {
    return check_product(x, n, r, shown);
  }
};
template <class T>
struct Checker<LogProduct<T>> {
  static Verdict check(Kernel k, const T* x, std::size_t n, const RawResult& r, std::string& shown) {
    return check_log_product(x, n, depth<LogProduct<T>>(k, n), r, shown);
  }
};
// checks.hpp reads the mantissa at byte 0 and the exponent at byte 8.
static_assert(sizeof(Scaled) == 16 && offsetof(Scaled, mantissa) == 0 && offsetof(Scaled, exponent) == 8);
template <class T>
struct Checker<ScaledProduct<T>> {
  static Verdict check(Kernel, const T* x, std::size_t n, const RawResult& r, std::string& shown) {
    return check_scaled_product(x, n, r, shown);
  }
};
template <class Op>
struct BytesChecker {
  static Verdict check(Kernel, const std::uint8_t* x, std::size_t n, const RawResult& r, std::string& shown) {
    const BytesReference bytes = bytes_reference(x, n);
    const bool want = std::is_same_v<Op, AllNonzero> ? bytes.all : bytes.any;
    const int got = result_as<int>(r);
    shown = got ? "true" : "false";
    return exact(got == int(want), std::string("got ") + shown);
  }
};
template <>
struct Checker<AnyNonzero> : BytesChecker<AnyNonzero> {};
template <>
struct Checker<AllNonzero> : BytesChecker<AllNonzero> {};
// Both log-sum-exps are held to the online form's bound: the naive one passes where exp does not
// overflow or underflow, and fails where it does (the trap, shown).
template <class Op>
struct LseChecker {
  static Verdict check(Kernel k, const typename Op::In* x, std::size_t n, const RawResult& r, std::string& shown) {
    const double want = lse_reference(x, n);
    const float got = result_as<float>(r);
    shown = std::to_string(got);
    return within(got, want, (3.0 * depth<Op>(k, n) + 6 + 104) * kEps + kEps * std::fabs(want), "log-sum-exp");
  }
};
template <class T>
struct Checker<LogSumExp<T>> : LseChecker<LogSumExp<T>> {};
template <class T>
struct Checker<NaiveLogSumExp<T>> : LseChecker<NaiveLogSumExp<T>> {};
// Both mean/variances against Welford's bound. The naive one fails it on data with a large mean
// where the bound is below 1 (the ordered kernel's short chains, small n); through the reordering
// kernel at 2^28 its depth puts the bound above 1, and only the error shows the lost variance.
template <class Op>
struct MomentsChecker {
  static Verdict check(Kernel k, const typename Op::In* x, std::size_t n, const RawResult& r, std::string& shown) {
    const MomentsReference want = moments_reference(x, n);
    const MeanVarianceResult got = result_as<MeanVarianceResult>(r);
    shown = "mean " + std::to_string(got.mean) + ", variance " + std::to_string(got.variance);
    if (got.count != n) return exact(false, "count " + std::to_string(got.count));
    const double d = static_cast<double>(depth<Op>(k, n));
    const Verdict m = within(got.mean, want.mean, (d + 2) * kEps * want.abs_sum / std::max<double>(1, n), "mean");
    const double relative = std::isinf(want.kappa) ? 0 : (d + 2) * kEps * want.kappa;
    Verdict v = within(got.variance, want.variance, relative * want.variance, "variance");
    if (!m.passed) return m;
    // A relative bound of 1 or more admits a variance with no correct digit (0, or twice the true
    // one): such a result fails whatever the bound, and the reason says the bound was too loose.
    if (v.passed && want.variance > 0 && v.error >= want.variance) {
      v.passed = false;
      v.lost = true;
      v.why = "variance: got " + std::to_string(got.variance) + ", want " + std::to_string(want.variance) +
              ": the whole variance is lost (the bound " + std::to_string(v.bound) + " is too loose to catch it)";
    }
    return v;
  }
};
template <class T>
struct Checker<MeanVariance<T>> : MomentsChecker<MeanVariance<T>> {};
template <class T>
struct Checker<NaiveMeanVariance<T>> : MomentsChecker<NaiveMeanVariance<T>> {};
// The composed map against the sequential fold, with the ordered kernel's bound (the reordering
// kernel fails it: the trap, shown). The verdict's error is b's.
template <>
struct Checker<ComposeAffine> {
  static Verdict check(Kernel, const float2* x, std::size_t n, const RawResult& r, std::string& shown) {
    const AffineReference want = affine_reference(x, n);
    const Affine got = result_as<Affine>(r);
    shown = "x -> " + std::to_string(got.a) + " x + " + std::to_string(got.b);
    const double d = static_cast<double>(depth<ComposeAffine>(Kernel::ordered, n));
    const Verdict va = within(got.a, want.a, (d + 1) * kEps * std::fabs(want.a) + std::numeric_limits<float>::denorm_min(), "a");
    const Verdict vb = within(got.b, want.b, 2 * (d + 1) * kEps * want.abs_b, "b");
    return va.passed ? vb : va;
  }
};

// ---- a result as numbers: the program's --json and --output ---------------------------------------
//
// ResultOf<Op>::json(raw): the result as JSON numbers; ResultOf<Op>::kBytes: the bytes the operator
// stores at the result (Op::store), which --output writes as they are (little-endian).

template <class Op>
struct ResultOf {  // a float: the products, the sums of squares, the log-sum-exps, a user's float
  static constexpr std::size_t kBytes = sizeof(float);
  static red::Json json(const RawResult& r) { return red::json_number(result_as<float>(r)); }
};
template <class T>
struct ResultOf<ArgMin<T>> {  // the value at byte 0, the int64 index at byte 8
  static constexpr std::size_t kBytes = 16;
  static red::Json json(const RawResult& r) {
    long long index = 0;
    std::memcpy(&index, r.data() + 8, 8);
    return red::Json{{"value", red::json_number(result_as<float>(r))}, {"index", index}};
  }
};
template <class T>
struct ResultOf<MinMax<T>> {
  static constexpr std::size_t kBytes = sizeof(Range);
  static red::Json json(const RawResult& r) {
    const Range v = result_as<Range>(r);
    return red::Json{{"lo", red::json_number(v.lo)}, {"hi", red::json_number(v.hi)}};
  }
};
template <class T>
struct ResultOf<LogProduct<T>> {  // ln|p| (float) at byte 0, the sign (int) at byte 4
  static constexpr std::size_t kBytes = 8;
  static red::Json json(const RawResult& r) {
    int sign = 0;
    std::memcpy(&sign, r.data() + 4, 4);
    return red::Json{{"log_abs", red::json_number(result_as<float>(r))}, {"sign", sign}};
  }
};
template <class T>
struct ResultOf<ScaledProduct<T>> {  // the mantissa (double) at byte 0, the exponent (int) at byte 8
  static constexpr std::size_t kBytes = sizeof(Scaled);
  static red::Json json(const RawResult& r) {
    const Scaled v = result_as<Scaled>(r);
    return red::Json{{"mantissa", red::json_number(v.mantissa)}, {"exponent", v.exponent}};
  }
};
template <class Op>
struct VoteResult {  // an int, 0 or 1
  static constexpr std::size_t kBytes = sizeof(int);
  static red::Json json(const RawResult& r) { return result_as<int>(r) != 0; }
};
template <>
struct ResultOf<AnyNonzero> : VoteResult<AnyNonzero> {};
template <>
struct ResultOf<AllNonzero> : VoteResult<AllNonzero> {};
template <class Op>
struct MomentsResult {
  static constexpr std::size_t kBytes = sizeof(MeanVarianceResult);
  static red::Json json(const RawResult& r) {
    const MeanVarianceResult v = result_as<MeanVarianceResult>(r);
    return red::Json{{"mean", red::json_number(v.mean)}, {"variance", red::json_number(v.variance)}, {"count", v.count}};
  }
};
template <class T>
struct ResultOf<MeanVariance<T>> : MomentsResult<MeanVariance<T>> {};
template <class T>
struct ResultOf<NaiveMeanVariance<T>> : MomentsResult<NaiveMeanVariance<T>> {};
template <>
struct ResultOf<ComposeAffine> {
  static constexpr std::size_t kBytes = sizeof(Affine);
  static red::Json json(const RawResult& r) {
    const Affine v = result_as<Affine>(r);
    return red::Json{{"a", red::json_number(v.a)}, {"b", red::json_number(v.b)}};
  }
};

template <class Op>
Verdict verdict_of(Kernel k, const typename Op::In* x, std::size_t n, const RawResult& r, std::string& shown) {
  Verdict v = Checker<Op>::check(k, x, n, r, shown);
  v.result = ResultOf<Op>::json(r);
  return v;
}
template <class Op>
Verdict verdict_of(Kernel k, const typename Op::In* x, std::size_t n, const RawResult& r) {
  std::string shown;
  return verdict_of<Op>(k, x, n, r, shown);
}

// ---- the exact-data gates --------------------------------------------------------------------------
//
// Where an operator has inputs on which every order of combining is exact (host_data.hpp: powers
// of two for the products, small integers for the sum of squares, unit steps for the affine
// maps), the program runs kernel k on such an input of the same n and wants the result bit for
// bit: a lost, doubled or misplaced element fails here whatever a bound allows, and where a
// product's bound is too loose to judge (checks.hpp), this is the check that still runs. ExactGate<Op>::kExists is false
// for the other operators.

struct GateOutcome {
  bool ran = false, passed = true;
  std::string why;
};

template <class Op>
struct ExactGate {
  static constexpr bool kExists = false;
};
template <class Acc, class Compare>
GateOutcome gate_outcome(const Acc& got, const Acc& want, Compare equal, const std::string& what) {
  GateOutcome g;
  g.ran = true;
  g.passed = equal(got, want);
  if (!g.passed) g.why = what;
  return g;
}
// The products on factors of 2, 0.5 and -1 among ones: every partial product is a power of two.
// `value` turns the stored result into the double it stands for.
template <class Op, class Value>
GateOutcome exact_factors_gate(Kernel k, std::size_t n, std::uint64_t seed, Value value) {
  double want = 1;
  const std::vector<float> x = generate_exact_factors(n, seed, want);
  const double got = value(run_on_device<Op>(k, x.data(), n).result);
  return gate_outcome(got, want, std::equal_to<double>{},
                      "product of powers of two: got " + std::to_string(got) + ", want " + std::to_string(want));
}
template <class T>
struct ExactGate<Product<T>> {
  static constexpr bool kExists = true;
  static GateOutcome run(Kernel k, std::size_t n, std::uint64_t seed) {
    return exact_factors_gate<Product<T>>(k, n, seed, [](const RawResult& r) { return double{result_as<float>(r)}; });
  }
};
template <class T>
struct ExactGate<ScaledProduct<T>> {
  static constexpr bool kExists = true;
  static GateOutcome run(Kernel k, std::size_t n, std::uint64_t seed) {
    return exact_factors_gate<ScaledProduct<T>>(k, n, seed, [](const RawResult& r) {
      const Scaled v = result_as<Scaled>(r);
      return std::ldexp(v.mantissa, v.exponent);
    });
  }
};
template <>
struct ExactGate<ComposeAffine> {
  static constexpr bool kExists = true;
  static GateOutcome run(Kernel k, std::size_t n, std::uint64_t seed) {
    const std::vector<float2> x = generate_unit_steps(n, seed);
    const AffineReference want = affine_reference(x.data(), n);  // integers: exact
    const Affine got = result_as<Affine>(run_on_device<ComposeAffine>(k, x.data(), n).result);
    return gate_outcome(got, Affine{static_cast<float>(want.a), static_cast<float>(want.b)},
                        [](const Affine& a, const Affine& b) { return a.a == b.a && a.b == b.b; },
                        "unit steps composed: got x -> " + std::to_string(got.a) + " x + " + std::to_string(got.b) +
                            ", want " + std::to_string(want.a) + " x + " + std::to_string(want.b));
  }
};

}  // namespace ch13
