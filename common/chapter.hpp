// The chapter contract: every chapter exposes one Chapter, so the harness, the tests and the
// benchmark treat all chapters alike.
//
//  - launch() reduces n elements (0 and sizes beyond 2^31 included) of `input` into the 16-byte
//    device result buffer `output` (see dtype.hpp for its layout), asynchronously on `stream`.
//  - It uses no memory but `scratch`, which the caller provides with at least
//    scratch_bytes(op, dtype, n) bytes: no globals, no static buffers, no hidden allocation, so
//    launches on two streams never share state and back-to-back calls may reuse one scratch.
//    A chapter may ask for the first zeroed_scratch_bytes(op, dtype) of it to be zero: the caller zeroes
//    them once, when it allocates the scratch, and every call that completes leaves them zero
//    again (chapter 10's ticket counter). Such a scratch serves one call at a time. The scratch
//    starts on a kScratchAlignment-byte boundary (cudaMalloc's are on 256-byte ones): the
//    launchers carve it into parts and load them with vectors of up to 16 bytes.
//  - It never writes `input`.
//  - `support` lists the (op, dtype) pairs it handles; the harness refuses every other pair.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dtype.hpp"

namespace red {

inline constexpr std::size_t kScratchAlignment = 16;

// The scratch a launcher is handed, checked before anything is launched: at least `needed` bytes,
// not null where any are needed, and on a kScratchAlignment boundary. `who` names the chapter in
// the message of the std::invalid_argument thrown.
inline void check_scratch(const std::string& who, const void* scratch, std::size_t bytes, std::size_t needed) {
  if (bytes < needed)
    throw std::invalid_argument(who + ": scratch buffer too small (" + std::to_string(bytes) + " bytes, " +
                                std::to_string(needed) + " needed)");
  if (needed > 0 && scratch == nullptr)
    throw std::invalid_argument(who + ": null scratch pointer (scratch_bytes says " + std::to_string(bytes) + " bytes)");
  if (reinterpret_cast<std::uintptr_t>(scratch) % kScratchAlignment != 0)
    throw std::invalid_argument(who + ": scratch not aligned to " + std::to_string(kScratchAlignment) + " bytes");
}

struct ReduceCall {
  Op op = Op::sum;
  DType dtype = DType::f32;
  const void* input = nullptr;
  const void* input2 = nullptr;  // the second vector of a dot product; unused otherwise
  std::size_t n = 0;
  void* output = nullptr;  // kResultBytes bytes of device memory
  void* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
};

// One row of a chapter's table: the chapter's own functions that size its scratch and launch it,
// instantiated for one operator type (e.g. &ch01::launch<Sum<float>>).
struct Launcher {
  std::size_t (*scratch_bytes)(std::size_t n);
  void (*launch)(const ReduceCall& call);
  // The scratch's first bytes that the caller zeroes once and every call leaves zero (above);
  // null for a chapter that needs none.
  std::size_t (*zeroed_scratch_bytes)() = nullptr;
};

struct Chapter {
  std::string name;     // the folder name, e.g. "01_naive"
  std::string summary;  // one line for --help and the benchmark
  Support support;
  std::function<std::size_t(Op, DType, std::size_t n)> scratch_bytes;
  std::function<void(const ReduceCall&)> launch;  // launcher(call.op, call.dtype).launch, after the contract's checks
  // The longest chain of floating-point additions any element goes through for this n: it sets
  // the error bound a sum must meet (reference.hpp, sum_error_bound).
  std::function<std::size_t(std::size_t n)> sum_depth;
  // The kernel (or library call) that does the work, for benchmark rows: "reduce_naive", "cub_sum".
  std::function<std::string(Op, DType)> kernel_name;
  // How many f32 atomicAdds on global memory a sum (or dot product) of n elements makes; empty
  // when it makes none. Such an atomic flushes a subnormal operand or result to zero ("the current
  // implementation of atom.add.f32 on global memory flushes subnormal inputs and results to
  // sign-preserving zero", PTX ISA), so the result may lose up to 2 FLT_MIN per atomic beyond its
  // rounding bound. runner.hpp's check_result allows for it.
  std::function<std::size_t(std::size_t n)> global_float_atomics;
  // Bytes at the start of the scratch that must be zero when a call starts, and that every call
  // leaves zero when it ends: the caller zeroes them once (Workspace does, runner.hpp) and never
  // poisons them. Empty for chapters that ask nothing of their scratch. A scratch with such bytes
  // serves one call at a time: two calls in flight on it at once would share its counter.
  std::function<std::size_t(Op, DType)> zeroed_scratch_bytes;
  // What the benchmark reports beside the kernel's name (bench.json: the label "variant of K" and
  // a counter param_<name> per setting), so that tables and charts need not read it out of names
  // or sources. variant_of: the chapter's own kernel this one is a variant of (empty for the
  // lesson's kernels and the libraries'). params: the settings that make it what it is.
  struct BenchInfo {
    std::string variant_of;
    std::vector<std::pair<std::string, double>> params;
  } bench_info;
  // The row of the chapter's table for (op, dtype): its own scratch_bytes and launch instantiated
  // for that operator type (std::invalid_argument for a pair it does not support). A chapter's
  // main() calls them directly, so nothing stands between main() and the chapter's launch.
  std::function<Launcher(Op, DType)> launcher;

  bool supports(Op op, DType t) const {
    return std::find(support.begin(), support.end(), OpDType{op, t}) != support.end();
  }
};

// The chapter with its count of global f32 atomicAdds set (chapters 04, 05, 08's coarsened steps).
inline Chapter with_global_float_atomics(Chapter ch, std::function<std::size_t(std::size_t)> count) {
  ch.global_float_atomics = std::move(count);
  return ch;
}

// The chapter with what the benchmark reports about it set.
inline Chapter with_bench_info(Chapter ch, Chapter::BenchInfo info) {
  ch.bench_info = std::move(info);
  return ch;
}

// ceil(log2(x)) for x >= 1: tree depths in sum_depth().
inline std::size_t ceil_log2(std::size_t x) {
  std::size_t d = 0;
  while ((std::size_t{1} << d) < x) ++d;
  return d;
}
inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

}  // namespace red
