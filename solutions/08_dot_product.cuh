// Chapter 08's exercise, solved: Σ a_i·b_i and Σ a_i² in one pass over a and b.
//
// Idea: dot_two_pass's kernels carry one accumulator per thread; carry two, side by side, and every
// element costs one more FMA and no more bytes. Nothing of 07's kernels is copied: they are
// templates over what pass 1 reads (08's Products, here with a second term per element) and over
// the operator that adds accumulators (here one that adds both members). The block and warp trees,
// the fixed grid, the 16-byte vectors of a and b, the early pass 2 and the determinism all come
// with them. The two sums are the pieces of a projection coefficient, Σ a·b / Σ a².
// Cost, against dot_two_pass: the same bytes (2 x n x sizeof(T) read, 8 bytes more written),
// n more FMAs, twice the shuffles in the warp trees, 8-byte partials.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "07_two_pass/reduce.cuh"     // ch07::reduce_source, the grid and two_pass_depth
#include "08_dot_product/reduce.cuh"  // ch08::Products: what dot_two_pass reads
#include "chapter.hpp"
#include "chapter_builder.cuh"
#include "cuda_check.hpp"
#include "reduce_ops.cuh"

namespace sol08 {

// One thread's two running sums, each kept in float as 08 keeps its dot product.
struct DotAndSquares {
  float dot;      // Σ a_i · b_i
  float squares;  // Σ a_i²
};

// The result's 16 bytes (common/dtype.hpp): the dot product at offset 0, where every chapter
// writes its value (a dot product of f32, f16 or bf16 returns f32), and Σ a_i² at offset 8, where
// an argmax keeps its index. Bytes 4-7 and 12-15 are not written.
constexpr std::size_t kSquaresOffset = 8;

// The operator 07's kernels combine accumulators with: both members add, as red::Sum<float> adds
// one. append receives what pass 1 reads for one element: its two terms.
struct AddBoth {
  using Acc = DotAndSquares;
  __host__ __device__ static Acc identity() { return {0.0f, 0.0f}; }
  __device__ static Acc combine(Acc x, Acc y) { return {x.dot + y.dot, x.squares + y.squares}; }
  __device__ static Acc append(Acc acc, Acc terms, std::size_t) { return combine(acc, terms); }
  __device__ static void store(void* out, Acc acc) {
    *static_cast<float*>(out) = acc.dot;
    *reinterpret_cast<float*>(static_cast<char*>(out) + kSquaresOffset) = acc.squares;
  }
};

// ch06's warp tree moves an accumulator with an unqualified shfl_down(mask, v, offset); for this
// pair, argument-dependent lookup picks this overload: one shuffle per member.
__device__ inline DotAndSquares shfl_down(unsigned mask, DotAndSquares v, unsigned offset) {
  return {__shfl_down_sync(mask, v.dot, offset), __shfl_down_sync(mask, v.squares, offset)};
}

// What pass 1 reads: 08's Products (the same vectors of a and b, as wide as their addresses
// allow), each element now giving two terms. nvcc fuses each product with the add that follows
// (its default, --fmad=true): a_i b_i + dot and a_i a_i + squares are one FMA each.
template <class T>
struct ProductsAndSquares : ch08::Products<T> {
  using Loaded = typename ch08::Products<T>::Loaded;
  __device__ DotAndSquares element(std::size_t i) const { return terms(this->a[i], this->b[i]); }
  __device__ DotAndSquares value(const Loaded& x, unsigned j) const { return terms(x.a.at(j), x.b.at(j)); }
  __device__ static DotAndSquares terms(T a_i, T b_i) {
    const float a = red::to_wide(a_i);
    return {a * red::to_wide(b_i), a * a};
  }
};

template <class T>
std::size_t scratch_bytes(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(ch07::reduce_source<AddBoth>(nullptr, bytes, ProductsAndSquares<T>{}, n, nullptr, nullptr));
  return bytes;
}

template <class T>
void launch(const red::ReduceCall& c) {
  if (c.n > 0 && c.input2 == nullptr) throw std::invalid_argument("solution_08: no second vector");
  std::size_t bytes = c.scratch_bytes;
  const ProductsAndSquares<T> terms{{static_cast<const T*>(c.input), static_cast<const T*>(c.input2)}};
  CUDA_CHECK(ch07::reduce_source<AddBoth>(c.scratch, bytes, terms, c.n, c.output, c.stream));
}

// --- registration ----------------------------------------------------------------------------

// Both sums take the same path, so one depth serves both: 07's, for this kernel's grid, the
// deepest of the input types (16-bit vectors hold 8 elements).
template <class T>
std::size_t depth_of(std::size_t n) {
  using Source = ProductsAndSquares<T>;
  return ch07::two_pass_depth(n, ch07::pass1_blocks<AddBoth, ch07::Tuning, Source>(n),
                              ch07::unroll_of<ch07::Tuning, Source>(), Source::kCount);
}
inline std::size_t sum_depth(std::size_t n) { return std::max(depth_of<float>(n), depth_of<__half>(n)); }

inline const red::Chapter& chapter() {
  static const red::Chapter ch = red::with_bench_info(
      red::make_chapter<red::Ops<red::Dot>, red::Types<float, __half, __nv_bfloat16>>(
          "solution_08", "dot_two_pass with a second sum, of a_i squared, in the same pass (result offset 8)",
          [](auto op) {
            using T = typename decltype(op)::In;
            return red::Launcher{&scratch_bytes<T>, &launch<T>};
          },
          sum_depth, "dot_and_squares"),
      {"dot_two_pass", {{"sum_of_squares", 1}}});
  return ch;
}

}  // namespace sol08
