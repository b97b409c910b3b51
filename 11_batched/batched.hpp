// Chapter 11's calls: many reductions at once. Host-side types only; the kernels are reduce.cuh.
//
// Three layouts of one input:
//   rows      a [rows, cols] matrix, row r at input + r * stride elements (stride >= cols: padded
//             rows, a strided view): one result per row, `rows` results.
//   columns   the same matrix reduced over axis 0: one result per column, `cols` results.
//   segments  CSR-style: segment s is elements [offsets[s], offsets[s + 1]) of an input of n
//             elements (offsets: `segments + 1` int64 values in device memory, nondecreasing, within
//             [0, n]); empty segments allowed: one result per segment.
// Results, one per row, column or segment, in device memory:
//   sum      float (16-bit inputs accumulate in float)
//   max      float (the largest element, widened exactly); NaN if the row holds a NaN
//   argmax   int32: the index of the largest element within its row, column or segment (ties: the
//            smaller index; the first NaN wins); -1 for an empty one
// An empty row, column or segment gives the identity: sum 0, max -inf, argmax -1.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "dtype.hpp"

namespace ch11 {

enum class Layout { rows, columns, segments };

// How the work is mapped to threads. automatic: the launcher's choice from the shape (choose()).
enum class Strategy {
  automatic,
  thread_per_row,    // rows: one thread per row
  group_per_row,     // rows: a group of 2 to 32 lanes of one warp per row (group_lanes)
  block_per_row,     // rows: one block of 256 threads per row
  blocks_per_row,    // rows: several blocks per row, then a second pass over their partials
  columns_tiled,     // columns: threads across the row, partials per chunk of rows, a second pass
  columns_naive,     // columns: one thread per column walks every row (the baseline)
  segments_balanced, // segments: the elements split evenly among blocks, whatever the lengths
  segments_naive,    // segments: a group per segment whatever its length (no split)
};

struct Shape {
  Layout layout = Layout::rows;
  std::size_t rows = 0, cols = 0, stride = 0;  // rows and columns
  std::size_t n = 0;                           // segments: the input's elements
  std::size_t segments = 0;                    // segments: how many (offsets holds segments + 1)
  const std::int64_t* offsets = nullptr;       // segments: device memory
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
};

// Shapes by layout: a [rows, cols] matrix whose rows are `stride` elements apart (0: cols), reduced
// by row or by column; `count` segments of an input of n elements (offsets set apart).
inline Shape matrix_shape(Layout layout, std::size_t rows, std::size_t cols, std::size_t stride = 0) {
  Shape s;
  s.layout = layout;
  s.rows = rows;
  s.cols = cols;
  s.stride = stride ? stride : cols;
  return s;
}
inline Shape segment_shape(std::size_t count, std::size_t n) {
  Shape s;
  s.layout = Layout::segments;
  s.segments = count;
  s.n = n;
  return s;
}

// Results the shape has: rows, cols or segments.
inline std::size_t outputs(const Shape& s) {
  return s.layout == Layout::rows ? s.rows : s.layout == Layout::columns ? s.cols : s.segments;
}
// Bytes of one result: 4 (a float, or an int32 index).
inline std::size_t result_bytes(red::Op) { return 4; }
// Elements the reductions read: rows x cols, or n.
inline std::size_t elements_read(const Shape& s) { return s.layout == Layout::segments ? s.n : s.rows * s.cols; }
// The bytes a call's GB/s counts, the least it must move: its input read once plus the results
// written (4 bytes each). A segmented call's input is its elements and its segments + 1 int64
// offsets, counted as CUB's own segmented-reduce benchmark counts them
// (cub/benchmarks/bench/segmented_reduce/variable_base.cuh in NVIDIA/cccl: the offsets among the
// global memory reads); rows and columns have no offsets.
inline std::size_t counted_bytes(const Shape& s, std::size_t element_bytes) {
  const std::size_t offsets = s.layout == Layout::segments ? (s.segments + 1) * sizeof(std::int64_t) : 0;
  return elements_read(s) * element_bytes + offsets + outputs(s) * result_bytes(red::Op::sum);
}
// Elements the input spans: (rows - 1) x stride + cols, or n.
inline std::size_t input_elements(const Shape& s) {
  if (s.layout == Layout::segments) return s.n;
  return s.rows == 0 || s.cols == 0 ? 0 : (s.rows - 1) * s.stride + s.cols;
}

// Why a shape cannot be run, or "". Indices are int32 (argmax), so no row, column or input may
// hold more than 2^31 - 1 elements; segment offsets live on the device (check_offsets checks a
// host copy).
// The input may span at most 2^60 elements, so that its bytes (8 at most an element) and every
// count derived from them fit in 64 bits.
inline std::string why_invalid(const Shape& s) {
  constexpr std::size_t kMaxIndex = 0x7fffffff;
  constexpr std::size_t kMaxElements = std::size_t{1} << 60;
  if (s.layout == Layout::segments) {
    if (s.segments >= 0xffffffffu) return "more than 2^32 - 2 segments";
    if (s.n > kMaxElements) return "n above 2^60 elements";
    return "";
  }
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

// Why a host copy of segments + 1 offsets is not a valid CSR for an input of n elements, or "".
inline std::string check_offsets(const std::int64_t* o, std::size_t segments, std::size_t n) {
  for (std::size_t s = 0; s <= segments; ++s) {
    if (o[s] < 0 || static_cast<std::size_t>(o[s]) > n)
      return "offset " + std::to_string(s) + " (" + std::to_string(o[s]) + ") lies outside [0, " + std::to_string(n) + "]";
    if (s > 0 && o[s] < o[s - 1])
      return "offsets decrease at " + std::to_string(s) + " (" + std::to_string(o[s - 1]) + " then " +
             std::to_string(o[s]) + ")";
    if (s > 0 && o[s] - o[s - 1] > 0x7fffffff) return "segment " + std::to_string(s - 1) + " holds more than 2^31 - 1 elements";
  }
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
    case Strategy::columns_tiled:
    case Strategy::columns_naive: return l == Layout::columns;
    default: return l == Layout::segments;
  }
}

// The supported (op, dtype) pairs: sum, max and argmax of f32, f16 and bf16.
inline bool supported(red::Op op, red::DType t) {
  return (op == red::Op::sum || op == red::Op::max || op == red::Op::argmax) &&
         (t == red::DType::f32 || t == red::DType::f16 || t == red::DType::bf16);
}

inline std::string name(Layout l) {
  switch (l) {
    case Layout::rows: return "rows";
    case Layout::columns: return "columns";
    default: return "segments";
  }
}

inline std::string name(Strategy s) {
  switch (s) {
    case Strategy::automatic: return "automatic";
    case Strategy::thread_per_row: return "thread_per_row";
    case Strategy::group_per_row: return "group_per_row";
    case Strategy::block_per_row: return "block_per_row";
    case Strategy::blocks_per_row: return "blocks_per_row";
    case Strategy::columns_tiled: return "columns_tiled";
    case Strategy::columns_naive: return "columns_naive";
    case Strategy::segments_balanced: return "segments_balanced";
    default: return "segments_naive";
  }
}

}  // namespace ch11
