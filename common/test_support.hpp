// The shared correctness matrix every chapter's test.cu runs (doctest).
//
// Each check draws fresh data (a new seed per case), poisons output and scratch, runs the
// chapter, compares with the host reference under the bound, and proves the input unchanged.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "chapter.hpp"
#include "inputs.hpp"
#include "reference.hpp"
#include "runner.hpp"

namespace red::test {

// Progress on stdout, so that a long test binary is never silent: a line as each test case starts,
// and a line for a check once two seconds have passed since the last one (always for inputs of
// 2^26 elements or more, whose host work alone takes a while). Each line starts with the program's
// name and the seconds since it started: "[07_two_pass_test 41.2 s] adversarial inputs: sum f16 n=1000003".
void set_program_name(const char* argv0);
void test_case_started(const char* name);
void progress(const std::string& what, bool always = false);

// 1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, each tile boundary +-1 (tile sizes are the
// chapter's: elements per block, per pass), and a few million (not a power of two).
std::vector<std::size_t> shared_sizes(std::initializer_list<std::size_t> tile_sizes);

// The float whose IEEE-754 bits are `bits` (NaNs with a sign and a payload, for the special-value
// cases).
inline float float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The host side of the tests that call a block reduction three times in a row through one shared
// buffer (06's block_reduce, its exercise's butterfly): a block's sum of `block` floats, then the
// max of the next `block`, then the min of the next. Small integers keep the sum exact in any order.
struct SumMaxMin {
  float sum, max, min;
};
inline SumMaxMin sum_max_min(const float* values, unsigned block) {
  SumMaxMin r{0, values[block], values[2 * block]};
  for (unsigned t = 0; t < block; ++t) {
    r.sum += values[t];
    r.max = std::max(r.max, values[block + t]);
    r.min = std::min(r.min, values[2 * block + t]);
  }
  return r;
}

// 2^31 + 7 when the device has room for `bytes_per_element` x that many bytes, else 0 (skipped).
std::size_t size_above_2_31(std::size_t bytes_per_element);

// A fresh seed for every call in a test binary: no two checks reuse data.
std::uint64_t fresh_seed();

struct Outcome {
  Reference ref;
  DeviceResult got;
  CheckOutcome check;
};

// Runs the chapter once on `input` (placed `offset` elements past an aligned start) and checks it.
// The doctest assertions inside name the chapter, op, dtype and n when they fail. A dot product
// reads `second` as its other vector (same dtype, length and offset).
Outcome run_checked(const Chapter& ch, Op op, const HostArray& input, std::size_t offset = 0,
                    const HostArray* second = nullptr);

// run_checked over every size, with fresh data of `dist` for each (sums of Dist::ints: exact).
void check_sizes(const Chapter& ch, Op op, DType t, const std::vector<std::size_t>& sizes, Dist dist = Dist::normal);

// Every pair the chapter supports, over the shared sizes, with several distributions.
void check_support_matrix(const Chapter& ch, std::initializer_list<std::size_t> tile_sizes);

// NaN at the first, a middle and the last position; +-inf; all -inf for max; the empty input.
void check_special_values(const Chapter& ch);

// Runs the same call `runs` times (output and scratch poisoned before each, as run_once does) and
// returns how many different result bit patterns came back: 1 for a deterministic chapter.
std::size_t distinct_results(const Chapter& ch, const ReduceCall& call, const Workspace& ws, int runs);

// One run with the scratch full of fresh random bytes (all but its zeroed bytes, chapter.hpp) and
// the output poisoned: a chapter that read a stale or unwritten partial would change its answer
// from run to run.
RawResult run_on_garbage(const Chapter& ch, const ReduceCall& call, const Workspace& ws, std::mt19937_64& rng);

// `streams` streams, each with its own output and scratch, each queued a poison and a call before
// any is waited for, so the kernels overlap, `rounds` times: every result has the bits of the same
// call made alone, that call is right, and every scratch's zeroed bytes are zero at the end.
void check_concurrent_streams(const Chapter& ch, Op op, std::size_t n, int rounds, int streams = 4);

// Ten calls into the same output and scratch, with different data each time: nothing stale.
void check_repeated_calls(const Chapter& ch, Op op, DType t, std::size_t n);

// Integer sums past their input type's range (where supported): i32 and u8 sums are exact in
// int64; an i64 sum wraps modulo 2^64 (reference.hpp). Checked against values computed here.
void check_integer_overflow(const Chapter& ch);

// Adversarial inputs, for every pair the chapter supports: all-equal values; heavy cancellation
// (huge positive and negative values around small ones); subnormals; 16-bit data whose sum
// overflows f16 (the f32 accumulator holds it); integer sums past the input type's range.
void check_adversarial(const Chapter& ch);

// `count` back-to-back reductions of random n in [0, max_n], spread over `streams` streams, each
// on a random sub-range (so random alignment too) of one uploaded array of small integers, whose
// sums are exact: every result is checked against an exact reference.
void check_stress(const Chapter& ch, Op op, int count = 10'000, int streams = 4,
                  std::size_t max_n = std::size_t{1} << 22);

// Starts 1 to 7 elements past an aligned allocation: f32 sum, and the other dtypes and argmax
// where the chapter supports them.
void check_misaligned_starts(const Chapter& ch);

// The same data placed 0, 1, 2, ... elements past an aligned start, up to one past a whole 16-byte
// vector (a dot product's second vector at other offsets): for a chapter whose result must not
// depend on where its input starts, the bits are the same at every offset. Float sums of every
// width and dot products.
void check_alignment_independence(const Chapter& ch, std::size_t n);

// 2^31 + 7 elements (skipped with a message where the device lacks the memory): a sum of small
// integers, which must be exact, a max, and (where supported) an argmax whose answer is past 2^31.
void check_above_2_31(const Chapter& ch);

}  // namespace red::test
