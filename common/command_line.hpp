// Command-line parsing for the programs that parse their own options (11, 12, 13, bench/pointer_chase,
// solutions/) and the counts of every program, the chapter programs' included (harness.cpp):
// CLI11, with this project's exit codes (harness.hpp): --help prints the usage and exits 0, a bad
// or unknown argument says why on stderr and exits 2.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <iostream>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "harness.hpp"

namespace red {

// Why `text` is not a count in [least, most], or "" with `value` set. A count is a plain decimal
// integer or 2^K. It is read from its text, never through a conversion: CLI11 reads "-1" into a
// std::size_t as 2^64 - 1, which a later check would take for a huge count.
inline std::string why_not_count(const std::string& text, std::size_t least, std::size_t most, std::size_t& value) {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  const std::string range = most == kMax ? "at least " + std::to_string(least)
                                         : std::to_string(least) + "-" + std::to_string(most);
  const auto decimal = [](const std::string& digits, std::size_t& v) {  // false: it overflows
    v = 0;
    for (char c : digits) {
      const auto digit = static_cast<std::size_t>(c - '0');
      if (v > (kMax - digit) / 10) return false;
      v = v * 10 + digit;
    }
    return true;
  };
  const bool power = text.rfind("2^", 0) == 0;
  const std::string digits = power ? text.substr(2) : text.substr(!text.empty() && text[0] == '-' ? 1 : 0);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    return "'" + text + "' is not a non-negative integer (e.g. 1000003 or 2^28)";
  if (text[0] == '-')
    return text + " must be " + (least == 0 ? "positive or 0" : "positive") +
           (least > 1 || most != kMax ? " (" + range + ")" : "");
  std::size_t v = 0;
  if (!decimal(digits, v) || (power && v >= 64)) return "'" + text + "' does not fit in 64 bits";
  if (power) v = std::size_t{1} << v;
  if (v < least || v > most) return text + " is out of range (" + range + ")";
  value = v;
  return "";
}

// A count option: CLI11's option for `variable` (any integer type wide enough for `most`), which
// refuses what why_not_count refuses, naming the option ("--rows: -1 must be positive or 0"), and
// hands CLI11 the count in decimal ("2^20" becomes "1048576"). A transform, not a check: CLI11 keeps
// only a transform's rewritten text.
template <class T>
CLI::Option* add_count(CLI::App& app, const std::string& name, T& variable, const std::string& description,
                       std::size_t least = 0, std::size_t most = std::numeric_limits<std::size_t>::max()) {
  return app.add_option(name, variable, description)
      ->transform(CLI::Validator(
          [least, most](std::string& text) {
            std::size_t value = 0;
            std::string why = why_not_count(text, least, most, value);
            if (why.empty()) text = std::to_string(value);
            return why;
          },
          "COUNT"));
}

// Returns -1 when the program should go on, else the exit code to stop with.
inline int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitPassed;
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << " (see --help)\n";
    return kExitUsage;
  }
  return -1;
}

// A bad value that a program which parses its own options finds after parsing (a shape, a file,
// an operator its kernel does not take, a size the device cannot hold): run_program exits 2 with
// its message.
struct BadInput : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Inside a catch block of such a program's main: prints the current exception's message and
// returns its exit code: 2 for bad input (any std::invalid_argument), 3 without a GPU, 4 for any
// other failure (a CUDA call that failed).
inline int program_failed(const std::string& name) {
  try {
    throw;
  } catch (const std::invalid_argument& e) {  // BadInput, and inputs.hpp's FileError
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return kExitUsage;
  } catch (const NoGpuError& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return kExitNoGpu;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of host memory\n", name.c_str());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return kExitCudaError;
  }
}

// The rest of such a program's main, once its options are parsed: run()'s exit code, or
// program_failed's.
template <class Run>
int run_program(const std::string& name, Run&& run) {
  try {
    return run();
  } catch (...) {
    return program_failed(name);
  }
}

// The rest of an experiment program's main, once its options are parsed: without a GPU it says
// so, pointing at the published output, and exits 3; otherwise run()'s exit code, or 4 (with the
// reason) when a CUDA call fails.
template <class Run>
int run_experiment(const std::string& name, const std::string& published, Run&& run) {
  if (!gpu_available()) {
    std::fprintf(stderr, "%s: no usable CUDA GPU; %s holds the published H200 run.\n", name.c_str(), published.c_str());
    return kExitNoGpu;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return kExitCudaError;
  }
}

// The whole main of an experiment program that takes no options and compares variants: --help
// prints `what` and the exit codes (1: a variant's result disagrees with the lesson's), then
// run_experiment.
template <class Run>
int experiment_without_options(int argc, char** argv, const std::string& name, const std::string& what,
                               const std::string& published, Run&& run) {
  CLI::App app{what, name};
  app.footer("Exit codes: 0 done, 1 a variant's result disagrees with the lesson's, 2 bad arguments, 3 no GPU, "
             "4 a CUDA error.");
  if (const int stop = parse_command_line(app, argc, argv); stop >= 0) return stop;
  return run_experiment(name, published, std::forward<Run>(run));
}

}  // namespace red
