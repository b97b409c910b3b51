#include "reference.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "host_types.hpp"

namespace red {

namespace {

// Neumaier's compensated sum: the error stays near one rounding of the result, independent of n.
// F = double, or long double (x86's 80-bit format, whose exponent range no sum of doubles leaves)
// for the f64 sums whose partial sums overflow double.
template <class F>
struct CompensatedSumOf {
  F sum = 0, carry = 0, abs_sum = 0;
  bool nan = false, pos_inf = false, neg_inf = false;
  void add(double x) {
    if (std::isnan(x)) {
      nan = true;
      return;
    }
    if (std::isinf(x)) {
      (x > 0 ? pos_inf : neg_inf) = true;
      return;
    }
    abs_sum += std::fabs(static_cast<F>(x));
    accumulate(x);
  }
  void accumulate(F x) {
    F t = sum + x;
    carry += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  void merge(const CompensatedSumOf& o) {
    nan |= o.nan;
    pos_inf |= o.pos_inf;
    neg_inf |= o.neg_inf;
    abs_sum += o.abs_sum;
    accumulate(o.sum);
    accumulate(o.carry);
  }
  // Non-finite inputs decide; otherwise the sum, rounded to double (inf where it exceeds double).
  double result() const {
    if (nan || (pos_inf && neg_inf)) return std::numeric_limits<double>::quiet_NaN();
    if (pos_inf) return std::numeric_limits<double>::infinity();
    if (neg_inf) return -std::numeric_limits<double>::infinity();
    return static_cast<double>(sum + carry);
  }
  bool inputs_finite() const { return !nan && !pos_inf && !neg_inf; }
};
using CompensatedSum = CompensatedSumOf<double>;

// Cuts [0, n) into chunks of 2^16 elements, reduces the chunks on all cores (OpenMP), then merges
// the partials in chunk order: the answer depends on n alone, never on the thread count.
template <class Acc, class ChunkFn, class MergeFn>
Acc reduce_chunks(std::size_t n, Acc init, ChunkFn chunk_fn, MergeFn merge_fn) {
  const std::size_t chunk = std::size_t{1} << 16;
  const std::ptrdiff_t chunks = static_cast<std::ptrdiff_t>((n + chunk - 1) / chunk);
  std::vector<Acc> partial(static_cast<std::size_t>(chunks), init);
#pragma omp parallel for schedule(dynamic, 16) if (chunks > 1)
  for (std::ptrdiff_t c = 0; c < chunks; ++c) {
    const std::size_t begin = static_cast<std::size_t>(c) * chunk;
    partial[static_cast<std::size_t>(c)] = chunk_fn(begin, std::min(n, begin + chunk), init);
  }
  Acc acc = init;
  for (const Acc& p : partial) acc = merge_fn(acc, p);
  return acc;
}

// Calls f(i, element) for i in [b, e), the element in its storage type: the dtype is decided once
// per chunk, not once per element.
template <class F>
void for_each_element(const HostArray& x, std::size_t b, std::size_t e, F f) {
  host::with_storage_type(x.dtype, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T* p = static_cast<const T*>(x.data());
    for (std::size_t i = b; i < e; ++i) f(i, p[i]);
  });
}

// "a beats b" for argmax: NaN above everything, then larger value; equal values keep the earlier.
bool argmax_beats(double a, double b) {
  if (std::isnan(b)) return false;
  if (std::isnan(a)) return true;
  return a > b;
}

struct Extreme {
  double value;
  std::int64_t ivalue;
  std::int64_t index;
};

}  // namespace

double accumulator_eps(DType input) {
  return input == DType::f64 ? std::numeric_limits<double>::epsilon()
                             : static_cast<double>(std::numeric_limits<float>::epsilon());
}

double accumulator_max(DType input) {
  return input == DType::f64 ? std::numeric_limits<double>::max()
                             : static_cast<double>(std::numeric_limits<float>::max());
}

double sum_error_bound(std::size_t depth, double eps, double abs_sum) {
  return (static_cast<double>(depth) + 1.0) * eps * abs_sum;
}

Reference reference(const HostArray& x, Op op) {
  Reference r;
  const std::size_t n = x.n;
  const bool integer = !is_floating(x.dtype);
  if (op == Op::sum) {
    if (integer) {
      // Unsigned arithmetic wraps modulo 2^64, which is what the documented i64 semantics say;
      // for i32 and u8 no wrap can happen below 2^32 elements.
      std::uint64_t total = reduce_chunks(
          n, std::uint64_t{0},
          [&](std::size_t b, std::size_t e, std::uint64_t s) {
            for_each_element(x, b, e, [&](std::size_t, auto v) { s += static_cast<std::uint64_t>(host::to_int64(v)); });
            return s;
          },
          [](std::uint64_t a, std::uint64_t b) { return a + b; });
      r.ivalue = static_cast<std::int64_t>(total);
      r.value = static_cast<double>(r.ivalue);
      return r;
    }
    auto compensated = [&](auto zero) {
      using Sum = CompensatedSumOf<decltype(zero)>;
      return reduce_chunks(
          n, Sum{},
          [&](std::size_t b, std::size_t e, Sum acc) {
            for_each_element(x, b, e, [&](std::size_t, auto v) { acc.add(host::to_double(v)); });
            return acc;
          },
          [](Sum a, const Sum& b) {
            a.merge(b);
            return a;
          });
    };
    const CompensatedSum s = compensated(0.0);
    r.value = s.result();
    r.abs_sum = s.abs_sum;
    // Finite inputs whose sum ran past double (f64 values near DBL_MAX): the compensation itself
    // overflowed (inf - inf is NaN). Again in long double, whose range holds any such sum.
    if (s.inputs_finite() && !std::isfinite(r.value + r.abs_sum)) {
      const auto wide = compensated(0.0L);
      r.value = wide.result();
      r.abs_sum = static_cast<double>(wide.abs_sum);
    }
    return r;
  }
  if (op == Op::dot) throw std::invalid_argument("reference(): use reference_dot for dot");

  // max, min, argmax: exact. Start from the identity and keep the first index on ties.
  const bool is_min = op == Op::min;
  Extreme init{is_min ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity(),
               is_min ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min(), -1};
  if (integer && x.dtype != DType::i64) {
    // the identity in the input type: the lowest/highest value it can hold
    init.ivalue = x.dtype == DType::u8
                      ? (is_min ? 255 : 0)
                      : (is_min ? std::numeric_limits<std::int32_t>::max() : std::numeric_limits<std::int32_t>::min());
  }
  auto better = [&](const Extreme& a, const Extreme& b) {  // a strictly better than b
    if (a.index < 0) return false;
    if (b.index < 0) return true;
    if (integer) return is_min ? a.ivalue < b.ivalue : a.ivalue > b.ivalue;
    if (is_min) {
      if (std::isnan(b.value)) return false;
      return std::isnan(a.value) || a.value < b.value;
    }
    return argmax_beats(a.value, b.value);
  };
  Extreme e = reduce_chunks(
      n, init,
      [&](std::size_t b, std::size_t end, Extreme acc) {
        for_each_element(x, b, end, [&](std::size_t i, auto v) {
          const Extreme c{host::to_double(v), host::to_int64(v), static_cast<std::int64_t>(i)};
          if (better(c, acc)) acc = c;
        });
        return acc;
      },
      [&](Extreme a, const Extreme& b) { return better(b, a) ? b : a; });
  r.value = integer ? static_cast<double>(e.ivalue) : e.value;
  r.ivalue = integer ? e.ivalue : 0;
  if (integer && e.index < 0) r.value = static_cast<double>(init.ivalue), r.ivalue = init.ivalue;
  r.index = op == Op::argmax ? e.index : -1;
  return r;
}

Reference reference_dot(const HostArray& a, const HostArray& b) {
  if (a.n != b.n || a.dtype != b.dtype) throw std::invalid_argument("reference_dot: mismatched inputs");
  Reference r;
  // Products of two f32 (or narrower) values are exact in double; the sum is compensated.
  CompensatedSum s = reduce_chunks(
      a.n, CompensatedSum{},
      [&](std::size_t lo, std::size_t hi, CompensatedSum acc) {
        host::with_storage_type(a.dtype, [&](auto* type) {
          using T = std::remove_pointer_t<decltype(type)>;
          const T* pa = static_cast<const T*>(a.data());
          const T* pb = static_cast<const T*>(b.data());
          for (std::size_t i = lo; i < hi; ++i) acc.add(host::to_double(pa[i]) * host::to_double(pb[i]));
        });
        return acc;
      },
      [](CompensatedSum x, const CompensatedSum& y) {
        x.merge(y);
        return x;
      });
  r.value = s.result();
  r.abs_sum = s.abs_sum;
  return r;
}

DeviceResult decode_result(const RawResult& raw, DType input, Op op) {
  DeviceResult d;
  HostArray one(result_dtype(input, op), 1);
  std::memcpy(one.data(), raw.data(), size_of(one.dtype));
  d.value = one.at(0);
  d.ivalue = is_floating(one.dtype) ? 0 : one.at_int(0);
  if (op == Op::argmax) std::memcpy(&d.index, raw.data() + kResultIndexOffset, sizeof d.index);
  return d;
}

CheckOutcome check(const Reference& ref, const DeviceResult& got, DType input, Op op, std::size_t sum_depth,
                   double absolute_slack) {
  CheckOutcome c;
  DType out = result_dtype(input, op);
  if (op == Op::argmax && got.index != ref.index) {
    c.abs_error = std::fabs(got.value - ref.value);
    c.why = "index " + std::to_string(got.index) + " differs from the reference index " + std::to_string(ref.index);
    return c;
  }
  if (!is_floating(out)) {
    c.abs_error = std::fabs(static_cast<double>(got.ivalue) - static_cast<double>(ref.ivalue));
    c.passed = got.ivalue == ref.ivalue;
    if (!c.passed) c.why = "integer result differs from the exact reference";
    return c;
  }
  if (std::isnan(ref.value) || std::isinf(ref.value)) {
    c.passed = std::isnan(ref.value) ? std::isnan(got.value) : got.value == ref.value;
    c.abs_error = c.passed ? 0 : std::numeric_limits<double>::infinity();
    if (!c.passed) c.why = "non-finite reference not reproduced";
    return c;
  }
  if (op == Op::sum || op == Op::dot) {
    // a dot product rounds each product once more than a sum rounds its terms
    std::size_t depth = sum_depth + (op == Op::dot ? 1 : 0);
    c.bound = sum_error_bound(depth, accumulator_eps(input), ref.abs_sum) + absolute_slack;
    // A partial sum can reach sum |x| (plus its rounding): where that passes the accumulator's
    // largest finite value, some order of additions overflows, and inf or NaN (inf - inf) is the
    // type's honest answer. It is judged as such, not as an error against the exact sum.
    const bool may_overflow = !(ref.abs_sum + c.bound < accumulator_max(input));
    if (may_overflow && !std::isfinite(got.value)) {
      c.passed = true;
      c.why = "a partial sum may overflow the accumulator (sum |x| = " + std::to_string(ref.abs_sum) + ")";
      return c;
    }
  }
  c.abs_error = std::fabs(got.value - ref.value);
  c.passed = !std::isnan(got.value) && c.abs_error <= c.bound;
  if (!c.passed)
    c.why = op == Op::sum || op == Op::dot ? "error exceeds the bound" : "value differs from the exact reference";
  return c;
}

}  // namespace red
