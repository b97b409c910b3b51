#include "inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "host_types.hpp"

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

// Below this many elements (or bytes) a loop runs on one thread: starting the thread team would
// cost more than it saves, and a test binary among several on one machine should not wake them all.
constexpr std::ptrdiff_t kParallelFrom = std::ptrdiff_t{1} << 16;

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
  return host::with_storage_type(dtype, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return host::to_double(v);
  });
}

std::int64_t HostArray::at_int(std::size_t i) const {
  return host::with_storage_type(dtype, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return host::to_int64(v);
  });
}

void HostArray::set(std::size_t i, double v) {
  host::with_storage_type(dtype, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T stored = host::from_double<T>(v);
    std::memcpy(bytes.data() + i * sizeof(T), &stored, sizeof(T));
  });
}

HostArray::HostArray(DType t, std::size_t count) : dtype(t), n(count), bytes(count * size_of(t)) {
  std::byte* p = bytes.data();
  const std::ptrdiff_t total = static_cast<std::ptrdiff_t>(bytes.size());
#pragma omp parallel for schedule(static) if (total >= kParallelFrom)
  for (std::ptrdiff_t i = 0; i < total; ++i) p[i] = std::byte{0};
}

HostArray HostArray::uninitialised(DType t, std::size_t count) {
  HostArray a;
  a.dtype = t;
  a.n = count;
  a.bytes.resize(count * size_of(t));
  return a;
}

namespace {
// Writes value_of(i) into every element, on all cores; the dtype is decided once, outside the loop.
template <class ValueOf>
HostArray fill_with(DType t, std::size_t n, ValueOf value_of) {
  HostArray a = HostArray::uninitialised(t, n);
  host::with_storage_type(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    T* out = static_cast<T*>(a.data());
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (count >= kParallelFrom)
    for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = host::from_double<T>(value_of(static_cast<std::size_t>(i)));
  });
  return a;
}
}  // namespace

HostArray generate(DType t, std::size_t n, Dist dist, std::uint64_t seed) {
  const bool integer = !is_floating(t);
  // u8 cannot hold negatives: shift the signed distributions into [0, 255].
  const bool unsigned_bytes = t == DType::u8;
  return fill_with(t, n, [=](std::size_t i) {
    double v = sample(dist, integer, seed, i);
    return unsigned_bytes ? std::fmod(std::fabs(v) + (dist == Dist::ints ? 8 : 0), 256.0) : v;
  });
}

HostArray filled(DType t, std::size_t n, double value) {
  return fill_with(t, n, [=](std::size_t) { return value; });
}

HostArray exact_sum_input(DType t, std::size_t n, std::uint64_t seed) {
  HostArray a(t, n);  // zeros
  std::mt19937_64 rng(seed);
  const std::size_t nonzeros = std::min(n, kExactNonzeros);
  for (std::size_t k = 0; k < nonzeros; ++k) {
    const std::size_t at = n == nonzeros ? k : static_cast<std::size_t>(rng() % n);
    a.set(at, static_cast<double>(1 + rng() % 8));
  }
  return a;
}

std::size_t raw_count(const std::string& path, std::size_t element_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw FileError("input file '" + path + "' does not exist or is not a regular file");
  std::uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (ec) throw FileError("cannot read the size of input file '" + path + "': " + ec.message());
  if (bytes % element_bytes != 0)
    throw FileError("input file '" + path + "' holds " + std::to_string(bytes) + " bytes, not a multiple of the " +
                    std::to_string(element_bytes) + "-byte element size");
  return static_cast<std::size_t>(bytes / element_bytes);
}

std::size_t raw_element_count(const std::string& path, DType t) {
  try {
    return raw_count(path, size_of(t));
  } catch (const FileError& e) {
    const std::string what = e.what();
    if (what.find("element size") == std::string::npos) throw;
    throw FileError(what + " of " + std::string(name(t)));
  }
}

void check_writable(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (path.empty()) throw FileError("output file: empty name");
  if (std::filesystem::is_directory(p, ec)) throw FileError("output file '" + path + "' is a folder");
  const std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(folder, ec))
    throw FileError("output file '" + path + "': the folder '" + folder.string() + "' does not exist");
}

void write_raw(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw FileError("cannot open output file '" + path + "' for writing");
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw FileError("could not write " + std::to_string(bytes) + " bytes to '" + path + "'");
}

HostArray load_raw(const std::string& path, DType t, std::size_t count) {
  HostArray a = HostArray::uninitialised(t, std::min(count, raw_element_count(path, t)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError("cannot open input file '" + path + "'");
  in.read(reinterpret_cast<char*>(a.data()), static_cast<std::streamsize>(a.size_bytes()));
  if (static_cast<std::size_t>(in.gcount()) != a.size_bytes())
    throw FileError("input file '" + path + "' ended early");
  return a;
}

std::size_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::numeric_limits<std::size_t>::max();
}

std::string why_host_cannot_hold(double bytes) {
  const double available = static_cast<double>(host_available_bytes());
  if (bytes <= 0.9 * available) return "";
  char text[96];
  std::snprintf(text, sizeof text, "%.2f GB of host memory needed, %.2f GB available", bytes / 1e9, available / 1e9);
  return text;
}

}  // namespace red
