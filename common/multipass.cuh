// Host-side pieces several chapters' launchers share: the empty-input case, the multi-pass
// driver of chapters 03 and 08 (chapter 01 spells its own passes out), carving one scratch
// buffer into typed parts, and the scratch query of a CUB-style two-phase call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "chapter.hpp"
#include "cuda_check.hpp"

namespace red {

// n == 0: the result is the operator's identity (reference.hpp lists them).
template <class Op>
__global__ void store_identity(void* out) {
  Op::store(out, Op::identity());
}
template <class Op>
void launch_store_identity(void* out, cudaStream_t stream) {
  store_identity<Op><<<1, 1, 0, stream>>>(out);
  CUDA_CHECK_LAUNCH();
}

// The classic multi-pass scheme (chapters 03 and 08): each pass reduces `len` values tile by tile
// into ceil(len / tile) partials, and the passes repeat until one value remains, which the last
// pass stores into the result. Pass 1 reads `first`; later passes ping-pong between buf_a (at
// least ceil(n / tile) values) and buf_b (at least ceil(n / tile^2) values).
//
//   pass(src, len, partials, result, blocks): launch `blocks` blocks over src[0, len); result is
//   nullptr except on the last pass. first_pass reads the input, later_pass reads partials (the
//   two differ when the input and the accumulator types differ, or an argmax needs indices).
template <class Src, class T, class FirstPass, class LaterPass>
void run_multipass(Src* first, std::size_t n, std::size_t tile, T* buf_a, T* buf_b, void* result, FirstPass first_pass,
                   LaterPass later_pass) {
  std::size_t blocks = ceil_div(n, tile);
  first_pass(first, n, buf_a, blocks == 1 ? result : nullptr, blocks);
  T* src = buf_a;
  T* dst = buf_b;
  for (std::size_t len = blocks; len > 1; len = blocks) {
    blocks = ceil_div(len, tile);
    later_pass(src, len, dst, blocks == 1 ? result : nullptr, blocks);
    std::swap(src, dst);
  }
}
template <class Src, class T, class Pass>
void run_multipass(Src* first, std::size_t n, std::size_t tile, T* buf_a, T* buf_b, void* result, Pass pass) {
  run_multipass(first, n, tile, buf_a, buf_b, result, pass, pass);
}

// The longest chain of additions in a multi-pass tree: every pass adds ceil(log2(tile)) levels
// (fewer on a short last tile).
inline std::size_t multipass_depth(std::size_t n, std::size_t tile) {
  std::size_t depth = 0;
  for (std::size_t len = n; len > 1; len = ceil_div(len, tile)) depth += ceil_log2(std::min(len, tile));
  return depth;
}

// Carves typed, 256-byte aligned parts out of one scratch buffer, in order. Used both to size
// scratch (with a null base) and to split it, so the two can never disagree.
class ScratchCarver {
 public:
  explicit ScratchCarver(void* base = nullptr) : base_(static_cast<char*>(base)) {}
  template <class T>
  T* take(std::size_t count) {
    offset_ = (offset_ + 255) / 256 * 256;
    T* p = base_ ? reinterpret_cast<T*>(base_ + offset_) : nullptr;
    offset_ += count * sizeof(T);
    return p;
  }
  std::size_t bytes() const { return offset_; }

 private:
  char* base_;
  std::size_t offset_ = 0;
};

// The first phase of a CUB-style two-phase call: call(nullptr, bytes, probe) only writes the
// scratch bytes it needs for n elements into `bytes`.
template <class Call>
std::size_t scratch_query(std::size_t n, Call call) {
  ReduceCall probe;
  probe.n = n;
  std::size_t bytes = 0;
  CUDA_CHECK(call(nullptr, bytes, probe));
  return bytes;
}

// scratch_query for the library's function kCall, remembered per thread: asked again only when the
// device or n changes. A library's size query can be a whole host-side dispatch (CUB's reads the
// device's SM count and occupancy before it knows the grid); a program
// asks once per size and keeps the answer, and so does this, so that the contract's check in
// Chapter::launch does not put a second dispatch inside every timed call.
template <auto kCall>
std::size_t remembered_scratch_query(std::size_t n) {
  thread_local int last_device = -1;
  thread_local std::size_t last_n = 0, last_bytes = 0;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (device != last_device || n != last_n) {
    last_bytes = scratch_query(n, kCall);
    last_device = device;
    last_n = n;
  }
  return last_bytes;
}

}  // namespace red
