// Chapter 13's operators: what people reduce with besides sum and max, and the traps in each.
//
// Every operator is a struct in the shape every chapter's kernels take (common/reduce_ops.cuh):
//
//   using In, Acc;            the element type and the partial result's
//   identity()                combine(identity, a) == a == combine(a, identity)
//   load(x, i)                element x at index i as an accumulator (a transform: CUB's
//                             TransformReduce applies one the same way)
//   combine(a, b)             associative; a holds elements that come before b's
//   append(a, x, i)           combine(a, load(x, i)), for element i after everything in a: an
//                             operator may do it cheaper (the online log-sum-exp, Welford)
//   store(out, a)             the result, into the 16-byte result buffer (layouts below)
//   kCommutative              whether combine(a, b) == combine(b, a): the kernels that reorder
//                             elements (chapter 10's, CUB's) need it; affine maps are not
//
// The naive forms of product, log-sum-exp and mean/variance are here too, beside their fixes, so
// that the benchmark and the program show the trap with numbers (README).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "reduce_ops.cuh"

namespace ch13 {

using red::to_wide;
using red::widen_t;

constexpr float kInf = std::numeric_limits<float>::infinity();

__host__ __device__ inline bool is_nan(float x) { return x != x; }

// ---- argmin, and min with max in one pass -------------------------------------------------------

// The smallest value and the index of its first occurrence; NaN wins over every number (the first
// NaN's index), as argmax's rule in common/reference.hpp. Empty: (+inf, -1).
template <class T>
struct ArgMin {
  using In = T;
  using Acc = red::ValueIndex<float>;
  static constexpr bool kCommutative = true;
  static constexpr long long kNoIndex = std::numeric_limits<long long>::max();
  __host__ __device__ static Acc identity() { return {kInf, kNoIndex}; }
  __device__ static Acc load(T x, std::size_t i) { return {to_wide(x), static_cast<long long>(i)}; }
  __device__ static bool beats(const Acc& a, const Acc& b) {
    if (is_nan(a.value) != is_nan(b.value)) return is_nan(a.value);
    if (!is_nan(a.value) && a.value != b.value) return a.value < b.value;
    return a.index < b.index;
  }
  __device__ static Acc combine(const Acc& a, const Acc& b) { return beats(b, a) ? b : a; }
  // Element i comes after everything in a: an equal value never wins, so no index compare.
  __device__ static Acc append(const Acc& a, T x, std::size_t i) {
    const float v = to_wide(x);
    const bool take = !is_nan(a.value) && (v < a.value || is_nan(v) || a.index == kNoIndex);
    return take ? Acc{v, static_cast<long long>(i)} : a;
  }
  // Result: the value (float) at byte 0, the index (int64, -1 when empty) at byte 8.
  __device__ static void store(void* out, const Acc& a) {
    static_cast<float*>(out)[0] = a.value;
    *reinterpret_cast<long long*>(static_cast<char*>(out) + 8) = a.index == kNoIndex ? -1 : a.index;
  }
};

struct Range {
  float lo, hi;
};

// Min and max together: one read of the input instead of two. NaN propagates to both.
// Empty: (+inf, -inf).
// [excerpt: minmax]
template <class T>
struct MinMax {
  using In = T;
  using Acc = Range;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return {kInf, -kInf}; }
  __device__ static Acc load(T x, std::size_t) {
    const float v = to_wide(x);
    return {v, v};
  }
  // One select each, no branch (chapter 05: a branch on NaN serialised the loads).
  __device__ static Acc combine(const Acc& a, const Acc& b) {
    return {(a.lo < b.lo || is_nan(a.lo)) ? a.lo : b.lo, (a.hi > b.hi || is_nan(a.hi)) ? a.hi : b.hi};
  }
  __device__ static Acc append(const Acc& a, T x, std::size_t i) { return combine(a, load(x, i)); }
  // Result: lo (float) at byte 0, hi at byte 4.
  __device__ static void store(void* out, const Acc& a) { *static_cast<Range*>(out) = a; }
};
// [end: minmax]

// ---- product ------------------------------------------------------------------------------------

// The plain product in float: the trap. It leaves float's range after a few hundred ordinary
// values: 300 values of 1.5 are 1.5^300 = 10^52.8, past FLT_MAX (3.4 x 10^38); 300 of 0.5 fall
// below the smallest subnormal. In range, its rounding errors multiply: its bound gamma_(n-1),
// u = 2^-24, passes 10^-4 from n = 1679 on, and the checks judge it no further (host_reference.hpp).
// Empty: 1.
template <class T>
struct Product {
  using In = T;
  using Acc = float;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return 1.0f; }
  __device__ static Acc load(T x, std::size_t) { return to_wide(x); }
  __device__ static Acc combine(Acc a, Acc b) { return a * b; }
  __device__ static Acc append(Acc a, T x, std::size_t i) { return combine(a, load(x, i)); }
  __device__ static void store(void* out, Acc a) { *static_cast<float*>(out) = a; }
};

// The product as a sum of logarithms: log2|p| = sum log2|x_i|, with the sign as the parity of the
// negative factors. The result is (ln|p|, sign): any size. Each log2|x| is the exponent (exact)
// plus the hardware's log2 of the mantissa in [1, 2) (__log2f's: within 2^-22 there), so a term
// errs by 2^-22 plus one rounding: the sum's error is n 2^-22 plus a sum's (host_reference.hpp).
// A zero factor is a term of -inf: the sum becomes -inf (p = 0), or NaN beside a +inf factor, as
// 0 x inf is. No finite sum reaches -inf: a term is at least -151 (2^-149 is float's smallest).
// An exact logf per element costs three times the instructions and halved the bandwidth.
struct LogMagnitude {
  float log2_abs;      // sum of log2|x|
  unsigned sign_bits;  // the XOR of the factors' bits: bit 31 is set for an odd number of negative ones
};
template <class T>
struct LogProduct {
  using In = T;
  using Acc = LogMagnitude;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return {0.0f, 0u}; }
  // Branch-free and without an int-to-float conversion (a branch per element, with its
  // reconvergence, or an I2F, costs more than the arithmetic): a subnormal is first scaled by 2^24
  // (exactly); the exponent field becomes a float through the 2^23 trick (the bits of 2^23 + k
  // are 0x4b000000 | k); a zero gives -inf; inf and NaN come back as they are (log2 inf = inf).
  // The mantissa is in [1, 2), never subnormal, so the hardware's lg2.approx.ftz (__log2f's
  // instruction) needs none of __log2f's subnormal handling.
  __device__ static float log2_magnitude(unsigned bits) {
    const unsigned magnitude = bits & 0x7fffffffu;
    const bool tiny = magnitude < 0x00800000u;  // below FLT_MIN: subnormal or zero
    const float a = __uint_as_float(magnitude);
    const float s = tiny ? a * 16777216.0f : a;
    const unsigned s_bits = __float_as_uint(s), field = s_bits >> 23;
    const float mantissa = __uint_as_float((s_bits & 0x007fffffu) | 0x3f800000u);  // in [1, 2)
    float log2_mantissa;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(log2_mantissa) : "f"(mantissa));
    const float exponent = __uint_as_float(0x4b000000u | field) - (tiny ? 8388608.0f + 151.0f : 8388608.0f + 127.0f);
    return magnitude == 0 ? -kInf : field == 0xffu ? s : exponent + log2_mantissa;
  }
  __device__ static Acc load(T x, std::size_t) {
    const unsigned bits = __float_as_uint(to_wide(x));
    return {log2_magnitude(bits), bits};
  }
  __device__ static Acc combine(const Acc& a, const Acc& b) { return {a.log2_abs + b.log2_abs, a.sign_bits ^ b.sign_bits}; }
  __device__ static Acc append(const Acc& a, T x, std::size_t i) { return combine(a, load(x, i)); }
  // Result: ln|p| (float; -inf for a zero factor, NaN for a NaN or for 0 x inf) at byte 0, the
  // sign (int: 1, -1 or 0) at byte 4.
  __device__ static void store(void* out, const Acc& a) {
    static_cast<float*>(out)[0] = a.log2_abs * 0.693147180559945f;
    static_cast<int*>(out)[1] = a.log2_abs == -kInf ? 0 : (a.sign_bits >> 31) ? -1 : 1;
  }
};

// The product as a mantissa and an exponent: p = m x 2^e, m a double in [0.5, 1) (or 0, inf, NaN),
// e an int. A float factor converts to double exactly, and each multiplication of mantissas rounds
// once in double (u = 2^-53), so the relative error stays below gamma_(n-1) with u = 2^-53 at any
// n (host_reference.hpp): 2 x 10^-9 at 1.7 x 10^7 factors, where the float product's bound is
// useless. The exponent cannot overflow before |e| reaches 2^31: 2^24 factors near FLT_MAX, or
// any number of factors near one.
struct Scaled {
  double mantissa;  // byte 0
  int exponent;     // byte 8 (16 bytes in all, the result buffer's size)
};
template <class T>
struct ScaledProduct {
  using In = T;
  using Acc = Scaled;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return {0.5, 1}; }
  // m back into [0.5, 1) from its exponent bits, branch-free: the 11-bit field of the high word set
  // to 1022, field - 1022 added to e. 0, inf and NaN (field 0 or 2047) stay as they are. No other m
  // has field 0: a float factor (subnormals included) is a normal double, and a product of two
  // mantissas in [0.5, 1), or of one and a factor, is far above double's smallest normal.
  __device__ static Acc normalised(double m, int e) {
    const int high = __double2hiint(m);
    const int field = (high >> 20) & 0x7ff;
    const bool special = field == 0 || field == 0x7ff;
    const double f = __hiloint2double((high & 0x800fffff) | (1022 << 20), __double2loint(m));
    return {special ? m : f, special ? e : e + field - 1022};
  }
  __device__ static Acc load(T x, std::size_t) { return normalised(static_cast<double>(to_wide(x)), 0); }
  __device__ static Acc combine(const Acc& a, const Acc& b) { return normalised(a.mantissa * b.mantissa, a.exponent + b.exponent); }
  // x after everything in a: one double multiplication, then the renormalisation.
  __device__ static Acc append(const Acc& a, T x, std::size_t) {
    return normalised(a.mantissa * static_cast<double>(to_wide(x)), a.exponent);
  }
  // Result: the mantissa (double) at byte 0, the exponent (int) at byte 8.
  __device__ static void store(void* out, const Acc& a) { *static_cast<Scaled*>(out) = a; }
};

// ---- logical any / all over bytes -----------------------------------------------------------------

// Whether any byte is nonzero (empty: false) / whether every byte is (empty: true). The chapter's
// vote kernel (reduce.cuh) does these with warp votes; as operators they also run through the
// generic kernels, for the comparison.
struct AnyNonzero {
  using In = std::uint8_t;
  using Acc = unsigned;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return 0u; }
  __device__ static Acc load(std::uint8_t x, std::size_t) { return x != 0; }
  __device__ static Acc combine(Acc a, Acc b) { return a | b; }
  __device__ static Acc append(Acc a, std::uint8_t x, std::size_t i) { return combine(a, load(x, i)); }
  __device__ static void store(void* out, Acc a) { *static_cast<int*>(out) = static_cast<int>(a); }
};
struct AllNonzero {
  using In = std::uint8_t;
  using Acc = unsigned;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return 1u; }
  __device__ static Acc load(std::uint8_t x, std::size_t) { return x != 0; }
  __device__ static Acc combine(Acc a, Acc b) { return a & b; }
  __device__ static Acc append(Acc a, std::uint8_t x, std::size_t i) { return combine(a, load(x, i)); }
  __device__ static void store(void* out, Acc a) { *static_cast<int*>(out) = static_cast<int>(a); }
};

// ---- log-sum-exp ------------------------------------------------------------------------------------

// The naive log(sum exp x): expf(x) overflows to inf from x = 88.8 on, so inputs near 100 give
// inf, however small the true answer's exponent. Empty: log 0 = -inf.
template <class T>
struct NaiveLogSumExp {
  using In = T;
  using Acc = float;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return 0.0f; }
  __device__ static Acc load(T x, std::size_t) { return expf(to_wide(x)); }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static Acc append(Acc a, T x, std::size_t i) { return combine(a, load(x, i)); }
  __device__ static void store(void* out, Acc a) { *static_cast<float*>(out) = logf(a); }
};

// The online form: carry (m, s) with s = sum exp(x - m) over the elements so far and m their
// largest value, so every exponent is <= 0. Merging rescales the smaller side's sum:
// (m1, s1) + (m2, s2) = (M, s1 exp(m1 - M) + s2 exp(m2 - M)) with M = max(m1, m2). One pass, one
// exponential per element (append: only the side that is not the new maximum needs scaling). -inf
// elements add nothing; +inf wins; NaN propagates. Empty: -inf.
struct MaxScaledSum {
  float max;
  float sum;  // of exp(x - max)
};
template <class T>
struct LogSumExp {
  using In = T;
  using Acc = MaxScaledSum;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return {-kInf, 0.0f}; }
  __device__ static Acc load(T x, std::size_t) {
    const float v = to_wide(x);
    return {v, v == -kInf ? 0.0f : 1.0f};
  }
  // One exponential, of the side with the smaller maximum (the other side's is exp(0) = 1), and no
  // branch: this runs in every tree and, in the ordered kernel, several times a trip. max.NaN
  // propagates a NaN; a side at -inf (empty, or only -inf) adds 0; with both at +inf the sum turns
  // NaN but the max, inf, decides the result (store).
  __device__ static Acc combine(const Acc& a, const Acc& b) {
    float m, lo;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a.max), "f"(b.max));
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(lo) : "f"(a.max), "f"(b.max));
    const bool a_high = a.max >= b.max;
    const float e = lo == -kInf ? 0.0f : expf(lo - m);
    return {m, fmaf(a_high ? b.sum : a.sum, e, a_high ? a.sum : b.sum)};
  }
  // x after everything in a: one exponential, of whichever side is below the new maximum, with
  // the hardware's exp2 (__expf: 2 + 1.16 |y| ulp for exp(y), y <= 0 here; the bound counts it).
  // max.NaN and min.NaN propagate a NaN (fmaxf would drop it); a -inf below adds 0; with both
  // infinite the sum turns NaN but the max, inf, decides the result (store).
  __device__ static Acc append(const Acc& a, T x, std::size_t) {
    const float v = to_wide(x);
    float m, lo;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a.max), "f"(v));
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(lo) : "f"(a.max), "f"(v));
    const float e = lo == -kInf ? 0.0f : __expf(lo - m);
    return {m, v > a.max ? fmaf(a.sum, e, 1.0f) : a.sum + e};
  }
  __device__ static void store(void* out, const Acc& a) {
    *static_cast<float*>(out) = (a.max == -kInf || a.max == kInf || is_nan(a.max)) ? a.max : a.max + logf(a.sum);
  }
};

// ---- mean and variance --------------------------------------------------------------------------------

// Result of both forms: the mean (float) at byte 0, the population variance (float, divided by n;
// 0 for one element, NaN with the mean for none) at byte 4, the count (uint64) at byte 8.
struct MeanVarianceResult {
  float mean;
  float variance;
  unsigned long long count;
};

// The naive form: sum x and sum x^2 in float, then (sum x^2 - (sum x)^2 / n) / n. On data with a
// large mean both sums are huge and nearly equal, and their difference is rounding noise: for
// 10^4 + N(0, 1), sum x^2 / n is 10^8 with float's eps = 1.2 x 10^-7, so the variance (1) is lost
// in the last digit of each term.
struct PowerSums {
  float sum, sum_squares;
  unsigned long long count;
};
template <class T>
struct NaiveMeanVariance {
  using In = T;
  using Acc = PowerSums;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return {0.0f, 0.0f, 0ull}; }
  __device__ static Acc load(T x, std::size_t) {
    const float v = to_wide(x);
    return {v, v * v, 1ull};
  }
  __device__ static Acc combine(const Acc& a, const Acc& b) { return {a.sum + b.sum, a.sum_squares + b.sum_squares, a.count + b.count}; }
  __device__ static Acc append(const Acc& a, T x, std::size_t) {
    const float v = to_wide(x);
    return {a.sum + v, fmaf(v, v, a.sum_squares), a.count + 1};
  }
  __device__ static void store(void* out, const Acc& a) {
    const float n = static_cast<float>(a.count);
    const float mean = a.sum / n;
    *static_cast<MeanVarianceResult*>(out) = {mean, a.count ? (a.sum_squares - a.sum * mean) / n : mean, a.count};
  }
};

// Welford's update within a thread (each element moves the mean by its share and adds to M2, the
// sum of squared deviations from the current mean), and Chan, Golub and LeVeque's pairwise merge
// of (count, mean, M2) between threads, blocks and the last block:
//   n = na + nb, d = mean_b - mean_a, mean = mean_a + d nb / n, M2 = M2a + M2b + d^2 na nb / n.
// Both work with deviations from a mean, never with the raw squares, so a large mean costs nothing.
// References: B. P. Welford, Technometrics 4(3), 1962; T. F. Chan, G. H. Golub, R. J. LeVeque,
// "Algorithms for computing the sample variance", The American Statistician 37(3), 1983.
struct Moments {
  float mean, m2;
  unsigned long long count;
};
template <class T>
struct MeanVariance {
  using In = T;
  using Acc = Moments;
  static constexpr bool kCommutative = true;
  __host__ __device__ static Acc identity() { return {0.0f, 0.0f, 0ull}; }
  __device__ static Acc load(T x, std::size_t) { return {to_wide(x), 0.0f, 1ull}; }
  __device__ static Acc combine(const Acc& a, const Acc& b) {
    if (a.count == 0) return b;
    if (b.count == 0) return a;
    const unsigned long long n = a.count + b.count;
    const float fa = static_cast<float>(a.count), fb = static_cast<float>(b.count), fn = static_cast<float>(n);
    const float d = b.mean - a.mean, wb = fb / fn;
    return {fmaf(d, wb, a.mean), a.m2 + b.m2 + d * d * fa * wb, n};
  }
  __device__ static Acc append(const Acc& a, T x, std::size_t) {
    const float v = to_wide(x);
    const unsigned long long n = a.count + 1;
    const float d = v - a.mean;
    const float mean = fmaf(d, __frcp_rn(static_cast<float>(n)), a.mean);
    return {mean, fmaf(d, v - mean, a.m2), n};
  }
  __device__ static void store(void* out, const Acc& a) {
    const float n = static_cast<float>(a.count);
    *static_cast<MeanVarianceResult*>(out) = {a.count ? a.mean : nanf(""), a.count ? a.m2 / n : nanf(""), a.count};
  }
};

// ---- a non-commutative operator: composing affine maps ----------------------------------------------

// Element i is the map x -> a_i x + b_i (one step of the recurrence h_i = a_i h_(i-1) + b_i, as in
// an exponential moving average or a linear RNN's scan). The reduction composes them in order:
// applying f_0, then f_1, ..., is one map, and h_n = that map (h_0). Composing is associative but
// not commutative: f_1 after f_0 differs from f_0 after f_1. Identity: x -> x. Empty: (1, 0).
struct Affine {
  float a, b;  // x -> a x + b
};
struct ComposeAffine {
  using In = float2;  // (a, b) of one step
  using Acc = Affine;
  static constexpr bool kCommutative = false;
  __host__ __device__ static Acc identity() { return {1.0f, 0.0f}; }
  __device__ static Acc load(float2 x, std::size_t) { return {x.x, x.y}; }
  // f (the earlier elements) then g (the later): x -> g.a (f.a x + f.b) + g.b.
  __device__ static Acc combine(const Acc& f, const Acc& g) { return {g.a * f.a, fmaf(g.a, f.b, g.b)}; }
  __device__ static Acc append(const Acc& f, float2 x, std::size_t i) { return combine(f, load(x, i)); }
  // Result: a (float) at byte 0, b at byte 4.
  __device__ static void store(void* out, const Acc& f) { *static_cast<Affine*>(out) = f; }
};

// ---- a user's own operator from functors ----------------------------------------------------------

// What a caller writes, CUB-style: a combining functor, the identity, and optionally a transform
// applied to each element first (TransformReduce), as default-constructible function objects:
//   struct Combine   { __device__ Acc operator()(Acc a, Acc b) const; };  // associative
//   struct Identity  { __host__ __device__ Acc operator()() const; };
//   struct Transform { __device__ Acc operator()(In x) const; };         // default: a conversion
// kCommutative says whether combine may see its operands swapped; launch() refuses a
// non-commutative one for the reordering kernel (reduce.cuh).
template <class Acc>
struct Convert {
  template <class In>
  __device__ Acc operator()(In x) const {
    return static_cast<Acc>(to_wide(x));
  }
};
template <class InT, class AccT, class Combine, class Identity, class Transform = Convert<AccT>, bool kCommutativeV = true>
struct FromFunctors {
  using In = InT;
  using Acc = AccT;
  static constexpr bool kCommutative = kCommutativeV;
  __host__ __device__ static Acc identity() { return Identity{}(); }
  __device__ static Acc load(In x, std::size_t) { return Transform{}(x); }
  __device__ static Acc combine(const Acc& a, const Acc& b) { return Combine{}(a, b); }
  __device__ static Acc append(const Acc& a, In x, std::size_t i) { return combine(a, load(x, i)); }
  __device__ static void store(void* out, const Acc& a) {
    static_assert(sizeof(Acc) <= red::kResultBytes, "the result buffer holds 16 bytes");
    *static_cast<Acc*>(out) = a;
  }
};

}  // namespace ch13
