#include "inputs.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace red {

std::string_view name(Dist d) {
  switch (d) {
    case Dist::uniform:
      return "uniform";
    case Dist::normal:
      return "normal";
    case Dist::ints:
      return "ints";
    case Dist::constant:
      return "constant";
    case Dist::signs:
      return "signs";
    case Dist::negative:
      return "negative";
  }
  return "?";
}

std::optional<Dist> parse_dist(std::string_view s) {
  for (Dist d : kAllDists)
    if (name(d) == s) return d;
  return std::nullopt;
}

namespace {

template <class T>
T load_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void store_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// splitmix64: a well-mixed 64-bit hash of (seed, i); the basis of every generator.
std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }  // [0, 1)

double sample(Dist d, bool integer, std::uint64_t seed, std::size_t i) {
  std::uint64_t h = mix(seed, i);
  switch (d) {
    case Dist::uniform:
      return integer ? static_cast<double>(h % 101) : unit(h);
    case Dist::normal: {
      // Box-Muller on two independent hashes.
      double u1 = unit(h) + 0x1.0p-54, u2 = unit(mix(seed ^ 0x5555, i));
      double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      return integer ? std::round(10.0 * z) : z;
    }
    case Dist::ints:
      return static_cast<double>(static_cast<int>(h % 17) - 8);
    case Dist::constant:
      return 1.0;
    case Dist::signs: {
      double sign = (i % 2 == 0) ? 1.0 : -1.0;
      if (integer) return sign * static_cast<double>(h % 1000);
      int exponent = static_cast<int>(h % 41) - 20;  // magnitudes from 2^-20 to 2^20
      return sign * std::ldexp(1.0 + unit(mix(seed, ~i)), exponent);
    }
    case Dist::negative:
      return integer ? -1.0 - static_cast<double>(h % 1000) : -1.0 - 999.0 * unit(h);
  }
  return 0.0;
}

}  // namespace

double HostArray::at(std::size_t i) const {
  const std::byte* p = bytes.data() + i * size_of(dtype);
  switch (dtype) {
    case DType::f16:
      return static_cast<double>(__half2float(load_as<__half>(p)));
    case DType::bf16:
      return static_cast<double>(__bfloat162float(load_as<__nv_bfloat16>(p)));
    case DType::f32:
      return load_as<float>(p);
    case DType::f64:
      return load_as<double>(p);
    case DType::u8:
      return load_as<std::uint8_t>(p);
    case DType::i32:
      return load_as<std::int32_t>(p);
    case DType::i64:
      return static_cast<double>(load_as<std::int64_t>(p));
  }
  return 0.0;
}

std::int64_t HostArray::at_int(std::size_t i) const {
  const std::byte* p = bytes.data() + i * size_of(dtype);
  switch (dtype) {
    case DType::u8:
      return load_as<std::uint8_t>(p);
    case DType::i32:
      return load_as<std::int32_t>(p);
    case DType::i64:
      return load_as<std::int64_t>(p);
    default:
      return static_cast<std::int64_t>(at(i));
  }
}

void HostArray::set(std::size_t i, double v) {
  std::byte* p = bytes.data() + i * size_of(dtype);
  switch (dtype) {
    case DType::f16:
      store_as(p, __float2half_rn(static_cast<float>(v)));
      break;
    case DType::bf16:
      store_as(p, __float2bfloat16_rn(static_cast<float>(v)));
      break;
    case DType::f32:
      store_as(p, static_cast<float>(v));
      break;
    case DType::f64:
      store_as(p, v);
      break;
    case DType::u8:
      store_as(p, static_cast<std::uint8_t>(v));
      break;
    case DType::i32:
      store_as(p, static_cast<std::int32_t>(v));
      break;
    case DType::i64:
      store_as(p, static_cast<std::int64_t>(v));
      break;
  }
}

HostArray generate(DType t, std::size_t n, Dist dist, std::uint64_t seed) {
  HostArray a(t, n);
  const bool integer = !is_floating(t);
  // u8 cannot hold negatives: shift the signed distributions into [0, 255].
  const bool unsigned_bytes = t == DType::u8;
  parallel_for(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      double v = sample(dist, integer, seed, i);
      if (unsigned_bytes) v = std::fmod(std::fabs(v) + (dist == Dist::ints ? 8 : 0), 256.0);
      a.set(i, v);
    }
  });
  return a;
}

std::size_t raw_element_count(const std::string& path, DType t) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error("input file '" + path + "' does not exist or is not a regular file");
  std::uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error("cannot read the size of input file '" + path + "': " + ec.message());
  if (bytes % size_of(t) != 0)
    throw std::runtime_error("input file '" + path + "' holds " + std::to_string(bytes) +
                             " bytes, not a multiple of the " + std::to_string(size_of(t)) + "-byte element size of " +
                             std::string(name(t)));
  return static_cast<std::size_t>(bytes / size_of(t));
}

HostArray load_raw(const std::string& path, DType t, std::size_t count) {
  HostArray a(t, std::min(count, raw_element_count(path, t)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open input file '" + path + "'");
  in.read(reinterpret_cast<char*>(a.data()), static_cast<std::streamsize>(a.size_bytes()));
  if (static_cast<std::size_t>(in.gcount()) != a.size_bytes())
    throw std::runtime_error("input file '" + path + "' ended early");
  return a;
}

}  // namespace red
