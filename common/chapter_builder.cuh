// Builds a Chapter (chapter.hpp) from a chapter's launcher templates, so no chapter repeats the
// table of supported pairs or the contract checks. Registration only: the lessons end with it.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "chapter.hpp"
#include "cuda_check.hpp"
#include "reduce_ops.cuh"

namespace red {

// For chapters that need no scratch.
inline std::size_t no_scratch(std::size_t) { return 0; }

// Builds a Chapter from a table with one Launcher per supported (op, dtype): launcher_of(O<T>{})
// returns it for each O in OpsList (red::Ops<...>) and T in TypesList (red::Types<...>). At run
// time chapter.launch(call) looks the call's (op, dtype) up in that table, checks the contract's
// preconditions and calls the chapter's launcher: no dispatch layers between the two.
template <class OpsList, class TypesList, class LauncherOf>
Chapter make_chapter(std::string name, std::string summary, LauncherOf launcher_of,
                     std::function<std::size_t(std::size_t)> sum_depth,
                     std::function<std::string(Op, DType)> kernel_name) {
  struct Row {
    OpDType pair;
    Launcher launcher;
  };
  std::vector<Row> table;
  for (const OpDType& p : support_of(OpsList{}, TypesList{}))
    dispatch(OpsList{}, TypesList{}, p.op, p.dtype, [&](auto tag) {
      table.push_back({p, launcher_of(typename decltype(tag)::type{})});
    });
  auto find = [table, chapter_name = name](Op op, DType t) -> const Launcher& {
    for (const Row& r : table)
      if (r.pair == OpDType{op, t}) return r.launcher;
    throw std::invalid_argument(chapter_name + ": no kernel for op " + std::string(red::name(op)) + " on dtype " +
                                std::string(red::name(t)));
  };
  Chapter ch;
  ch.name = std::move(name);
  ch.summary = std::move(summary);
  ch.support = support_of(OpsList{}, TypesList{});
  ch.scratch_bytes = [find](Op op, DType t, std::size_t n) { return find(op, t).scratch_bytes(n); };
  ch.launcher = [find](Op op, DType t) { return find(op, t); };
  ch.launch = [find, chapter_name = ch.name](const ReduceCall& c) {
    const Launcher& l = find(c.op, c.dtype);  // throws for unsupported pairs
    check_scratch(chapter_name, c.scratch, c.scratch_bytes, l.scratch_bytes(c.n));
    if (c.output == nullptr || (c.n > 0 && c.input == nullptr))
      throw std::invalid_argument(chapter_name + ": null input or output pointer");
    l.launch(c);
  };
  if (std::any_of(table.begin(), table.end(), [](const Row& r) { return r.launcher.zeroed_scratch_bytes; }))
    ch.zeroed_scratch_bytes = [find](Op op, DType t) {
      const Launcher& l = find(op, t);
      return l.zeroed_scratch_bytes ? l.zeroed_scratch_bytes() : std::size_t{0};
    };
  ch.sum_depth = std::move(sum_depth);
  ch.kernel_name = std::move(kernel_name);
  return ch;
}

template <class OpsList, class TypesList, class LauncherOf>
Chapter make_chapter(std::string name, std::string summary, LauncherOf launcher_of,
                     std::function<std::size_t(std::size_t)> sum_depth, const std::string& kernel) {
  return make_chapter<OpsList, TypesList>(
      std::move(name), std::move(summary), launcher_of, std::move(sum_depth),
      std::function<std::string(Op, DType)>([kernel](Op, DType) { return kernel; }));
}

}  // namespace red
