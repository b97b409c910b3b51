// Chapter 13's host side that needs no CUDA compiler: the generated inputs and the float64
// references of every operator. Compiled as C++ with OpenMP (host_data.cpp), so that a 1 GiB input
// is generated and checked on every core; every result is the same for any number of threads.
#pragma once

#include <vector_types.h>  // float2

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ch13 {

// ---- inputs ---------------------------------------------------------------------------------------

// Generated floats by name: normal N(0, 1), uniform [0, 1), shifted 10^4 + N(0, 1), near100 U(95,
// 105), near_one 1 + 10^-4 N(0, 1), around_one U(0.5, 2) with every 7th negated. Chunk c of 2^20
// elements comes from its own generator, seeded from (seed, c).
bool is_float_dist(const std::string& dist);
std::vector<float> generate_floats(const std::string& dist, std::size_t n, std::uint64_t seed);
// Affine steps (a, b): a in U(0.5, 1), b in U(-1, 1).
std::vector<float2> generate_pairs(std::size_t n, std::uint64_t seed);
// Bytes for any / all: all zeros (any) or all ones (all), but for the deciding byte at `at`
// ("start", "middle", "end"; "none": nowhere).
std::vector<std::uint8_t> generate_bytes(bool all, const std::string& at, std::size_t n);

// Exact data, for the exact-data gates (host_reference.hpp): inputs on which every order of
// combining is exact, so that a kernel's result must equal the reference bit for bit.
// Factors: all 1 but for up to 64 of 2, up to 40 of 0.5 and up to 3 of -1 at spread positions, so
// that every partial product, in any order, is +-2^k with -40 <= k <= 64, exact in float; the
// product is returned in `product`.
std::vector<float> generate_exact_factors(std::size_t n, std::uint64_t seed, double& product);
// Squares: small integers (1 to 3) at every exact_squares_spacing(n)-th element, zeros elsewhere.
// The spacing grows with n so that there are never more than (2^24 - 1) / 9 nonzero elements: the
// sum of their squares, and so every partial sum in any order, is an integer below 2^24, exact in
// float, at every n the program accepts (up to 2^36 and beyond).
std::size_t exact_squares_spacing(std::size_t n);
std::vector<float> generate_exact_squares(std::size_t n);
// Affine steps x -> a x + b with a = +-1 and b in {-1, 0, 1}: every partial composition is a pair
// of integers far below 2^24, exact in float, while the order of the steps still matters.
std::vector<float2> generate_unit_steps(std::size_t n, std::uint64_t seed);

// ---- references ------------------------------------------------------------------------------------

// Neumaier's compensated sum: the reference sums' error is a few units of double's epsilon.
struct CompensatedSum {
  double sum = 0, carry = 0;
  void add(double x) {
    const double t = sum + x;
    carry += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  void merge(const CompensatedSum& o) {  // the sum of another stretch, compensated the same way
    add(o.sum);
    carry += o.carry;
  }
  double value() const { return sum + carry; }
};

// argmin: the first NaN, else the first smallest value; empty: (+inf, -1).
struct ArgMinReference {
  double value = std::numeric_limits<double>::infinity();
  long long index = -1;
};
ArgMinReference argmin_reference(const float* x, std::size_t n);

struct MinMaxReference {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
};
MinMaxReference minmax_reference(const float* x, std::size_t n);

// The product, in log space: ln|p| (compensated), its sign, whether a factor is zero, and
// sum |ln|x||, which scales the bound of the sum-of-logs form.
struct ProductReference {
  double log_abs = 0;
  int sign = 1;      // 1, -1, or 0 with a zero factor
  bool nan = false;  // a NaN factor, or 0 x inf
  double abs_log_sum = 0;
  // The product itself where double holds it (|ln p| < 709), else +-inf or 0.
  double value() const { return nan ? std::nan("") : sign == 0 ? 0.0 : sign * std::exp(log_abs); }
};
ProductReference product_reference(const float* x, std::size_t n);

// log(sum exp x), shifted by the largest element; empty or all -inf: -inf.
double lse_reference(const float* x, std::size_t n);

// Mean and population variance in two passes (compensated), and what scales their bounds.
struct MomentsReference {
  double mean = std::nan(""), variance = std::nan("");
  double abs_sum = 0;  // sum |x|
  double kappa = 1;    // sqrt(1 + n mean^2 / M2), the variance's condition number
};
MomentsReference moments_reference(const float* x, std::size_t n);

// Sum of x^2 (compensated): the user's operator of user_op.cuh.
double sum_of_squares_reference(const float* x, std::size_t n);

// Whether any byte is nonzero, and whether all are.
struct BytesReference {
  bool any = false, all = true;
};
BytesReference bytes_reference(const std::uint8_t* x, std::size_t n);

// The maps x -> a_i x + b_i composed in order, in double, and the sums their bounds scale with:
// a sequential fold, on one thread.
struct AffineReference {
  double a = 1, b = 0;
  double abs_b = 0;  // sum_i |b_i| prod_(j > i) |a_j|
};
AffineReference affine_reference(const float2* x, std::size_t n);

}  // namespace ch13
