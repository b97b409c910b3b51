// Chapter 11's calls: many reductions at once. Host-side types only; the kernels are reduce.cuh
// (the lesson's teaching kernels) and variants.cuh (the tuned ones).
//
// Two layouts of one input:
//   rows      a [rows, cols] matrix, row r at input + r * stride elements (stride >= cols: padded
//             rows, a strided view): one result per row, `rows` results.
//   columns   the same matrix reduced over axis 0: one result per column, `cols` results.
// (Segments of any lengths are chapter 12's.)
// Results, one per row or column, in device memory:
//   sum      float (16-bit inputs accumulate in float)
//   max      float (the largest element, widened exactly); NaN if the row holds a NaN
//   argmax   int32: the index of the largest element within its row or column (ties: the
//            smaller index; the first NaN wins); -1 for an empty one
// An empty row or column gives the identity: sum 0, max -inf, argmax -1.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "dtype.hpp"

namespace ch11 {

enum class Layout { rows, columns };

// How the work is mapped to threads. automatic: the plan's choice from the shape (plan()).
enum class Strategy {
  automatic,
  thread_per_row,    // rows: one thread per row
  group_per_row,     // rows: a group of 2 to 32 lanes of one warp per row (Plan::lanes)
  block_per_row,     // rows: one block of 256 threads per row
  blocks_per_row,    // rows: several blocks per row, the last to finish combining their partials
  columns_tiled,     // columns: threads across the row, partials per chunk of rows, the last chunk
                     // of a strip of columns combining them (the tuned kernel lays tiles of rows)
  columns_naive,     // columns: one thread per column walks every row (the baseline)
};

// Which kernels carry out the mapping: the tuned ones (variants.cuh, what the chapter runs and
// publishes by default) or the lesson's teaching kernels (reduce.cuh), the simplest code of each
// mapping, measured beside them.
enum class Kernels { tuned, teaching };

struct Shape {
  Layout layout = Layout::rows;
  std::size_t rows = 0, cols = 0, stride = 0;
};

struct BatchedCall {
  red::Op op = red::Op::sum;
  red::DType dtype = red::DType::f32;
  const void* input = nullptr;
  Shape shape;
  void* output = nullptr;  // outputs(shape) results of result_bytes(op) each
  void* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
  Strategy strategy = Strategy::automatic;
  Kernels kernels = Kernels::tuned;
};

// What one call launches: the strategy and its sizes, and the scratch it needs. The lesson's plan
// (reduce.cuh) sets the first group; the tuned columns kernel's plan (variants.cuh) also the second.
struct Plan {
  Kernels kernels = Kernels::tuned;
  Strategy strategy = Strategy::automatic;
  unsigned lanes = 1;     // rows: lanes per row (group kernels)
  unsigned split = 1;     // blocks_per_row: blocks per row; columns: chunks of rows
  std::size_t chunk = 0;  // blocks_per_row: columns per block; columns: rows per chunk (at most)
  std::size_t scratch_bytes = 0;
  std::size_t zeroed_scratch_bytes = 0;  // every plan with scratch: the counters at its start
                                         // (counter_bytes, the same for every shape), zero before
                                         // the first call and after every call (the caller zeroes
                                         // them once); the partials follow them
  // The tuned kernels' own sizes.
  bool vector = false;    // rows: rows_aligned (every row on a 16-byte boundary, at most 2 vectors
                          // a lane, or 8 with a whole warp); columns: 16-byte loads across the row
                          // (and across the partials)
  unsigned across = 1;    // columns: threads across a row (and across the partials, in the last
                          // block of a strip: across_partials)
  unsigned across_partials = 1;
  unsigned trip = 1;      // columns: rows a thread loads at once (kColumnUnroll, or kFewRowsUnroll)
};

// A [rows, cols] matrix whose rows are `stride` elements apart (0: cols), reduced by row or by
// column.
inline Shape matrix_shape(Layout layout, std::size_t rows, std::size_t cols, std::size_t stride = 0) {
  Shape s;
  s.layout = layout;
  s.rows = rows;
  s.cols = cols;
  s.stride = stride ? stride : cols;
  return s;
}
// Results the shape has: rows or cols.
inline std::size_t outputs(const Shape& s) { return s.layout == Layout::rows ? s.rows : s.cols; }
// Bytes of one result: 4 (a float, or an int32 index).
inline std::size_t result_bytes(red::Op) { return 4; }
// Elements the reductions read: rows x cols.
inline std::size_t elements_read(const Shape& s) { return s.rows * s.cols; }
// The bytes a call's GB/s counts, the least it must move: its input read once plus the results
// written (4 bytes each).
inline std::size_t counted_bytes(const Shape& s, std::size_t element_bytes) {
  return elements_read(s) * element_bytes + outputs(s) * result_bytes(red::Op::sum);
}
// Elements the input spans: (rows - 1) x stride + cols.
inline std::size_t input_elements(const Shape& s) {
  return s.rows == 0 || s.cols == 0 ? 0 : (s.rows - 1) * s.stride + s.cols;
}

// Why a shape cannot be run, or "". Indices are int32 (argmax), so no row or column may hold more
// than 2^31 - 1 elements. The input may span at most 2^60 elements, so that its bytes (8 at most
// an element) and every count derived from them fit in 64 bits.
inline std::string why_invalid(const Shape& s) {
  constexpr std::size_t kMaxIndex = 0x7fffffff;
  constexpr std::size_t kMaxElements = std::size_t{1} << 60;
  std::size_t product = 0, span = 0;
  if (__builtin_mul_overflow(s.rows, s.cols, &product)) return "rows x cols overflows";
  if (s.stride < s.cols) return "the row stride (" + std::to_string(s.stride) + ") is below the row length (" +
                                std::to_string(s.cols) + ")";
  if (s.rows > 0 && s.cols > 0 && (__builtin_mul_overflow(s.rows - 1, s.stride, &span) || span + s.cols < span))
    return "the matrix's extent, (rows - 1) x stride + cols, overflows";
  if (s.rows > 0 && s.cols > 0 && span + s.cols > kMaxElements)
    return "the matrix spans more than 2^60 elements ((rows - 1) x stride + cols)";
  if (s.rows > kMaxIndex || s.cols > kMaxIndex) return "more than 2^31 - 1 rows or columns";
  return "";
}

// Whether a strategy reduces a layout (automatic reduces every one).
inline bool reduces(Strategy s, Layout l) {
  switch (s) {
    case Strategy::automatic: return true;
    case Strategy::thread_per_row:
    case Strategy::group_per_row:
    case Strategy::block_per_row:
    case Strategy::blocks_per_row: return l == Layout::rows;
    default: return l == Layout::columns;  // columns_tiled, columns_naive
  }
}

// The supported (op, dtype) pairs: sum, max and argmax of f32, f16 and bf16.
inline bool supported(red::Op op, red::DType t) {
  return (op == red::Op::sum || op == red::Op::max || op == red::Op::argmax) &&
         (t == red::DType::f32 || t == red::DType::f16 || t == red::DType::bf16);
}

inline std::string name(Layout l) {
  return l == Layout::rows ? "rows" : "columns";
}

inline std::string name(Kernels k) { return k == Kernels::tuned ? "tuned" : "teaching"; }

inline std::string name(Strategy s) {
  switch (s) {
    case Strategy::automatic: return "automatic";
    case Strategy::thread_per_row: return "thread_per_row";
    case Strategy::group_per_row: return "group_per_row";
    case Strategy::block_per_row: return "block_per_row";
    case Strategy::blocks_per_row: return "blocks_per_row";
    case Strategy::columns_tiled: return "columns_tiled";
    default: return "columns_naive";
  }
}

}  // namespace ch11
