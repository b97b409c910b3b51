// What chapter 07's benchmark measures beside the lesson, and its tests hold to the same answers:
// policies that each change one of the lesson's choices (Tuning, reduce.cuh). The lesson does not
// include this file.
#pragma once

#include <cstring>
#include <string>

#include "07_two_pass/chapter.cuh"

namespace ch07 {

// Without the fixed grid: a block per tile, as in chapter 06, and as many partials for pass 2.
struct GrowingGrid : Tuning {
  static constexpr bool kFixedGrid = false;
  static std::string name() { return "growing_grid"; }
};

// Without vector loads: one element per load instruction, 32 loads in flight per thread, so a
// 4-byte input keeps the lesson's 128 bytes in flight.
struct ScalarLoad {
  template <class T>
  using Vec = Vector<T, sizeof(T)>;
  template <class T>
  __device__ static Vec<T> load(const T* body, std::size_t v) {
    return load_vector<sizeof(T)>(body, v);
  }
};
struct ScalarLoads : Tuning {
  using Load = ScalarLoad;
  static constexpr unsigned kMaxLoads = 32;
  static std::string name() { return "scalar_loads"; }
};

// Pass 2 launched the ordinary way, after pass 1 ends (the result bits are the same).
struct PlainLaunch : Tuning {
  static constexpr bool kEarlyLaunch = false;
  static std::string name() { return "plain_launch"; }
};

// Another number of vectors in flight per thread, the same for every input type.
template <unsigned N>
struct Unroll : Tuning {
  static constexpr unsigned kMaxLoads = N;
  static constexpr unsigned kMaxElements = 16 * N;  // never the limit: 16 elements per vector at most
  static std::string name() { return "unroll" + std::to_string(N); }
};

// The 16-byte load with an L2 prefetch hint (PTX `ld.global.nc.L2::256B`, sm_80+): a miss brings
// the whole 256-byte group around the address into L2. The benchmark measures whether a stream
// that reads every byte anyway gains from it.
struct L2PrefetchLoad {
  template <class T>
  using Vec = Vector<T, 16>;
  template <class T>
  __device__ static Vec<T> load(const T* body, std::size_t v) {
#if __CUDA_ARCH__ >= 800
    uint4 raw;
    asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(raw.x), "=r"(raw.y), "=r"(raw.z), "=r"(raw.w)
        : "l"(reinterpret_cast<const uint4*>(body) + v));
    Vec<T> out;
    std::memcpy(&out, &raw, 16);
    return out;
#else  // older GPUs have no such hint
    return load_vector<16>(body, v);
#endif
  }
};
template <>
inline constexpr bool prefetches_l2<L2PrefetchLoad> = true;

template <unsigned N>
struct L2Prefetch : Unroll<N> {
  using Load = L2PrefetchLoad;
  static std::string name() { return "unroll" + std::to_string(N) + "_l2prefetch"; }
};

}  // namespace ch07
