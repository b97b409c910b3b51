// What chapter 07's benchmark measures beside the lesson, and its tests hold to the same answers:
// a prefetch hint on every vector load. The other variants (other unroll depths, pass 2 launched
// the ordinary way) are parameters of chapter_with (chapter.cuh). The lesson does not include
// this file.
#pragma once

#include <cstring>

#include "07_two_pass/chapter.cuh"

namespace ch07 {

// The same load with an L2 prefetch hint (PTX `ld.global.nc.L2::256B`, sm_80+): a miss brings the
// whole 256-byte group around the address into L2. The benchmark measures whether a
// stream that reads every byte anyway gains from it.
template <class T>
__device__ inline Vector<T> load_vector_l2_256(const T* body, std::size_t v) {
#if __CUDA_ARCH__ >= 800
  uint4 raw;
  asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(raw.x), "=r"(raw.y), "=r"(raw.z), "=r"(raw.w)
      : "l"(reinterpret_cast<const uint4*>(body) + v));
#else  // older GPUs have no such hint
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(body) + v);
#endif
  Vector<T> out;
  std::memcpy(&out, &raw, kVectorBytes);
  return out;
}

struct L2PrefetchLoad {
  template <class T>
  __device__ static Vector<T> load(const T* body, std::size_t v) {
    return load_vector_l2_256(body, v);
  }
};

template <>
inline const char* load_suffix<L2PrefetchLoad> = "_l2prefetch";

}  // namespace ch07
