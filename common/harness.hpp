// The chapter program: what every chapter's main() becomes.
//
//   NN_name [--n N] [--dtype D] [--op OP] [--dist DIST] [--seed S] [--input FILE] [--offset K]
//           [--repeat R] [--json] [--help]
//
// It reduces one input on the GPU, checks the result against the host reference, times the
// chapter's launcher and prints one report (or one JSON line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "chapter.hpp"
#include "inputs.hpp"

namespace red {

// Exit codes: a failed check, bad input and a missing GPU are told apart.
enum ExitCode : int {
  kExitPassed = 0,
  kExitCheckFailed = 1,
  kExitUsage = 2,      // bad command-line value, unsupported op/dtype, unusable file, too large
  kExitNoGpu = 3,      // no GPU, no driver, or a driver too old for this build
  kExitCudaError = 4,  // a CUDA call failed while running
};

inline constexpr std::size_t kDefaultN = std::size_t{1} << 24;
inline constexpr std::size_t kMaxOffset = 255;

struct Options {
  std::size_t n = kDefaultN;
  bool n_given = false;
  DType dtype = DType::f32;
  Op op = Op::sum;
  Dist dist = Dist::normal;
  std::uint64_t seed = 1;
  std::string input_file;
  std::string input2_file;  // dot: the second vector (generated with seed + 1 when not given)
  std::size_t offset = 0;
  int repeat = 20;
  bool json = false;
};

// Parses and validates everything that needs no GPU (values, op/dtype support, the input file).
// Returns the options, or an exit code after printing help (0) or a one-line error (2).
struct ParseResult {
  std::optional<Options> options;
  int exit_code = kExitPassed;
};
ParseResult parse_options(const Chapter& ch, const std::vector<std::string>& args, std::ostream& out,
                          std::ostream& err);

// Runs a parsed request: refuses sizes the device cannot hold, then checks, times and reports.
int run_chapter(const Chapter& ch, const Options& opt, std::ostream& out, std::ostream& err);

// parse_options + run_chapter on std::cout / std::cerr, with every exception turned into a
// one-line message and its exit code.
int chapter_main(const Chapter& ch, int argc, char** argv);
int chapter_main(const Chapter& ch, const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace red
