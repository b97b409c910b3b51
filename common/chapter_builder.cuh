// Builds a Chapter (chapter.hpp) from a chapter's templated launcher, so no chapter repeats the
// runtime-to-template dispatch or the contract checks.
#pragma once

#include <string>
#include <utility>

#include "chapter.hpp"
#include "cuda_check.hpp"
#include "reduce_ops.cuh"

namespace red {

// The operator type carried by a dispatch tag: op_t<decltype(tag)>, e.g. Sum<float>.
template <class TagT>
using op_t = typename TagT::type;

// OpsList / TypesList: the red::Ops<...> and red::Types<...> the chapter supports.
// scratch(tag, n) -> bytes; launch(tag, call); kernel: a fixed name, or kernel_name(op, dtype).
template <class OpsList, class TypesList, class ScratchFn, class LaunchFn>
Chapter make_chapter(std::string name, std::string summary, ScratchFn scratch, LaunchFn launch,
                     std::function<std::size_t(std::size_t)> sum_depth,
                     std::function<std::string(Op, DType)> kernel_name) {
  Chapter ch;
  ch.name = std::move(name);
  ch.summary = std::move(summary);
  ch.support = support_of(OpsList{}, TypesList{});
  ch.scratch_bytes = [scratch](Op op, DType t, std::size_t n) {
    std::size_t bytes = 0;
    dispatch(OpsList{}, TypesList{}, op, t, [&](auto tag) { bytes = scratch(tag, n); });
    return bytes;
  };
  ch.launch = [scratch, launch, chapter_name = ch.name](const ReduceCall& c) {
    dispatch(OpsList{}, TypesList{}, c.op, c.dtype, [&](auto tag) {  // throws for unsupported pairs
      if (c.scratch_bytes < scratch(tag, c.n)) throw std::invalid_argument(chapter_name + ": scratch buffer too small");
      if (c.output == nullptr || (c.n > 0 && c.input == nullptr))
        throw std::invalid_argument(chapter_name + ": null input or output pointer");
      launch(tag, c);
    });
  };
  ch.sum_depth = std::move(sum_depth);
  ch.kernel_name = std::move(kernel_name);
  return ch;
}

template <class OpsList, class TypesList, class ScratchFn, class LaunchFn>
Chapter make_chapter(std::string name, std::string summary, ScratchFn scratch, LaunchFn launch,
                     std::function<std::size_t(std::size_t)> sum_depth, const char* kernel) {
  return make_chapter<OpsList, TypesList>(
      std::move(name), std::move(summary), scratch, launch, std::move(sum_depth),
      std::function<std::string(Op, DType)>([k = std::string(kernel)](Op, DType) { return k; }));
}

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

}  // namespace red
