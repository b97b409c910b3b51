// Chapter 11's columns launcher lays its tiles out on the host (ch11::column_tiles), and its grid
// experiment plans its alternatives with the same function; the bytes its GB/s counts come from one
// function too (counted_bytes): both tested here without a GPU.
#include <doctest/doctest.h>

#include "11_batched/reduce.cuh"

TEST_CASE("11_batched: column_tiles spans the row with 32 vectors or more, one wave of chunks, full trips") {
  struct Case {
    const char* what;
    std::size_t rows, vectors;
    unsigned trip;
    unsigned across;  // expected: vectors across a block
    std::size_t deep, strips;
    unsigned split;
  };
  constexpr unsigned kBlock = ch11::kColumnBlock;
  const Case cases[] = {
      {"narrow rows: every vector across, the block deep down the rows, one wave of chunks", std::size_t{1} << 23, 2, 8,
       2, kBlock / 2, 1, 264},
      {"wide rows: 32 vectors across (512 bytes a warp), a chunk for every strip the wave holds", std::size_t{1} << 16, 256,
       8, 32, kBlock / 32, 8, 33},
      {"few rows: wider blocks, so that every thread has a full trip; no more chunks than trips", 64,
       std::size_t{1} << 18, 8, kBlock / 8, 8, (std::size_t{1} << 18) / (kBlock / 8), 1},
      {"a row shorter than a block's width: one strip of it", 10, 3, 4, 3, kBlock / 3, 1, 1},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const ch11::ColumnTiles t = ch11::column_tiles(c.rows, c.vectors, c.trip, 264);
    CHECK(t.across == c.across);
    CHECK(t.deep == c.deep);
    CHECK(t.strips == c.strips);
    CHECK(t.split == c.split);
  }
}

TEST_CASE("11_batched: counted_bytes counts the input read once (a segmented call's offsets too) and the results") {
  ch11::Shape rows;
  rows.layout = ch11::Layout::rows;
  rows.rows = 1000;
  rows.cols = 8;
  rows.stride = 12;  // the padding is not read, so not counted
  CHECK(ch11::counted_bytes(rows, 4) == 1000 * 8 * 4 + 1000 * 4);
  ch11::Shape columns = rows;
  columns.layout = ch11::Layout::columns;
  CHECK(ch11::counted_bytes(columns, 2) == 1000 * 8 * 2 + 8 * 4);
  ch11::Shape segments;
  segments.layout = ch11::Layout::segments;
  segments.n = 5000;
  segments.segments = 100;  // 101 int64 offsets
  CHECK(ch11::counted_bytes(segments, 4) == 5000 * 4 + 101 * 8 + 100 * 4);
  segments.segments = 0;  // one offset, still read
  CHECK(ch11::counted_bytes(segments, 2) == 5000 * 2 + 8);
}
