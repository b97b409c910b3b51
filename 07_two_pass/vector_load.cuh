// 16-byte vector loads for any element type, and the split of an array into a misaligned head,
// an aligned body of 16-byte vectors and a short tail.
//
// One 16-byte load (LDG.128) brings 4 floats, 8 halves or 16 bytes per instruction: a quarter
// of the load instructions of 4-byte loads (an eighth for halves), so the same bytes in flight take
// fewer instructions and registers. It needs an address that is a multiple of 16; an input
// that starts a few elements past such an address (a sub-array, a user's pointer) gets its first
// elements read one by one instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace red {

constexpr std::size_t kVectorBytes = 16;

template <class T>
struct Vector {
  static constexpr unsigned kCount = kVectorBytes / sizeof(T);
  T elements[kCount];
};

// Loads vector v of `body` (16-byte aligned) through the read-only path in one instruction.
template <class T>
__device__ inline Vector<T> load_vector(const T* body, std::size_t v) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(body) + v);
  Vector<T> out;
  std::memcpy(&out, &raw, kVectorBytes);  // a register reinterpretation; no memory traffic
  return out;
}

// The same load with an L2 prefetch hint (PTX `ld.global.nc.L2::256B`, sm_80+): a miss brings the
// whole 256-byte group around the address into L2. Chapter 07's benchmark measures whether a
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

// [0, head): single elements up to the first 16-byte boundary (fewer than 16 / sizeof(T)).
// [head, head + vectors * kCount): whole vectors. [tail_begin, n): the rest, fewer than kCount.
struct VectorSplit {
  std::size_t head = 0;
  std::size_t vectors = 0;
  std::size_t tail_begin = 0;
};

template <class T>
VectorSplit split_for_vectors(const T* in, std::size_t n) {
  constexpr std::size_t count = Vector<T>::kCount;
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(in);
  VectorSplit s;
  if (address % sizeof(T) != 0) {  // not even element-aligned: no vector ever lines up
    s.head = n;
    s.tail_begin = n;
    return s;
  }
  s.head = std::min(n, (kVectorBytes - address % kVectorBytes) % kVectorBytes / sizeof(T));
  s.vectors = (n - s.head) / count;
  s.tail_begin = s.head + s.vectors * count;
  return s;
}

}  // namespace red
