// Chapters 11's and 12's shape checks (11_batched/batched.hpp, 12_segmented/segmented.hpp), on the
// host: every count a call derives from a shape fits in 64 bits, at the edges where 32- and 64-bit
// arithmetic would wrap.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "11_batched/batched.hpp"
#include "12_segmented/segmented.hpp"

using ch11::Layout;
using ch11::Shape;

namespace {
Shape matrix(std::size_t rows, std::size_t cols, std::size_t stride = 0, Layout layout = Layout::rows) {
  return ch11::matrix_shape(layout, rows, cols, stride);
}
bool refused(const Shape& s, const std::string& why) { return ch11::why_invalid(s).find(why) != std::string::npos; }
constexpr std::size_t k2(int e) { return std::size_t{1} << e; }
}  // namespace

TEST_CASE("11_batched shapes: rows and columns at 2^31 - 1, 2^31 and 2^31 + 1") {
  for (Layout l : {Layout::rows, Layout::columns}) {
    CHECK(ch11::why_invalid(matrix(k2(31) - 1, 1, 0, l)).empty());
    CHECK(ch11::why_invalid(matrix(1, k2(31) - 1, 0, l)).empty());
    CHECK(refused(matrix(k2(31), 1, 0, l), "2^31"));
    CHECK(refused(matrix(1, k2(31), 0, l), "2^31"));
    CHECK(refused(matrix(k2(31) + 1, 1, 0, l), "2^31"));
    CHECK(refused(matrix(k2(32), 1, 0, l), "2^31"));
    // 2^31 - 1 rows of 2^31 - 1: 2^62 elements, more than a call may span.
    CHECK(refused(matrix(k2(31) - 1, k2(31) - 1, 0, l), "2^60"));
  }
}

TEST_CASE("11_batched shapes: products and extents that wrap 64 bits are refused, never wrapped") {
  CHECK(refused(matrix(k2(40), k2(40)), "overflows"));                      // rows x cols
  CHECK(refused(matrix(2, 1, k2(62)), "2^60"));                              // 2^62 + 1 elements: 4 bytes each would wrap
  CHECK(refused(matrix(5, 1, k2(62)), "overflows"));                         // (rows - 1) x stride wraps
  CHECK(refused(matrix(2, 1, ~std::size_t{0}), "overflows"));                // (rows - 1) x stride + cols wraps
  CHECK(refused(matrix(3, 4, 2), "stride"));                                 // rows overlap
  CHECK(ch11::why_invalid(matrix(2, 1, k2(59))).empty());                    // 2^59 + 1 elements: still fine
  CHECK(ch11::input_elements(matrix(2, 1, k2(59))) == k2(59) + 1);
  CHECK(ch11::input_elements(matrix(0, 5)) == 0);
  CHECK(ch11::input_elements(matrix(5, 0)) == 0);
}

TEST_CASE("12_segmented sizes and offsets") {
  const auto segments_refused = [](std::size_t count, std::size_t n, const std::string& why) {
    return ch12::why_invalid(count, n).find(why) != std::string::npos;
  };
  CHECK(ch12::why_invalid(0, 0).empty());
  CHECK(ch12::why_invalid(0xfffffffeu, k2(60)).empty());
  CHECK(segments_refused(0xffffffffu, 10, "2^32"));
  CHECK(segments_refused(10, k2(60) + 1, "2^60"));
  CHECK(segments_refused(10, k2(62), "2^60"));
  // The bytes a call counts stay below 2^64 at the largest sizes allowed.
  CHECK(ch12::counted_bytes(k2(60), 0xfffffffeu, 4) == 4 * k2(60) + 8 * std::size_t{0xffffffffu} + 4 * std::size_t{0xfffffffeu});
}

TEST_CASE("12_segmented offsets: the message names the offset that is wrong, its value and why") {
  const auto why = [](std::vector<std::int64_t> o, std::size_t n) { return ch12::check_offsets(o.data(), o.size() - 1, n); };
  CHECK(why({0, 0x7fffffff, 0x7fffffff + std::int64_t{0x80000000}}, k2(33)) ==
        "offset 2 (4294967295) is 2147483648 past offset 1 (2147483647): segment 1 would hold more than 2^31 - 1 elements");
  CHECK(why({0, 0x7fffffff, 2 * std::int64_t{0x7fffffff}}, k2(33)).empty());  // two of 2^31 - 1
  CHECK(why({-1, 5}, 10) == "offset 0 (-1) is negative");
  CHECK(why({0, 5, 3}, 10) == "offset 2 (3) is below offset 1 (5): offsets must not decrease");
  CHECK(why({0, 5, 11}, 10) == "offset 2 (11) lies outside [0, 10], past the input's end");
  // A program's n is its last offset (0 where that is negative): the offset blamed is the bad last
  // one, never a good one before it that lies past that n.
  CHECK(why({0, 10, -5}, 0) == "offset 2 (-5) is negative");
  CHECK(why({0, 10, 4}, 4) == "offset 2 (4) is below offset 1 (10): offsets must not decrease");
  CHECK(why({0, 0, 10}, 10).empty());
  CHECK(why({3}, 10).empty());  // no segments
}

TEST_CASE("12_segmented generated segments: sizes whose largest possible segment passes 2^31 - 1 are refused") {
  using ch12::SegmentDist;
  const auto refused = [](std::size_t count, std::size_t mean, SegmentDist d, const std::string& why) {
    const std::string got = ch12::why_not_generated(count, mean, d);
    INFO("count ", count, " mean ", mean, ": ", got);
    return got.find(why) != std::string::npos;
  };
  // Uniform lengths reach 2 x mean.
  CHECK(ch12::why_not_generated(1, (k2(31) - 1) / 2, SegmentDist::uniform).empty());
  CHECK(refused(1, k2(30), SegmentDist::uniform, "would hold 2147483648 elements, more than 2^31 - 1"));
  CHECK(refused(k2(31), k2(29), SegmentDist::uniform, "more than 2^60"));
  // The heavy tail's big segment holds count x mean / 2: 2^20 x 4096 / 2 = 2^31 is one too many.
  CHECK(ch12::why_not_generated(k2(20), 4095, SegmentDist::heavy).empty());
  CHECK(refused(k2(20), 4096, SegmentDist::heavy, "big segment (count x mean / 2) would hold 2147483648 elements"));
  CHECK(refused(k2(28), 1024, SegmentDist::heavy, "would hold 137438953472 elements"));
  // Its long segments reach 40 x mean, wherever there is a segment besides the big one.
  CHECK(refused(2, k2(26), SegmentDist::heavy, "longest tail segment (40 x mean) would hold 2684354560"));
  CHECK(ch12::why_not_generated(1, k2(30), SegmentDist::heavy).empty());  // the big segment alone: 2^29
  CHECK(refused(k2(62), 8, SegmentDist::heavy, "overflows"));
  CHECK(ch12::why_not_generated(0, 0, SegmentDist::uniform).empty());
}

TEST_CASE("11_batched shapes: a strategy reduces its own layout only") {
  using ch11::Strategy;
  CHECK(ch11::reduces(Strategy::automatic, Layout::rows));
  CHECK(ch11::reduces(Strategy::automatic, Layout::columns));
  CHECK(ch11::reduces(Strategy::block_per_row, Layout::rows));
  CHECK_FALSE(ch11::reduces(Strategy::block_per_row, Layout::columns));
  CHECK_FALSE(ch11::reduces(Strategy::columns_naive, Layout::rows));
  CHECK(ch11::reduces(Strategy::columns_tiled, Layout::columns));
  CHECK_FALSE(ch11::reduces(Strategy::columns_tiled, Layout::rows));
}
