// The chapter contract: every chapter exposes one Chapter, so the harness, the tests and the
// benchmark treat all chapters alike.
//
//  - launch() reduces n elements (0 and sizes beyond 2^31 included) of `input` into the 16-byte
//    device result buffer `output` (see dtype.hpp for its layout), asynchronously on `stream`.
//  - It uses no memory but `scratch`, which the caller provides with at least
//    scratch_bytes(op, dtype, n) bytes: no globals, no static buffers, no hidden allocation, so
//    launches on two streams never share state and back-to-back calls may reuse one scratch.
//  - It never writes `input`.
//  - `support` lists the (op, dtype) pairs it handles; the harness refuses every other pair.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

#include "dtype.hpp"

namespace red {

struct ReduceCall {
  Op op = Op::sum;
  DType dtype = DType::f32;
  const void* input = nullptr;
  const void* input2 = nullptr;  // the second vector of a dot product; unused otherwise
  std::size_t n = 0;
  void* output = nullptr;        // kResultBytes bytes of device memory
  void* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
};

struct Chapter {
  std::string name;     // the folder name, e.g. "01_naive"
  std::string summary;  // one line for --help and the benchmark
  Support support;
  std::function<std::size_t(Op, DType, std::size_t n)> scratch_bytes;
  std::function<void(const ReduceCall&)> launch;
  // The longest chain of floating-point additions any element goes through for this n: it sets
  // the error bound a sum must meet (reference.hpp, sum_error_bound).
  std::function<std::size_t(std::size_t n)> sum_depth;

  bool supports(Op op, DType t) const {
    return std::find(support.begin(), support.end(), OpDType{op, t}) != support.end();
  }
};

// For launchers: refuse calls that break the contract instead of computing a wrong answer.
inline void require_valid_call(const Chapter& ch, const ReduceCall& c) {
  if (!ch.supports(c.op, c.dtype))
    throw std::invalid_argument(ch.name + " does not support op " + std::string(name(c.op)) + " on dtype " +
                                std::string(name(c.dtype)));
  if (c.scratch_bytes < ch.scratch_bytes(c.op, c.dtype, c.n))
    throw std::invalid_argument(ch.name + ": scratch buffer too small");
  if (c.output == nullptr || (c.n > 0 && c.input == nullptr))
    throw std::invalid_argument(ch.name + ": null input or output pointer");
}

// ceil(log2(x)) for x >= 1: tree depths in sum_depth().
inline std::size_t ceil_log2(std::size_t x) {
  std::size_t d = 0;
  while ((std::size_t{1} << d) < x) ++d;
  return d;
}
inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

}  // namespace red
