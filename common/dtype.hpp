// Element types and operators, as the command line, the harness and the tests name them.
// Host-only: no CUDA headers, so host tests and tools can use it freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace red {

enum class DType { f16, bf16, f32, f64, u8, i32, i64 };
enum class Op { sum, max, min, argmax, dot };

inline constexpr DType kAllDTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64,
                                       DType::u8,  DType::i32,  DType::i64};
inline constexpr Op kAllOps[] = {Op::sum, Op::max, Op::min, Op::argmax, Op::dot};

std::string_view name(DType t);
std::string_view name(Op op);
std::optional<DType> parse_dtype(std::string_view s);
std::optional<Op> parse_op(std::string_view s);

std::size_t size_of(DType t);
bool is_floating(DType t);

// The type a chapter writes its result in. Sums of 16-bit floats accumulate and return f32 (an
// f16 accumulator overflows at 65504 and loses integers above 2048); sums of integers return
// i64. max, min and argmax return the input type.
DType result_dtype(DType input, Op op);

// Every chapter writes its result into a 16-byte device buffer: the value at offset 0 (in
// result_dtype), and for argmax the index as int64 at offset 8.
inline constexpr std::size_t kResultBytes = 16;
inline constexpr std::size_t kResultIndexOffset = 8;

// What a chapter supports: a list of (op, dtype) pairs.
struct OpDType {
  Op op;
  DType dtype;
  friend bool operator==(const OpDType& a, const OpDType& b) { return a.op == b.op && a.dtype == b.dtype; }
};
using Support = std::vector<OpDType>;

// Every combination of the given ops and dtypes.
Support all_of(std::initializer_list<Op> ops, std::initializer_list<DType> dtypes);

// The operators of chapter 13_custom_ops, which only its own program takes (the other programs
// refuse them by name, pointing there).
inline constexpr std::string_view kCustomOpNames[] = {
    "argmin", "minmax", "product", "log_product", "scaled_product", "any", "all", "lse", "lse_naive",
    "mean_variance", "mean_variance_naive", "affine", "sum_of_squares"};
inline bool is_custom_op(std::string_view s) {
  for (std::string_view name : kCustomOpNames)
    if (name == s) return true;
  return false;
}

}  // namespace red
