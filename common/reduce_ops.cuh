// The reduction operators as small structs every chapter's kernels are templated on:
//
//   using Acc = ...;                      the type partial results are kept in
//   identity()                            the value that changes nothing: combine(identity, x) == x
//   load(x, i)                            element x at index i, converted to Acc
//   combine(a, b)                         associative and commutative
//   append(acc, x, i)                     combine(acc, load(x, i)) when element i comes after every
//                                         element already in acc (argmax uses it to skip index ties)
//   store(out, acc)                       writes the final result into the 16-byte result buffer
//
// Semantics (NaN, ties, overflow) are those listed in reference.hpp.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "dtype.hpp"

namespace red {

// --- element types -------------------------------------------------------------------------

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<__half>() {
  return DType::f16;
}
template <>
constexpr DType dtype_of<__nv_bfloat16>() {
  return DType::bf16;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::u8;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::i32;
}
template <>
constexpr DType dtype_of<long long>() {
  return DType::i64;
}

// 16-bit floats are widened to float for arithmetic (the conversion is exact).
template <class T>
struct widen {
  using type = T;
};
template <>
struct widen<__half> {
  using type = float;
};
template <>
struct widen<__nv_bfloat16> {
  using type = float;
};
template <class T>
using widen_t = typename widen<T>::type;

__host__ __device__ inline float to_wide(__half x) { return __half2float(x); }
__host__ __device__ inline float to_wide(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__host__ __device__ inline T to_wide(T x) {
  return x;
}

template <class T>
__device__ inline T narrow_to(widen_t<T> x) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(x);
  else
    return x;
}

template <class W>
__host__ __device__ constexpr W lowest_value() {
  if constexpr (std::is_floating_point_v<W>)
    return -std::numeric_limits<W>::infinity();
  else
    return std::numeric_limits<W>::lowest();
}
template <class W>
__host__ __device__ constexpr W highest_value() {
  if constexpr (std::is_floating_point_v<W>)
    return std::numeric_limits<W>::infinity();
  else
    return std::numeric_limits<W>::max();
}

template <class W>
__device__ inline bool is_nan(W x) {
  if constexpr (std::is_floating_point_v<W>)
    return x != x;
  else
    return false;
}

// --- operators -----------------------------------------------------------------------------

// Sum. Floats accumulate in float (double for f64); i32 and u8 in int64, exact below 2^32
// elements; i64 in int64 wrapping modulo 2^64 (done in unsigned arithmetic: signed overflow is UB).
template <class T>
struct Sum {
  using In = T;
  using Acc = std::conditional_t<std::is_floating_point_v<widen_t<T>>, widen_t<T>, long long>;
  static constexpr Op op = Op::sum;
  __host__ __device__ static Acc identity() { return Acc(0); }
  __device__ static Acc load(T x, std::size_t) { return static_cast<Acc>(to_wide(x)); }
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (std::is_integral_v<Acc>)
      return static_cast<Acc>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
    else
      return a + b;
  }
  __device__ static Acc append(Acc a, T x, std::size_t i) { return combine(a, load(x, i)); }
  __device__ static void store(void* out, Acc a) { *static_cast<Acc*>(out) = a; }
};

// max and min: NaN propagates (NaN is absorbing, so combine stays associative).
template <class T>
struct Max {
  using In = T;
  using Acc = widen_t<T>;
  static constexpr Op op = Op::max;
  __host__ __device__ static Acc identity() { return lowest_value<Acc>(); }
  __device__ static Acc load(T x, std::size_t) { return to_wide(x); }
  // One select, no branch: an early `if (is_nan(a)) return a;` made the compiler issue a
  // thread's loads one at a time (chapter 05 measured max at half the speed of sum).
  // If a is NaN it wins; if only b is NaN, `a > b` is false and b wins.
  __device__ static Acc combine(Acc a, Acc b) { return (a > b || is_nan(a)) ? a : b; }
  __device__ static Acc append(Acc a, T x, std::size_t i) { return combine(a, load(x, i)); }
  __device__ static void store(void* out, Acc a) { *static_cast<T*>(out) = narrow_to<T>(a); }
};

template <class T>
struct Min {
  using In = T;
  using Acc = widen_t<T>;
  static constexpr Op op = Op::min;
  __host__ __device__ static Acc identity() { return highest_value<Acc>(); }
  __device__ static Acc load(T x, std::size_t) { return to_wide(x); }
  // One select, no branch: an early `if (is_nan(a)) return a;` made the compiler issue a
  // thread's loads one at a time (chapter 05 measured max at half the speed of sum).
  // If a is NaN it wins; if only b is NaN, `a < b` is false and b wins.
  __device__ static Acc combine(Acc a, Acc b) { return (a < b || is_nan(a)) ? a : b; }
  __device__ static Acc append(Acc a, T x, std::size_t i) { return combine(a, load(x, i)); }
  __device__ static void store(void* out, Acc a) { *static_cast<T*>(out) = narrow_to<T>(a); }
};

// An operator's load as a transform, for CUB's TransformReduce: the element turned into the
// accumulator, for operators whose load ignores the index (every one but argmax and argmin).
template <class Op>
struct LoadElement {
  __device__ typename Op::Acc operator()(const typename Op::In& x) const { return Op::load(x, 0); }
};

// argmax: a (value, index) pair under a total order: NaN above every number, then larger value,
// then smaller index. The identity carries the largest index so that a real element always
// beats it, even one equal to -inf; store() turns that index back into -1 (empty input).
template <class W>
struct ValueIndex {
  W value;
  long long index;
};

template <class T>
struct ArgMax {
  using In = T;
  using Acc = ValueIndex<widen_t<T>>;
  static constexpr Op op = Op::argmax;
  static constexpr long long kNoIndex = std::numeric_limits<long long>::max();
  __host__ __device__ static Acc identity() { return {lowest_value<widen_t<T>>(), kNoIndex}; }
  __device__ static Acc load(T x, std::size_t i) { return {to_wide(x), static_cast<long long>(i)}; }
  __device__ static bool beats(const Acc& a, const Acc& b) {
    if (is_nan(a.value) != is_nan(b.value)) return is_nan(a.value);
    if (!is_nan(a.value) && a.value != b.value) return a.value > b.value;
    return a.index < b.index;
  }
  __device__ static Acc combine(const Acc& a, const Acc& b) { return beats(b, a) ? b : a; }
  // Element i comes after everything in a: an equal value never wins, so the index need not be
  // compared. A NaN already held is kept (the first NaN wins); the identity loses to anything.
  __device__ static Acc append(const Acc& a, T x, std::size_t i) {
    const widen_t<T> v = to_wide(x);
    const bool take = !is_nan(a.value) && (v > a.value || is_nan(v) || a.index == kNoIndex);
    return take ? Acc{v, static_cast<long long>(i)} : a;
  }
  __device__ static void store(void* out, const Acc& a) {
    *static_cast<T*>(out) = narrow_to<T>(a.value);
    *reinterpret_cast<long long*>(static_cast<char*>(out) + kResultIndexOffset) = a.index == kNoIndex ? -1 : a.index;
  }
};

// Dot product of two vectors: the sum of a_i * b_i, accumulated like Sum (floats in float, f64
// in double). The chapter's kernels form the products themselves (plainly or with fmaf); as an
// operator on partial results Dot is a Sum.
template <class T>
struct Dot {
  using In = T;
  using Acc = widen_t<T>;
  static constexpr Op op = Op::dot;
  __host__ __device__ static Acc identity() { return Acc(0); }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static void store(void* out, Acc a) { *static_cast<Acc*>(out) = a; }
};

// Element i of what a pass reads, as an accumulator: an input element goes through load
// (converted; an argmax pairs it with its index), a partial of an earlier pass already is one.
template <class Op, class Src>
__device__ typename Op::Acc read(const Src* src, std::size_t i) {
  if constexpr (std::is_same_v<Src, typename Op::Acc>)
    return src[i];
  else
    return Op::load(src[i], i);
}

// --- dispatch: runtime (op, dtype) -> the operator type a kernel is instantiated for ---------

template <class... Ts>
struct Types {};
template <template <class> class... Os>
struct Ops {};

// Every operator but the dot product, on every dtype: what each chapter from 01 on supports.
using AllOps = Ops<Sum, Max, Min, ArgMax>;
using AllTypes = Types<float, double, __half, __nv_bfloat16, std::int32_t, long long, std::uint8_t>;

// A type carried as a value, so a generic lambda can receive it: f(Tag<Sum<float>>{}).
template <class T>
struct Tag {
  using type = T;
};

namespace detail {
template <class T, template <class> class... Os, class F>
bool dispatch_op(Op op, F& f) {
  return ((Os<T>::op == op ? (f(Tag<Os<T>>{}), true) : false) || ...);
}
template <class T, template <class> class... Os>
void add_support(Support& s) {
  (s.push_back(OpDType{Os<T>::op, dtype_of<T>()}), ...);
}
}  // namespace detail

// Calls f(Tag<O<T>>{}) for the O in Ops and the T in Types that match (op, dtype); a chapter
// lists exactly what it supports, so nothing else is instantiated. Inside f:
//   using Op = typename decltype(tag)::type;
template <template <class> class... Os, class... Ts, class F>
void dispatch(Ops<Os...>, Types<Ts...>, Op op, DType dtype, F&& f) {
  bool done = ((dtype_of<Ts>() == dtype && detail::dispatch_op<Ts, Os...>(op, f)) || ...);
  if (!done)
    throw std::invalid_argument("no kernel for op " + std::string(name(op)) + " on dtype " + std::string(name(dtype)));
}

// The Support list (dtype.hpp) that matches a dispatch over the same Ops and Types.
template <template <class> class... Os, class... Ts>
Support support_of(Ops<Os...>, Types<Ts...>) {
  Support s;
  (detail::add_support<Ts, Os...>(s), ...);
  return s;
}

}  // namespace red
