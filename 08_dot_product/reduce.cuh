// Chapter 08 - the dot product: a transform (a_i * b_i) in front of the reduction.
//
// Idea: a reduction reads one stream and combines; a dot product reads two and multiplies first.
// The steps of chapters 03 to 07 apply unchanged, with twice the bytes per element, so the same
// kernels are shown again with the product in the load:
//   dot_shared     03's tree in shared memory, multi-pass            (the product rounded, then added)
//   dot_coarsened  05's register accumulator and one atomic a block  (rounded product, rounded add)
//   dot_fma        the same with fmaf: one rounding and one instruction per element
//   dot_two_pass   07's fixed grid, 16-byte vectors of both inputs, warp shuffles, two passes in a
//                  fixed order: deterministic. The chapter's main kernel.
// f32, and f16/bf16 inputs with f32 accumulation. Cost: 2 x n x sizeof(T) bytes read.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "07_two_pass/reduce.cuh"
#include "chapter.hpp"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "reduce_ops.cuh"

namespace ch08 {

using red::Dot;

constexpr unsigned kBlock = 256;
constexpr unsigned kTile = 2 * kBlock;  // dot_shared: elements per block, as in 03
constexpr unsigned kCoarsen = 16;       // dot_coarsened, dot_fma: 2 x 16 elements per thread, as in 05
constexpr unsigned kUnroll = 4;         // per vector: 2 x 4 loads in flight, the bytes of 07's 8 (scripts/sweep_07.sh)

// The rounded product: __fmul_rn is never fused with the following add, so the first steps round
// twice per element, as a CPU loop without FMA would.
template <class T>
__device__ float product(T a, T b) {
  return __fmul_rn(red::to_wide(a), red::to_wide(b));
}

// --- step 1: 03's shared-memory tree ------------------------------------------------------------

// The first pass multiplies; later passes (a == partials, b == nullptr) add partials, as in 03.
template <class T, bool kFirstPass>
__global__ void dot_shared(const void* a_in, const T* b, std::size_t len, float* partials, void* result) {
  __shared__ float tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * std::size_t{kTile} + tid;
  auto term = [&](std::size_t k) {
    if constexpr (kFirstPass)
      return product(static_cast<const T*>(a_in)[k], b[k]);
    else
      return static_cast<const float*>(a_in)[k];
  };
  float v = i < len ? term(i) : 0.0f;
  if (i + kBlock < len) v = __fadd_rn(v, term(i + kBlock));
  tree[tid] = v;
  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = __fadd_rn(tree[tid], tree[tid + stride]);
  }
  if (tid == 0) {
    if (result)
      *static_cast<float*>(result) = tree[0];
    else
      partials[blockIdx.x] = tree[0];
  }
}

template <class T>
struct SharedScratch {
  float* partials_a;
  float* partials_b;
  std::size_t bytes;
  SharedScratch(void* base, std::size_t n) {
    red::ScratchCarver carve(base);
    partials_a = carve.take<float>(red::ceil_div(n, kTile));
    partials_b = carve.take<float>(red::ceil_div(n, std::size_t{kTile} * kTile));
    bytes = carve.bytes();
  }
};

template <class T>
void launch_shared(const red::ReduceCall& c) {
  if (c.n == 0) return red::launch_store_identity<Dot<T>>(c.output, c.stream);
  SharedScratch<T> s(c.scratch, c.n);
  const T* b = static_cast<const T*>(c.input2);
  red::run_multipass(
      static_cast<const T*>(c.input), c.n, kTile, s.partials_a, s.partials_b, c.output,
      [&](const T* src, std::size_t len, float* partials, void* result, std::size_t blocks) {
        dot_shared<T, true><<<blocks, kBlock, 0, c.stream>>>(src, b, len, partials, result);
        CUDA_CHECK_LAUNCH();
      },
      [&](const float* src, std::size_t len, float* partials, void* result, std::size_t blocks) {
        dot_shared<T, false><<<blocks, kBlock, 0, c.stream>>>(src, nullptr, len, partials, result);
        CUDA_CHECK_LAUNCH();
      });
}

// --- steps 2 and 3: 05's coarsened loop and one atomic per block, without and with FMA ----------

template <class T, bool kFma>
__global__ void dot_coarsened(const T* a, const T* b, std::size_t n, float* result) {
  constexpr unsigned kTileC = 2 * kCoarsen * kBlock;
  __shared__ float tree[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t first = blockIdx.x * std::size_t{kTileC} + tid;
  float acc = 0.0f;
#pragma unroll
  for (unsigned k = 0; k < 2 * kCoarsen; ++k) {
    const std::size_t i = first + std::size_t{k} * kBlock;
    if (i < n) {
      if constexpr (kFma)
        acc = fmaf(red::to_wide(a[i]), red::to_wide(b[i]), acc);  // a*b + acc, rounded once
      else
        acc = __fadd_rn(acc, product(a[i], b[i]));  // rounded product, then rounded add
    }
  }
  tree[tid] = acc;
  for (unsigned stride = kBlock / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree[tid] = __fadd_rn(tree[tid], tree[tid + stride]);
  }
  if (tid == 0) atomicAdd(result, tree[0]);
}

template <class T, bool kFma>
void launch_coarsened(const red::ReduceCall& c) {
  red::launch_store_identity<Dot<T>>(c.output, c.stream);  // before any block's atomic, same stream
  if (c.n == 0) return;
  dot_coarsened<T, kFma><<<red::ceil_div(c.n, 2 * kCoarsen * kBlock), kBlock, 0, c.stream>>>(
      static_cast<const T*>(c.input), static_cast<const T*>(c.input2), c.n, static_cast<float*>(c.output));
  CUDA_CHECK_LAUNCH();
}

// --- step 4: 07's two passes over a fixed grid, both inputs in 16-byte vectors -------------------

// Pass 1: 07's loop with two streams. Vectors of a and b line up only when both start at the same
// offset from a 16-byte boundary; the launcher otherwise passes a split that is all head, and every
// element is read singly (correct, slower).
template <class T>
__global__ void __launch_bounds__(ch07::kBlock)
    dot_pass1(const T* a, const T* b, std::size_t n, ch07::VectorSplit split, float* partials, void* result) {
  constexpr unsigned kCount = ch07::Vector<T>::kCount;
  constexpr std::size_t kTileVectors = std::size_t{ch07::kBlock} * kUnroll;
  __shared__ float per_warp[ch06::kWarp];
#if __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();  // as in 07: pass 2 may be scheduled now
#endif
  const std::size_t thread = blockIdx.x * std::size_t{ch07::kBlock} + threadIdx.x;
  const std::size_t threads = std::size_t{gridDim.x} * ch07::kBlock;
  auto fma_vectors = [](float acc, const ch07::Vector<T>& x, const ch07::Vector<T>& y) {
#pragma unroll
    for (unsigned j = 0; j < kCount; ++j) acc = fmaf(red::to_wide(x.elements[j]), red::to_wide(y.elements[j]), acc);
    return acc;
  };

  float acc = 0.0f;
  for (std::size_t i = thread; i < split.head; i += threads) acc = fmaf(red::to_wide(a[i]), red::to_wide(b[i]), acc);

  const T* body_a = a + split.head;
  const T* body_b = b + split.head;
  const std::size_t rounds = split.vectors / kTileVectors / gridDim.x;
  for (std::size_t r = 0; r < rounds; ++r) {
    const std::size_t first = (r * gridDim.x + blockIdx.x) * kTileVectors + threadIdx.x;
    ch07::Vector<T> x[kUnroll], y[kUnroll];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {  // 2 x kUnroll loads in flight
      x[u] = ch07::load_vector(body_a, first + u * ch07::kBlock);
      y[u] = ch07::load_vector(body_b, first + u * ch07::kBlock);
    }
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) acc = fma_vectors(acc, x[u], y[u]);
  }
  const std::size_t rest = rounds * gridDim.x * kTileVectors + thread;  // less than one round left
  ch07::Vector<T> x[kUnroll], y[kUnroll];
#pragma unroll
  for (unsigned u = 0; u < kUnroll; ++u)
    if (rest + u * threads < split.vectors) {
      x[u] = ch07::load_vector(body_a, rest + u * threads);
      y[u] = ch07::load_vector(body_b, rest + u * threads);
    }
#pragma unroll
  for (unsigned u = 0; u < kUnroll; ++u)
    if (rest + u * threads < split.vectors) acc = fma_vectors(acc, x[u], y[u]);

  for (std::size_t i = split.tail_begin + thread; i < n; i += threads)
    acc = fmaf(red::to_wide(a[i]), red::to_wide(b[i]), acc);

  acc = ch06::block_reduce<Dot<T>>(acc, per_warp);
  if (threadIdx.x == 0) {
    if (result)
      *static_cast<float*>(result) = acc;
    else
      partials[blockIdx.x] = acc;
  }
}

template <class T>
ch07::DeviceLimits two_pass_limits() {
  return ch07::device_limits<dot_pass1<T>>();
}

template <class T>
unsigned two_pass_blocks(std::size_t n) {
  return ch07::grid_for(n, std::size_t{ch07::kBlock} * kUnroll * ch07::Vector<T>::kCount,
                        two_pass_limits<T>().max_blocks);
}

template <class T>
ch07::VectorSplit split_for_both(const T* a, const T* b, std::size_t n) {
  const auto offset = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p) % ch07::kVectorBytes; };
  if (offset(a) == offset(b)) return ch07::split_for_vectors(a, n);
  ch07::VectorSplit all_single;
  all_single.head = all_single.tail_begin = n;
  return all_single;
}

template <class T>
std::size_t two_pass_scratch() {
  return std::size_t{two_pass_limits<T>().max_blocks} * sizeof(float);
}

template <class T>
void launch_two_pass(const red::ReduceCall& c) {
  if (c.n == 0) return red::launch_store_identity<Dot<T>>(c.output, c.stream);
  const T* a = static_cast<const T*>(c.input);
  const T* b = static_cast<const T*>(c.input2);
  auto* partials = static_cast<float*>(c.scratch);
  const unsigned blocks = two_pass_blocks<T>(c.n);
  dot_pass1<T><<<blocks, ch07::kBlock, 0, c.stream>>>(a, b, c.n, split_for_both(a, b, c.n), partials,
                                                      blocks == 1 ? c.output : nullptr);
  CUDA_CHECK_LAUNCH();
  if (blocks > 1)
    CUDA_CHECK(ch07::launch_pass2<Dot<T>>(partials, blocks, c.output, c.stream, two_pass_limits<T>().programmatic));
}

}  // namespace ch08
