// Chapters 11's and 12's shape checks (11_batched/batched.hpp, 12_segmented/segmented.hpp), on the
// host: every count a call derives from a shape fits in 64 bits, at the edges where 32- and 64-bit
// arithmetic would wrap.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

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
  const std::int64_t huge[] = {0, 0x7fffffff, 0x7fffffff + std::int64_t{0x80000000}};
  CHECK(ch12::check_offsets(huge, 2, k2(33)).find("more than 2^31 - 1") != std::string::npos);
  const std::int64_t negative[] = {-1, 5};
  CHECK(ch12::check_offsets(negative, 1, 10).find("outside") != std::string::npos);
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
