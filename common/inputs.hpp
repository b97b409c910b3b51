// Input data on the host: seeded generators and a loader for raw binary files.
//
// Generators are counter-based (element i depends only on seed and i), so a given seed gives the
// same array on every machine and standard library, and large arrays are filled in parallel over
// all cores with OpenMP (the same array whatever the thread count).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dtype.hpp"

namespace red {

enum class Dist {
  uniform,   // [0, 1) for floats, [0, 100] for integers
  normal,    // mean 0, standard deviation 1 (integers: rounded, times 10)
  ints,      // small integers in [-8, 8] (u8: [0, 16]); float sums of these are exact
  constant,  // every element 1 (ties everywhere: argmax must return index 0)
  signs,     // +-1 alternating with magnitudes spread over many binades: heavy cancellation
  negative,  // every element negative, in [-1000, -1): max must not return 0
};

inline constexpr Dist kAllDists[] = {Dist::uniform,  Dist::normal, Dist::ints,
                                     Dist::constant, Dist::signs,  Dist::negative};

std::string_view name(Dist d);
std::optional<Dist> parse_dist(std::string_view s);

// Leaves new elements uninitialised: a multi-gigabyte array is then first written (and its pages
// first touched) by the parallel loop that fills it, not zeroed by one thread beforehand.
template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A typed array stored as raw bytes, so one type serves every dtype.
struct HostArray {
  DType dtype = DType::f32;
  std::size_t n = 0;
  std::vector<std::byte, UninitialisedAllocator<std::byte>> bytes;

  HostArray() = default;
  // Every element zero (bytes cleared in parallel).
  HostArray(DType t, std::size_t count);
  // Elements left unset, for a caller that writes every byte next (generators, loaders, downloads).
  static HostArray uninitialised(DType t, std::size_t count);

  const void* data() const { return bytes.data(); }
  void* data() { return bytes.data(); }
  std::size_t size_bytes() const { return bytes.size(); }

  // Element i converted exactly to double (every supported dtype but i64 fits exactly;
  // i64 beyond 2^53 rounds: integer references use at_int instead).
  double at(std::size_t i) const;
  std::int64_t at_int(std::size_t i) const;
  // Store a double converted to the dtype (round to nearest for floats, truncating for integers).
  void set(std::size_t i, double v);
};

HostArray generate(DType t, std::size_t n, Dist dist, std::uint64_t seed);

// Every element set to `value` (converted to the dtype), in parallel.
HostArray filled(DType t, std::size_t n, double value);

// Data on which every sum and dot product must come out exact, in any order of additions: zeros,
// but for at most kExactNonzeros elements at random places, each an integer in [1, 8]. Any
// partial sum is then an integer of at most 8 x 2^17 = 2^20, and a dot product of two such
// arrays at most 64 x 2^17 = 2^23: exact in float. A lost, doubled or zeroed element or block
// changes the answer, whatever the error bound (runner.hpp, exact_check).
inline constexpr std::size_t kExactNonzeros = std::size_t{1} << 17;
HostArray exact_sum_input(DType t, std::size_t n, std::uint64_t seed);

// A file that cannot be used as asked (missing, a folder, the wrong size, not writable): bad input,
// which every program reports with exit code 2.
struct FileError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Raw little-endian array of the dtype. Throws FileError with a clear message when the file is
// missing or its size is not a multiple of the element size.
// Reads the first `count` elements (all of them when count is larger than the file).
HostArray load_raw(const std::string& path, DType t, std::size_t count = SIZE_MAX);
// The number of elements a file holds, with the same checks, without reading it.
std::size_t raw_element_count(const std::string& path, DType t);
// The same for elements of any size (chapter 13's bytes and pairs).
std::size_t raw_count(const std::string& path, std::size_t element_bytes);

// The memory a new allocation on the host can get: Linux's MemAvailable, which counts the page
// cache the kernel would reclaim (free pages alone, _SC_AVPHYS_PAGES, refuse inputs whenever the
// cache is full). Unknown (no /proc/meminfo): no limit is assumed.
std::size_t host_available_bytes();
// "" where `bytes` more of host memory can be had (at most 90% of host_available_bytes(), the rest
// left to what the program holds besides), else why not: "4.29 GB of host memory needed, 2.10 GB
// available". The programs check it before they allocate or generate anything large.
std::string why_host_cannot_hold(double bytes);

// An output file (--output): check_writable throws FileError, before any work is done, where
// `path` could not be written (its folder missing, or a folder of that name); write_raw writes
// `bytes` bytes to it, replacing what was there.
void check_writable(const std::string& path);
void write_raw(const std::string& path, const void* data, std::size_t bytes);

}  // namespace red
