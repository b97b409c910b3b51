// Chapter 11's columns launcher lays its tiles out on the host (ch11::column_tiles), and its grid
// experiment plans its alternatives with the same function; the bytes its GB/s counts come from one
// function too (counted_bytes): both tested here without a GPU.
#include <doctest/doctest.h>

#include "11_batched/variants.cuh"
#include "12_segmented/segmented.hpp"

TEST_CASE("11_batched: column_tiles takes strips of 32 loads, or down to 8 where too few, one wave of chunks") {
  struct Case {
    const char* what;
    std::size_t rows, vectors;
    unsigned trip;
    unsigned narrowest;  // the narrowest strip: 8 16-byte vectors, or 32 single elements
    unsigned across;     // expected: loads across a block
    std::size_t deep, strips;
    unsigned split;
  };
  constexpr unsigned kBlock = ch11::kColumnBlock;
  const Case cases[] = {
      {"narrow rows: every vector across, the block deep down the rows, one wave of chunks", std::size_t{1} << 23, 2, 8, 8,
       2, kBlock / 2, 1, 264},
      {"rows of 256 vectors: strips of 32 (8 of them) are too few for the wave, so 8 vectors (32 strips), 8 chunks each",
       std::size_t{1} << 16, 256, 8, 8, 8, kBlock / 8, 32, 8},
      {"rows of 2048 vectors: 256 strips of 8 vectors fill the wave alone, one chunk (no partials)", 8192, 2048, 8, 8, 8,
       kBlock / 8, 256, 1},
      {"rows of 16384 vectors: 512 strips of 32 vectors (512 bytes a warp) already fill the wave", 1024,
       std::size_t{1} << 14, 8, 8, 32, kBlock / 32, 512, 1},
      {"single elements: never narrower than 32 (128 bytes)", std::size_t{1} << 16, 1024, 8, 32, 32, kBlock / 32, 32, 8},
      {"few rows: wider blocks, so that every thread has a full trip; no more chunks than trips", 64,
       std::size_t{1} << 18, 8, 8, kBlock / 8, 8, (std::size_t{1} << 18) / (kBlock / 8), 1},
      {"a row shorter than a block's width: one strip of it", 10, 3, 4, 8, 3, kBlock / 3, 1, 1},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const ch11::ColumnTiles t = ch11::column_tiles(c.rows, c.vectors, c.trip, 264, c.narrowest);
    CHECK(t.across == c.across);
    CHECK(t.deep == c.deep);
    CHECK(t.strips == c.strips);
    CHECK(t.split == c.split);
  }
}

TEST_CASE("11_batched and 12_segmented: counted_bytes counts the input read once (the offsets too) and the results") {
  ch11::Shape rows;
  rows.layout = ch11::Layout::rows;
  rows.rows = 1000;
  rows.cols = 8;
  rows.stride = 12;  // the padding is not read, so not counted
  CHECK(ch11::counted_bytes(rows, 4) == 1000 * 8 * 4 + 1000 * 4);
  ch11::Shape columns = rows;
  columns.layout = ch11::Layout::columns;
  CHECK(ch11::counted_bytes(columns, 2) == 1000 * 8 * 2 + 8 * 4);
  CHECK(ch12::counted_bytes(5000, 100, 4) == 5000 * 4 + 101 * 8 + 100 * 4);  // 101 int64 offsets
  CHECK(ch12::counted_bytes(5000, 0, 2) == 5000 * 2 + 8);                    // one offset, still read
}
