// The chapter program: the steps every chapter's main() takes, and its flags.
//
//   NN_name [--n N] [--dtype D] [--op OP] [--dist DIST] [--seed S] [--input FILE] [--offset K]
//           [--repeat R] [--json] [--help]
//
// It reduces one input on the GPU with the chapter's launch, checks the result against the host
// reference, times the launch and prints one report (or one JSON line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
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

// One run of a chapter program, in the steps every chapter's main.cu writes out:
//
//   red::Program program(chNN::chapter(), argc, argv);  // the flags parsed and checked
//   if (program.stopped()) return program.exit_code();  // --help, or a bad value
//   try {
//     const red::Launcher lesson = program.launcher();   // chNN's functions for the flags' (op, dtype)
//     const red::ReduceCall call = program.call(lesson.scratch_bytes(program.n()));
//     lesson.launch(call);
//     program.read_result(call);
//     program.check();
//     program.time();
//     return program.report();
//   } catch (...) {
//     return program.failed();
//   }
//
// Nothing stands between main() and the chapter's launch: main calls chNN::launch<Op> through the
// function pointer the chapter's table holds for the flags' (op, dtype).
class Program {
 public:
  // Parses and checks everything that needs no GPU (values, op/dtype support, the input files).
  // On --help or a bad value it has printed the help or a one-line error, and stopped() is true.
  Program(const Chapter& ch, int argc, char** argv);
  Program(const Chapter& ch, const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  bool stopped() const { return !options_; }
  int exit_code() const { return exit_code_; }
  const Options& options() const { return *options_; }
  std::size_t n() const { return options_->n; }
  // The chapter's scratch_bytes and launch for the flags' (op, dtype).
  Launcher launcher() const;

  // The GPU's part of the setup: refuses a request the device or the host cannot hold (UsageError;
  // NoGpuError without a GPU), runs the exact-data gate that check() reports (before the reader's
  // input exists, so the two never share the memory), then makes the input, uploads it, and
  // allocates the output and `scratch_bytes` of scratch: the chapter's zeroed bytes zeroed, the
  // rest and the output poisoned, so nothing stale or unwritten can pass.
  ReduceCall call(std::size_t scratch_bytes);
  // Waits for the call's stream and copies the result back.
  void read_result(const ReduceCall& call);
  // The result against the float64 reference of the host, with the chapter's bound.
  void check();
  // The chapter's launch timed back to back (cold, the L2 cleared, when the input exceeds the L2).
  void time();
  // Prints the report (or the --json line) and returns the exit code.
  int report();
  // Inside a catch block: prints the current exception's one-line message and returns its exit
  // code (no GPU: 3; a CUDA error: 4; anything refused: 2).
  int failed();

 private:
  struct Run;  // what call() makes: the inputs on both sides, the buffers, the results
  const Chapter& ch_;
  std::ostream& out_;
  std::ostream& err_;
  std::optional<Options> options_;
  int exit_code_ = kExitPassed;
  std::unique_ptr<Run> run_;
};

// The same steps on the given streams, in-process: for the tests of the program's refusals.
int chapter_main(const Chapter& ch, const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace red
