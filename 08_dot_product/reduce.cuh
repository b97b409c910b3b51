// Chapter 08 - the dot product: a transform (a_i * b_i) in front of the reduction.
//
// Idea: a reduction reads one stream and combines; a dot product reads two and multiplies first.
// The chapter's kernel is chapter 07's, given something else to read: Products (below) hands 07's
// pass 1 the products a_i * b_i, as CUB's TransformReduce applies a transform before it reduces.
// Nothing of 07 is copied; the two passes, the fixed grid, the vectors (of both inputs now) and
// the determinism come with it.
// Before it, three steps show what the multiply does to the earlier chapters' kernels, and they
// are copies on purpose, each with the product written out where the load was:
//   dot_shared     03's tree in shared memory, multi-pass            (the product rounded, then added)
//   dot_coarsened  05's register accumulator and one atomic a block  (rounded product, rounded add)
//   dot_fma        the same with fmaf: one rounding and one instruction per element
//   dot_two_pass   07's reduce_source over Products: FMA, two deterministic passes. The main kernel.
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
  // [excerpt: load]
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
  // [end: load]
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

// --- step 4: 07's two passes, reading products ---------------------------------------------------

// What 07's pass 1 reads (the interface of ch07::Array), for two arrays: element i is a_i * b_i,
// the transform CUB's TransformReduce would apply. 07's kernels and launcher then do the rest, with
// Sum<float>: the dot product is the sum of the products. nvcc fuses each product with the add
// that follows into one fmaf (its default, --fmad=true): one rounding per element.
// Each vector is read as wide as its own address allows (ch07::load_at), so a and b may start at
// any offsets, and the result's bits do not depend on them.
// [excerpt: products]
template <class T, class Load = ch07::VectorLoad>
struct Products {
  using Vec = typename Load::template Vec<T>;
  struct Loaded {
    Vec a, b;
  };
  static constexpr unsigned kCount = Vec::kCount;
  static constexpr unsigned kLoads = 2;  // two vectors per element group: 07's rule then keeps 4 of each in flight
  const T* a;
  const T* b;
  unsigned width_a = ch07::load_width<sizeof(Vec)>(a);
  unsigned width_b = ch07::load_width<sizeof(Vec)>(b);
  bool element_aligned() const { return width_a >= sizeof(T) && width_b >= sizeof(T); }
  __device__ float element(std::size_t i) const { return red::to_wide(a[i]) * red::to_wide(b[i]); }
  __device__ Loaded load(std::size_t v) const {
    return {ch07::load_at<Load>(a, v, width_a), ch07::load_at<Load>(b, v, width_b)};
  }
  __device__ float value(const Loaded& x, unsigned j) const {
    return red::to_wide(x.a.at(j)) * red::to_wide(x.b.at(j));
  }
};
// [end: products]

using DotSum = red::Sum<float>;

template <class T>
std::size_t two_pass_scratch(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(ch07::reduce_source<DotSum>(nullptr, bytes, Products<T>{}, n, nullptr, nullptr));
  return bytes;
}

template <class T>
void launch_two_pass(const red::ReduceCall& c) {
  std::size_t bytes = c.scratch_bytes;
  const Products<T> products{static_cast<const T*>(c.input), static_cast<const T*>(c.input2)};
  CUDA_CHECK(ch07::reduce_source<DotSum>(c.scratch, bytes, products, c.n, c.output, c.stream));
}

}  // namespace ch08
