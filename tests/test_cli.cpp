// Every refusal of the chapter program, run in-process through chapter_main().
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "command_line.hpp"
#include "cuda_check.hpp"
#include "harness.hpp"

using namespace red;

namespace {

// Stand-in chapters that must never be launched by a refused request.
Chapter refusing_chapter(std::string name, Support support) {
  return Chapter{std::move(name),
                 "a stand-in chapter for the command-line tests",
                 std::move(support),
                 [](Op, DType, std::size_t) { return std::size_t{0}; },
                 [](const ReduceCall&) { throw std::logic_error("a refused request reached the launcher"); },
                 [](std::size_t n) { return n; },
                 [](Op, DType) { return std::string("none"); },
                 {},
                 {},
                 {},
                 [](Op, DType) {
                   return Launcher{[](std::size_t) { return std::size_t{0}; },
                                   [](const ReduceCall&) { throw std::logic_error("a refused request reached the launch"); }};
                 }};
}

// f32 sum and max.
const Chapter& fake_chapter() {
  static const Chapter ch = refusing_chapter("00_fake", all_of({Op::sum, Op::max}, {DType::f32}));
  return ch;
}

// f32 dot only.
const Chapter& fake_dot_chapter() {
  static const Chapter ch = refusing_chapter("00_fake_dot", all_of({Op::dot}, {DType::f32}));
  return ch;
}

struct Run {
  int code;
  std::string out, err;
};
Run run(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = chapter_main(fake_chapter(), args, out, err);
  return {code, out.str(), err.str()};
}

std::string write_file(const std::string& name, std::size_t bytes) {
  std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream f(path, std::ios::binary);
  for (std::size_t i = 0; i < bytes; ++i) f.put(static_cast<char>(i));
  return path;
}

void refused(std::vector<std::string> args, const std::string& message) {
  Run r = run(args);
  std::string joined;
  for (auto& a : args) joined += a + " ";
  INFO("args: ", joined, "\nstderr: ", r.err);
  CHECK(r.code == kExitUsage);
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(r.err.find("00_fake: error:") == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
}

}  // namespace

TEST_CASE("--help prints the flags and the supported pairs, exit 0") {
  Run r = run({"--help"});
  CHECK(r.code == 0);
  for (const char* flag : {"--n", "--dtype", "--op", "--dist", "--seed", "--input", "--offset", "--repeat", "--json"})
    CHECK(r.out.find(flag) != std::string::npos);
  CHECK(r.out.find("sum/f32, max/f32") != std::string::npos);
}

TEST_CASE("bad numbers are refused") {
  refused({"--n", "abc"}, "not a non-negative integer");
  refused({"--n", "-5"}, "--n: -5 must be positive or 0");
  refused({"--n", "12x"}, "not a non-negative integer");
  refused({"--n", "99999999999999999999999"}, "does not fit in 64 bits");
  refused({"--n", "2^64"}, "does not fit in 64 bits");
  refused({"--n", "2^62"}, "cannot be addressed");
  refused({"--seed", "-1"}, "--seed: -1 must be positive or 0");
  refused({"--repeat", "0"}, "--repeat: 0 is out of range (1-100000)");
  refused({"--repeat", "-3"}, "--repeat: -3 must be positive (1-100000)");
  refused({"--offset", "256"}, "out of range");
  refused({"--offset", "-1"}, "--offset: -1 must be positive or 0 (0-255)");
}

TEST_CASE("counts: one reading for every program, negative ones refused by name, never wrapped") {
  const auto why = [](const std::string& text, std::size_t least = 0,
                      std::size_t most = std::numeric_limits<std::size_t>::max()) {
    std::size_t value = 7;
    return why_not_count(text, least, most, value);
  };
  std::size_t value = 0;
  CHECK(why_not_count("2^20", 0, std::numeric_limits<std::size_t>::max(), value).empty());
  CHECK(value == (std::size_t{1} << 20));
  CHECK(why_not_count("18446744073709551615", 0, std::numeric_limits<std::size_t>::max(), value).empty());
  CHECK(value == std::numeric_limits<std::size_t>::max());
  CHECK(why("-1") == "-1 must be positive or 0");
  CHECK(why("-1", 1) == "-1 must be positive");
  CHECK(why("-1", 1, 10) == "-1 must be positive (1-10)");
  CHECK(why("0", 1, 10) == "0 is out of range (1-10)");
  CHECK(why("11", 1, 10) == "11 is out of range (1-10)");
  CHECK(why("18446744073709551616") == "'18446744073709551616' does not fit in 64 bits");
  CHECK(why("2^64") == "'2^64' does not fit in 64 bits");
  for (const char* bad : {"", "-", "1e3", "0x10", "2^-1", "+5", " 5", "--5", "2^"})
    CHECK(why(bad).find("is not a non-negative integer") != std::string::npos);

  // The count options of the programs that parse their own: the flag named, the value never
  // converted while negative, 2^K accepted, whatever the variable's integer type.
  const auto parse = [](std::vector<std::string> args, std::size_t& rows, int& repeat) {
    CLI::App app{"counts", "counts"};
    add_count(app, "--rows", rows, "rows");
    add_count(app, "--repeat", repeat, "calls", 1, 100000);
    std::reverse(args.begin(), args.end());
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::size_t rows = 0;
  int repeat = 0;
  CHECK(parse({"--rows", "-1"}, rows, repeat) == "--rows: -1 must be positive or 0");
  CHECK(parse({"--repeat", "0"}, rows, repeat) == "--repeat: 0 is out of range (1-100000)");
  CHECK(parse({"--rows", "2^20", "--repeat", "7"}, rows, repeat).empty());
  CHECK(rows == (std::size_t{1} << 20));
  CHECK(repeat == 7);
}

TEST_CASE("unknown names and unsupported pairs are refused") {
  refused({"--dtype", "f8"}, "unknown dtype 'f8'");
  refused({"--op", "prod"}, "unknown operator 'prod'");
  for (std::string_view custom : red::kCustomOpNames)  // chapter 13's: refused by name, pointing there
    refused({"--op", std::string(custom)}, "an operator of chapter 13_custom_ops, which its own program 13_custom_ops takes");
  refused({"--dist", "cauchy"}, "unknown distribution 'cauchy'");
  refused({"--op", "argmax"}, "does not support op argmax on dtype f32; it supports: sum/f32, max/f32");
  refused({"--dtype", "f64"}, "does not support op sum on dtype f64");
  refused({"--bogus"}, "bogus");
}

TEST_CASE("input files: missing, wrong size, n beyond the file") {
  refused({"--input", "/nonexistent/data.bin"}, "does not exist");
  std::string odd = write_file("red_cli_odd.bin", 10);
  refused({"--input", odd}, "not a multiple of the 4-byte element size");
  std::string ok = write_file("red_cli_ok.bin", 40);
  refused({"--input", ok, "--n", "11"}, "beyond the 10 elements");
  std::filesystem::remove(odd);
  std::filesystem::remove(ok);
}

TEST_CASE("parse_options: defaults and the file's element count") {
  std::ostringstream out, err;
  ParseResult p = parse_options(fake_chapter(), {"--op", "max", "--n", "2^20", "--offset", "3", "--json"}, out, err);
  REQUIRE(p.options.has_value());
  CHECK(p.options->op == Op::max);
  CHECK(p.options->n == (1u << 20));
  CHECK(p.options->offset == 3);
  CHECK(p.options->json);
  std::string ok = write_file("red_cli_count.bin", 48);
  p = parse_options(fake_chapter(), {"--input", ok}, out, err);
  REQUIRE(p.options.has_value());
  CHECK(p.options->n == 12);
  std::filesystem::remove(ok);
}

TEST_CASE("no GPU: exit 3 with a clear message; with a GPU, n too large for its memory: exit 2") {
  if (!gpu_available()) {
    Run r = run({"--n", "1000"});
    CHECK(r.code == kExitNoGpu);
    CHECK(r.err.find("no usable CUDA GPU") != std::string::npos);
    CHECK(r.err.find("results/h200/") != std::string::npos);
  } else {
    Run r = run({"--n", "2^45"});  // 128 TiB of f32
    CHECK(r.code == kExitUsage);
    CHECK(r.err.find("of device memory") != std::string::npos);
  }
}

TEST_CASE("dot: the second vector") {
  std::ostringstream out, err;
  const std::string ten = write_file("red_cli_dot10.bin", 40), ten_b = write_file("red_cli_dot10b.bin", 40),
                    twelve = write_file("red_cli_dot12.bin", 48);
  // --input2 belongs to a dot product only.
  refused({"--input", ten, "--input2", ten_b}, "only a dot product reads a second vector");
  auto dot_refused = [&](std::vector<std::string> args, const std::string& message) {
    std::ostringstream o, e;
    int code = chapter_main(fake_dot_chapter(), args, o, e);
    INFO("stderr: ", e.str());
    CHECK(code == kExitUsage);
    CHECK(e.str().find(message) != std::string::npos);
  };
  dot_refused({"--op", "dot", "--input", ten}, "give both --input and --input2, or neither");
  dot_refused({"--op", "dot", "--input2", ten}, "give both --input and --input2, or neither");
  dot_refused({"--op", "dot", "--input", ten, "--input2", twelve}, "holds 12 elements");
  dot_refused({"--op", "dot", "--input", twelve, "--input2", ten, "--n", "11"}, "beyond the 10 elements");
  // Equal lengths, or a common prefix by --n, parse.
  ParseResult p = parse_options(fake_dot_chapter(), {"--op", "dot", "--input", ten, "--input2", ten_b}, out, err);
  REQUIRE(p.options.has_value());
  CHECK(p.options->n == 10);
  p = parse_options(fake_dot_chapter(), {"--op", "dot", "--input", twelve, "--input2", ten, "--n", "9"}, out, err);
  REQUIRE(p.options.has_value());
  CHECK(p.options->n == 9);
  for (const auto& f : {ten, ten_b, twelve}) std::filesystem::remove(f);
}
