// The host storage type of every dtype, with its conversions to and from double, so that loops
// over multi-gigabyte arrays decide the dtype once, not once per element. Used inside common/.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "dtype.hpp"

namespace red::host {

// Exact for every dtype but i64 beyond 2^53 (integer code uses to_int64 instead).
inline double to_double(__half v) { return static_cast<double>(__half2float(v)); }
inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }
template <class T>
double to_double(T v) {
  return static_cast<double>(v);
}

// For floats only as a by-product (an extreme's integer field, unused for float results): NaN
// gives 0 and values beyond int64 saturate, where a plain cast would be undefined behaviour.
template <class T>
std::int64_t to_int64(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<std::int64_t>(v);
  } else {
    const double d = to_double(v);
    constexpr double kTwo63 = 9223372036854775808.0;  // 2^63, exact in double
    if (d != d) return 0;
    if (d >= kTwo63) return std::numeric_limits<std::int64_t>::max();
    if (d < -kTwo63) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(d);
  }
}

// Round to nearest for floats, truncation for integers.
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Calls f(static_cast<T*>(nullptr)) with T the storage type of `t`: f picks T up from the
// pointer's type and runs its loop on typed elements.
template <class F>
decltype(auto) with_storage_type(DType t, F&& f) {
  switch (t) {
    case DType::f16:
      return f(static_cast<__half*>(nullptr));
    case DType::bf16:
      return f(static_cast<__nv_bfloat16*>(nullptr));
    case DType::f32:
      return f(static_cast<float*>(nullptr));
    case DType::f64:
      return f(static_cast<double*>(nullptr));
    case DType::u8:
      return f(static_cast<std::uint8_t*>(nullptr));
    case DType::i32:
      return f(static_cast<std::int32_t*>(nullptr));
    case DType::i64:
      return f(static_cast<std::int64_t*>(nullptr));
  }
  throw std::invalid_argument("unknown dtype");
}

}  // namespace red::host
