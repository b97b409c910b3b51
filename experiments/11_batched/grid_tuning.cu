// 11_batched_grid_tuning: how the rows' and the columns' kernels hand their work to blocks, each
// choice against its alternative, timed side by side in one process.
//
// The shapes are the benchmark's: f32 sum over B x L = 2^26 elements, and f16 columns over the
// same 256 MiB (2^27 elements).
//  - Rows (the tuned launcher's kernel for each L: rows_aligned with its group of lanes, vectors a
//    lane and rows a trip): a block for every kRows trips of its groups, as many waves as that
//    takes (the tuned choice), against one wave of blocks that stride over the rows; and at L = 8,
//    32 and 128, 4 rows a trip against the tuned 2 (twice the bytes in flight a thread).
//  - Columns (columns_tiled at the tuned launcher's width and number of chunks): its chunks of
//    interleaved tiles with 8 rows in flight a thread, against one run of rows a chunk, with 4
//    rows in flight and with 8, and against 2, 4 and 8 times its chunks (more blocks than one
//    wave holds, and more partials for the last block of a strip to combine); and its tiles with
//    4 or 6 rows in flight at 4 or 3 blocks an SM, and 8 at 3, against its 8 at 2 (more threads
//    to hide the latency, fewer registers each); strips 8, 16 or 32 vectors wide other than its
//    own (column_tiles: the narrowest of 8 where strips of 32 are too few to fill the GPU), so
//    fewer or more chunks fill the GPU and the last block of a strip has fewer or more partials
//    to combine; and two launches without a ticket (a plain store of each block's partials, then
//    a second kernel launched early that combines them), with one wave of chunks and with blocks
//    of 2 or 8 trips, many waves, as the rows' blocks are. The alternatives that the shipped
//    kernel does not take (one run of rows a chunk, another register cap) run this file's own
//    copy of it, columns_tiled_open; the others run ch11::columns_tiled itself.
//  - f16 columns: the tuned rows in flight a thread for 16-bit inputs against the other of 4 and
//    8, each planned as the launcher plans its kernel.
// Every variant is timed as the benchmark times a call (common/timing.hpp, the steady state,
// cold). The input is all ones, so every result is exact (L for a row, B for a column) and each
// variant's results, poisoned before it runs, are checked for it. It prints a table of GB/s (the
// input read once plus the results written). results/h200/experiments/grid_tuning.md holds the
// H200's output.
//
//   11_batched_grid_tuning
//
// Exit codes: 0 done, 1 a variant's results are wrong, 2 bad arguments, 3 no GPU, 4 a CUDA error.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "11_batched/variants.cuh"
#include "command_line.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "timing.hpp"

namespace {

using Op = red::Sum<float>;
constexpr std::size_t kTotal = std::size_t{1} << 26;
constexpr std::size_t kTotal16 = kTotal * 2;  // the f16 shapes: the same bytes

struct Row {
  std::string shape, variant;
  double gbps;
};

struct Bench {
  const red::L2Scrubber& scrubber;
  red::Stream& stream;
  red::DeviceBuffer& out;
  red::DeviceBuffer& scratch;
  std::vector<Row> rows;
  bool exact = true;
  // Times f, then checks its `outputs` results against `expect`. Before it, the results are
  // poisoned (NaN), so that a variant that writes none fails, and the scratch is zeroed: the
  // variants lay their counters and partials out differently, and one's partials must not be
  // taken for the next one's counters (a new plan's counters start at zero, as `prepare` makes them).
  void time(const std::string& shape, const std::string& variant, std::size_t outputs, float expect,
            const std::function<void()>& f, std::size_t input_bytes = kTotal * 4) {
    out.fill(0xFF, stream.get());
    scratch.fill(0, stream.get());
    red::TimingConfig cfg;
    cfg.scrubber = &scrubber;
    const red::Timing t = red::time_on_stream(f, stream.get(), cfg);
    rows.push_back({shape, variant, (double(input_bytes) + outputs * 4.0) / t.median_us / 1e3});
    std::vector<float> got(outputs);
    out.download(got.data(), outputs * 4);
    for (std::size_t i = 0; i < outputs; ++i)
      if (got[i] != expect) {
        std::fprintf(stderr, "%s, %s: result %zu is %g, not %g\n", shape.c_str(), variant.c_str(), i, got[i], expect);
        exact = false;
        break;
      }
  }
};

// The [2^26 / L, L] matrix of the shapes, its rows or its columns reduced.
ch11::Shape matrix(ch11::Layout layout, std::size_t L) {
  ch11::Shape shape;
  shape.layout = layout;
  shape.rows = kTotal / L;
  shape.cols = shape.stride = L;
  return shape;
}

// The tuned launcher's plan for this shape (variants.cuh).
ch11::Plan plan_for(const ch11::Shape& shape, const float* in) {
  ch11::BatchedCall c;
  c.input = in;
  c.shape = shape;
  return ch11::plan_tuned<Op, float>(c);
}

// A chunked columns call's scratch (reduce.cuh, variants.cuh): a counter per strip, then `split` x L partials of
// 4 bytes (the accumulators of f32 and f16 sums alike); refused if the buffer is too small.
struct ColumnScratch {
  unsigned* tickets;
  float* partials;
};
ColumnScratch column_scratch(const red::DeviceBuffer& scratch, std::size_t strips, std::size_t split, std::size_t L) {
  if (scratch.bytes() < ch11::tickets_bytes(strips) + split * L * 4) throw std::logic_error("grid_tuning: scratch too small");
  return {static_cast<unsigned*>(scratch.get()),
          reinterpret_cast<float*>(static_cast<unsigned char*>(scratch.get()) + ch11::tickets_bytes(strips))};
}

// Blocks of a columns kernel (kColumnBlock threads, `shared` bytes of shared memory) the GPU holds at once.
template <class Kernel>
std::size_t resident_columns(Kernel kernel, std::size_t shared) {
  return std::size_t{ch11::sm_count()} * ch11::blocks_per_sm<ch11::kColumnBlock>(kernel, shared);
}

// Rows of L floats with the tuned launcher's kernel rows_aligned<G, kVecs, kRows>: its grid and
// one wave.
template <unsigned G, unsigned kVecs, unsigned kRows>
void rows_case(Bench& b, const float* in, std::size_t L) {
  const std::size_t rows = kTotal / L, V = L / 4;
  const ch11::Shape shape = matrix(ch11::Layout::rows, L);
  const ch11::Plan p = plan_for(shape, in);
  if (!p.vector || p.lanes != G) throw std::logic_error("grid_tuning: the launcher's plan for rows changed");
  const auto kernel = ch11::rows_aligned<Op, float, G, kVecs, kRows>;
  const std::size_t groups = ch11::kBlock / G, need = red::ceil_div(rows, groups);
  const unsigned every_row = static_cast<unsigned>(red::ceil_div(need, std::size_t{kRows}));
  const unsigned one_wave = static_cast<unsigned>(
      std::min(need, ch11::resident_blocks<ch11::kBlock, ch11::rows_aligned<Op, float, G, kVecs, kRows>>()));
  const std::string name = "rows, L = " + std::to_string(L);
  ch11::BatchedCall c;
  c.input = in;
  c.shape = shape;
  c.output = b.out.get();
  c.stream = b.stream.get();
  b.time(name, "tuned: a block per " + std::to_string(kRows) + " trips of its groups (" + std::to_string(every_row) +
                   " blocks)",
         rows, float(L), [&] { ch11::launch_tuned<Op, float>(c); });
  b.time(name, "one wave striding over the rows (" + std::to_string(one_wave) + " blocks)", rows, float(L),
         [&] { kernel<<<one_wave, ch11::kBlock, 0, b.stream.get()>>>(in, rows, V, L, b.out.get()); });
}

// Rows of L floats with rows_aligned<G, kVecs, kRows> at kRows other than the tuned kernel's (more
// rows a trip: more bytes in flight a thread, more registers), on its grid: a block per kRows
// trips of its groups.
template <unsigned G, unsigned kVecs, unsigned kRows>
void rows_trip_case(Bench& b, const float* in, std::size_t L) {
  const std::size_t rows = kTotal / L, V = L / 4;
  const ch11::Plan p = plan_for(matrix(ch11::Layout::rows, L), in);
  if (!p.vector || p.lanes != G) throw std::logic_error("grid_tuning: the launcher's plan for rows changed");
  const auto kernel = ch11::rows_aligned<Op, float, G, kVecs, kRows>;
  const unsigned blocks = static_cast<unsigned>(red::ceil_div(red::ceil_div(rows, std::size_t{ch11::kBlock / G}), std::size_t{kRows}));
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  b.time("rows, L = " + std::to_string(L),
         std::to_string(kRows) + " rows a trip (" + std::to_string(kVecs * kRows * 16) + " bytes in flight a thread, " +
             std::to_string(attributes.numRegs) + " registers, " +
             std::to_string(ch11::blocks_per_sm<ch11::kBlock>(kernel)) + " blocks an SM; " + std::to_string(blocks) +
             " blocks)",
         rows, float(L), [&] { kernel<<<blocks, ch11::kBlock, 0, b.stream.get()>>>(in, rows, V, L, b.out.get()); });
}

// The tuned columns kernel (ch11::columns_tiled, f32 sums with 16-byte loads) with the two choices
// the shipped kernel fixes left open: kInterleaved false gives chunk k one run of chunk_rows rows
// instead of tiles k, k + K, k + 2K, ...; kMinBlocks other than 2 caps its registers so that more
// of its blocks fit on an SM (no more than the SM holds: 4 is 3 on sm_86/89/120, whose SMs hold
// 1536 threads). With kInterleaved true and kMinBlocks 2 it is the shipped kernel.
template <unsigned kTrip, bool kInterleaved, unsigned kMinBlocks>
__global__ void __launch_bounds__(ch11::kColumnBlock, ch11::blocks_an_sm_holds<ch11::kColumnBlock>(kMinBlocks))
    columns_tiled_open(const float* in, std::size_t rows, std::size_t cols, unsigned across, std::size_t chunk_rows,
                       void* out, unsigned* tickets, float* partials) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  float* tree = reinterpret_cast<float*>(shared_bytes);
  const unsigned P = across;
  const std::size_t vectors = cols / 4, v0 = std::size_t{blockIdx.x} * P;
  float acc[4];
  if constexpr (kInterleaved) {
    const std::size_t tile = std::size_t{kTrip} * (ch11::kColumnBlock / P);
    ch11::column_strip<Op, float, true, kTrip>(in, std::size_t{blockIdx.y} * tile, rows, vectors, cols, P, v0, acc, tree,
                                               gridDim.y);
  } else {
    const std::size_t first = std::size_t{blockIdx.y} * chunk_rows, last = std::min(rows, first + chunk_rows);
    ch11::column_strip<Op, float, true, kTrip>(in, first, last, vectors, cols, P, v0, acc, tree);
  }
  const std::size_t v = v0 + threadIdx.x;  // for the threads with y == 0
  const bool holds = threadIdx.x < P && v < vectors;
  if (gridDim.y == 1) {
    if (holds)
#pragma unroll
      for (unsigned j = 0; j < 4; ++j) ch11::store_result<Op>(out, v * 4 + j, acc[j]);
    return;
  }
  if (holds)
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) partials[std::size_t{blockIdx.y} * cols + v * 4 + j] = acc[j];
  if (!ch11::last_to_arrive(tickets + blockIdx.x, gridDim.y)) return;
  ch11::finish_column_strip<Op, true>(partials, gridDim.y, cols, v0 * 4, std::min(cols, (v0 + P) * 4), out, tree);
}

// Columns of a [2^26 / L, L] matrix: the tuned kernel (through the launcher) against one run of
// rows a chunk with 4 and 8 rows in flight, each with as many chunks as its launcher would plan.
void columns_case(Bench& b, const float* in, std::size_t L, red::DeviceBuffer& scratch) {
  const std::size_t rows = kTotal / L;
  const ch11::Shape shape = matrix(ch11::Layout::columns, L);
  const ch11::Plan p = plan_for(shape, in);
  if (!p.vector || scratch.bytes() < p.scratch_bytes) throw std::logic_error("grid_tuning: the columns' plan changed");
  const std::string name = "columns, L = " + std::to_string(L);
  ch11::BatchedCall c;
  c.input = in;
  c.shape = shape;
  c.output = b.out.get();
  c.scratch = scratch.get();
  c.scratch_bytes = scratch.bytes();
  c.stream = b.stream.get();
  b.time(name,
         "tuned: interleaved tiles, 8 rows in flight, strips " + std::to_string(p.across) + " vectors wide (" +
             std::to_string(p.split) + " chunks)",
         L, float(rows),
         [&] { ch11::launch_tuned<Op, float>(c); });
  // The strips across (a block's P vectors of columns each) and the rows a trip covers down a block.
  const std::size_t shared = ch11::columns_tree_bytes<float>(4);
  const std::size_t deep = ch11::kColumnBlock / p.across, blocks_x = red::ceil_div(L / 4, std::size_t{p.across});
  const auto runs = [&](auto kernel, unsigned trip) {
    const std::size_t resident = resident_columns(kernel, shared);
    const std::size_t wanted = std::max<std::size_t>(1, resident / blocks_x);
    const std::size_t most = std::max<std::size_t>(1, rows / (deep * trip));
    const std::size_t chunk = red::ceil_div(rows, std::min<std::size_t>({wanted, most, 65535}));
    const unsigned split = static_cast<unsigned>(red::ceil_div(rows, chunk));
    const ColumnScratch at = column_scratch(scratch, blocks_x, split, L);
    b.time(name, "one run of rows a chunk, " + std::to_string(trip) + " rows in flight (" + std::to_string(split) + " chunks)",
           L, float(rows), [&] {
             kernel<<<dim3(static_cast<unsigned>(blocks_x), split), ch11::kColumnBlock, shared, b.stream.get()>>>(
                 in, rows, L, p.across, chunk, b.out.get(), at.tickets, at.partials);
           });
  };
  runs(columns_tiled_open<4, false, 2>, 4);
  runs(columns_tiled_open<8, false, 2>, 8);
  // The tuned kernel with more chunks than one wave holds: the GPU hands them out as SMs free up,
  // and the strip's last block has more partials to combine.
  const auto more_chunks = [&](unsigned waves) {
    const std::size_t most = std::max<std::size_t>(1, rows / (deep * p.trip));
    const unsigned split = static_cast<unsigned>(std::min<std::size_t>({std::size_t{p.split} * waves, most, 65535}));
    if (split == p.split) return;
    const ColumnScratch at = column_scratch(scratch, blocks_x, split, L);
    b.time(name, "interleaved tiles, 8 rows in flight, " + std::to_string(waves) + " times the chunks (" +
                     std::to_string(split) + " chunks)",
           L, float(rows), [&] {
             ch11::columns_tiled<Op, float, true><<<dim3(static_cast<unsigned>(blocks_x), split), ch11::kColumnBlock, shared,
                                                    b.stream.get()>>>(in, rows, L, L, p.across, b.out.get(), at.tickets,
                                                                      at.partials);
           });
  };
  more_chunks(2);
  more_chunks(4);
  more_chunks(8);
}

// The tuned interleaved tiles with kTrip rows in flight a thread and kMinBlocks blocks of it an SM
// (the register cap that takes: 64 for 2, 40 for 3, 32 for 4; ptxas spills what does not fit),
// planned as the launcher plans its own kernel: more threads an SM against more loads each.
template <unsigned kTrip, unsigned kMinBlocks>
void columns_occupancy_case(Bench& b, const float* in, std::size_t L, red::DeviceBuffer& scratch) {
  const std::size_t rows = kTotal / L;
  const auto kernel = columns_tiled_open<kTrip, true, kMinBlocks>;
  const std::size_t shared = ch11::columns_tree_bytes<float>(4);
  const unsigned per_sm = ch11::blocks_per_sm<ch11::kColumnBlock>(kernel, shared);
  const ch11::ColumnTiles tiles = ch11::column_tiles(rows, L / 4, kTrip, std::size_t{ch11::sm_count()} * per_sm);
  const ColumnScratch at = column_scratch(scratch, tiles.strips, tiles.split, L);
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  b.time("columns, L = " + std::to_string(L),
         "interleaved tiles, " + std::to_string(kTrip) + " rows in flight, " + std::to_string(per_sm) + " blocks an SM (" +
             std::to_string(attributes.numRegs) + " registers, " + std::to_string(attributes.localSizeBytes) +
             " bytes spilled a thread; " + std::to_string(tiles.split) + " chunks)",
         L, float(rows), [&] {
           kernel<<<dim3(static_cast<unsigned>(tiles.strips), tiles.split), ch11::kColumnBlock, shared, b.stream.get()>>>(
               in, rows, L, tiles.across, 0, b.out.get(), at.tickets, at.partials);
         });
}

// f16 columns of a [2^27 / L, L] matrix with kTrip rows in flight a thread, planned as the launcher
// plans its own kernel (the width, the depth and one wave of chunks of interleaved tiles): the
// tuned number of rows in flight for 16-bit inputs against the other.
template <unsigned kTrip>
void columns_f16_case(Bench& b, const __half* in, std::size_t L, red::DeviceBuffer& scratch) {
  using Op16 = red::Sum<__half>;
  constexpr unsigned kTuned = ch11::kColumnUnroll<true, __half, float>;
  const std::size_t rows = kTotal16 / L;
  if (rows < ch11::kFewRows) throw std::logic_error("grid_tuning: the f16 shapes have many rows");
  const auto kernel = ch11::columns_tiled<Op16, __half, true, kTrip>;
  const std::size_t shared = ch11::columns_tree_bytes<float>(8);
  const ch11::ColumnTiles tiles = ch11::column_tiles(rows, L / 8, kTrip, resident_columns(kernel, shared));
  const unsigned across = tiles.across, split = tiles.split;
  const std::size_t blocks_x = tiles.strips;
  const ColumnScratch at = column_scratch(scratch, blocks_x, split, L);
  b.time("f16 columns, L = " + std::to_string(L),
         std::string(kTrip == kTuned ? "tuned: " : "") + std::to_string(kTrip) + " rows in flight (" +
             std::to_string(split) + " chunks)",
         L, float(rows),
         [&] {
           kernel<<<dim3(static_cast<unsigned>(blocks_x), split), ch11::kColumnBlock, shared, b.stream.get()>>>(
               in, rows, L, L, across, b.out.get(), at.tickets, at.partials);
         },
         kTotal16 * 2);
}

// The tuned kernel on strips `across` vectors wide (8: 128 bytes of each row, a whole line; 32:
// 512 bytes) other than the launcher's: narrower, more strips, so fewer chunks fill the GPU (with
// one, the strips need no partials and no ticket); wider, fewer strips and more chunks.
void columns_narrow_case(Bench& b, const float* in, std::size_t L, unsigned across, red::DeviceBuffer& scratch) {
  const std::size_t rows = kTotal / L, vectors = L / 4;
  const auto kernel = ch11::columns_tiled<Op, float, true>;
  const std::size_t shared = ch11::columns_tree_bytes<float>(4);
  constexpr unsigned kTrip = ch11::kColumnUnroll<true, float, float>;
  const std::size_t resident = resident_columns(kernel, shared);
  const std::size_t strips = red::ceil_div(vectors, std::size_t{across}), deep = ch11::kColumnBlock / across;
  const unsigned split = static_cast<unsigned>(
      std::min<std::size_t>({std::max<std::size_t>(1, resident / strips), std::max<std::size_t>(1, rows / (deep * kTrip)), 65535}));
  const ColumnScratch at = column_scratch(scratch, strips, split, L);
  b.time("columns, L = " + std::to_string(L),
         "interleaved tiles, 8 rows in flight, strips " + std::to_string(across) + " vectors wide (" +
             std::to_string(strips) + " strips, " + std::to_string(split) + " chunks)",
         L, float(rows), [&] {
           kernel<<<dim3(static_cast<unsigned>(strips), split), ch11::kColumnBlock, shared, b.stream.get()>>>(
               in, rows, L, L, across, b.out.get(), at.tickets, at.partials);
         });
}

// Columns in two launches, as chapter 07 reduces one array: pass 1's block (s, k) sums strip s
// (`across` vectors wide) down rows [k x chunk_rows, (k + 1) x chunk_rows) and stores its partials
// with a plain store, no ticket and no fence, so that a block ends as a row-kernel's block does;
// pass 2, launched early (programmatic dependent launch) and waiting for pass 1 to complete,
// reduces the [chunks, L] partials over the chunks, strips of `combine_across` vectors a block. The
// chunks can then be many (more waves than the GPU holds at once) at no cost per block beyond its
// store: the alternative to the tuned kernel's one wave of chunks with a ticket.
template <unsigned kTrip>
__global__ void __launch_bounds__(ch11::kColumnBlock, 2)
    columns_partials(const float* in, std::size_t rows, std::size_t cols, unsigned across, std::size_t chunk_rows,
                     float* partials) {
#if __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const std::size_t vectors = cols / 4, v0 = std::size_t{blockIdx.x} * across;
  const std::size_t first = std::size_t{blockIdx.y} * chunk_rows, last = std::min(rows, first + chunk_rows);
  float acc[4];
  ch11::column_strip<Op, float, true, kTrip>(in, first, last, vectors, cols, across, v0, acc,
                                             reinterpret_cast<float*>(shared_bytes));
  const std::size_t v = v0 + threadIdx.x;
  if (threadIdx.x < across && v < vectors)
    reinterpret_cast<float4*>(partials + std::size_t{blockIdx.y} * cols)[v] = make_float4(acc[0], acc[1], acc[2], acc[3]);
}

__global__ void __launch_bounds__(ch11::kColumnBlock)
    columns_combine(const float* partials, unsigned chunks, std::size_t cols, unsigned combine_across, float* out) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();  // pass 1 has completed and its partials are visible
#endif
  const std::size_t vectors = cols / 4, v0 = std::size_t{blockIdx.x} * combine_across;
  float acc[4];
  ch11::column_strip<ch11::CombineOp<Op>, float, true>(partials, 0, chunks, vectors, cols, combine_across, v0, acc,
                                                        reinterpret_cast<float*>(shared_bytes));
  const std::size_t v = v0 + threadIdx.x;
  if (threadIdx.x < combine_across && v < vectors)
    reinterpret_cast<float4*>(out)[v] = make_float4(acc[0], acc[1], acc[2], acc[3]);
}

// The two launches at the launcher's strips (its width and depth), with blocks of `tiles` trips of
// the block's rows each (0: one wave of chunks, as many as the tuned launcher plans). Pass 2's strips are
// as wide (up to 32 vectors) as leaves a thread at most one trip of 8 partials to read.
void columns_two_launch_case(Bench& b, const float* in, std::size_t L, std::size_t tiles, red::DeviceBuffer& scratch) {
  const std::size_t rows = kTotal / L, vectors = L / 4;
  const ch11::Shape shape = matrix(ch11::Layout::columns, L);
  const ch11::Plan p = plan_for(shape, in);
  if (!p.vector || p.trip != 8) throw std::logic_error("grid_tuning: the columns' plan changed");
  const std::size_t deep = ch11::kColumnBlock / p.across, tile = deep * p.trip;
  const std::size_t chunk_rows = tiles > 0 ? tiles * tile : red::ceil_div(red::ceil_div(rows, tile), std::size_t{p.split}) * tile;
  const std::size_t chunks = red::ceil_div(rows, chunk_rows);
  if (chunks > 65535 || chunks * L * 4 > scratch.bytes()) throw std::logic_error("grid_tuning: too many chunks");
  unsigned combine_across = 1;
  while (combine_across * 2 <= std::min<std::size_t>(32, vectors) && combine_across * 2 * chunks <= 8 * ch11::kColumnBlock)
    combine_across *= 2;
  const std::size_t strips = red::ceil_div(vectors, std::size_t{p.across});
  const unsigned combine_blocks = static_cast<unsigned>(red::ceil_div(vectors, std::size_t{combine_across}));
  const std::size_t shared = ch11::columns_tree_bytes<float>(4);
  auto* partials = static_cast<float*>(scratch.get());
  const bool early = ch07::device_limits<columns_partials<8>>().programmatic;
  const unsigned n_chunks = static_cast<unsigned>(chunks);
  b.time("columns, L = " + std::to_string(L),
         "two launches, no ticket: " +
             (tiles > 0 ? std::to_string(tiles) + " trips of the block's rows a block"
                        : std::string("one wave of chunks")) +
             " (" + std::to_string(strips * chunks) + " blocks), then " + std::to_string(combine_blocks) +
             " blocks over the partials",
         L, float(rows), [&] {
           columns_partials<8><<<dim3(static_cast<unsigned>(strips), n_chunks), ch11::kColumnBlock, shared, b.stream.get()>>>(
               in, rows, L, p.across, chunk_rows, partials);
           CUDA_CHECK(ch07::launch_early(columns_combine, dim3(combine_blocks), dim3(ch11::kColumnBlock), shared,
                                         b.stream.get(), early, static_cast<const float*>(partials), n_chunks, L,
                                         combine_across, static_cast<float*>(b.out.get())));
         });
}

int run() {
  const red::DeviceInfo dev = red::query_device();
  const red::L2Scrubber scrubber(dev);
  red::Stream stream;
  const std::vector<float> ones(kTotal, 1.0f);
  red::DeviceBuffer in(kTotal * 4), out(kTotal / 8 * 4), scratch(std::size_t{64} << 20);
  in.upload(ones.data(), kTotal * 4);
  const auto* x = static_cast<const float*>(in.get());
  Bench b{scrubber, stream, out, scratch, {}};
  rows_case<1, 2, 2>(b, x, 8);
  rows_case<4, 2, 2>(b, x, 32);
  rows_case<16, 2, 2>(b, x, 128);
  rows_case<32, 8, 1>(b, x, 1024);
  rows_trip_case<1, 2, 4>(b, x, 8);
  rows_trip_case<4, 2, 4>(b, x, 32);
  rows_trip_case<16, 2, 4>(b, x, 128);
  for (std::size_t L : {std::size_t{8}, std::size_t{32}, std::size_t{128}, std::size_t{1024}, std::size_t{8192},
                        std::size_t{65536}})
    columns_case(b, x, L, scratch);
  for (std::size_t L : {std::size_t{8}, std::size_t{128}, std::size_t{1024}, std::size_t{8192}}) {
    columns_occupancy_case<4, 4>(b, x, L, scratch);
    columns_occupancy_case<6, 3>(b, x, L, scratch);
    columns_occupancy_case<8, 3>(b, x, L, scratch);
  }
  for (std::size_t L : {std::size_t{128}, std::size_t{1024}, std::size_t{8192}})
    for (unsigned across : {8u, 16u, 32u})
      if (across != plan_for(matrix(ch11::Layout::columns, L), x).across) columns_narrow_case(b, x, L, across, scratch);
  for (std::size_t L : {std::size_t{8}, std::size_t{32}, std::size_t{128}, std::size_t{1024}, std::size_t{8192}})
    for (std::size_t tiles : {std::size_t{0}, std::size_t{2}, std::size_t{8}}) columns_two_launch_case(b, x, L, tiles, scratch);
  const std::vector<std::uint16_t> ones_f16(kTotal16, 0x3C00);  // 1.0 in binary16
  in.upload(ones_f16.data(), kTotal16 * 2);
  const auto* h = static_cast<const __half*>(in.get());
  constexpr unsigned kTuned = ch11::kColumnUnroll<true, __half, float>;
  for (std::size_t L : {std::size_t{8}, std::size_t{32}, std::size_t{128}, std::size_t{1024}, std::size_t{8192},
                        std::size_t{65536}}) {
    columns_f16_case<kTuned>(b, h, L, scratch);
    columns_f16_case<kTuned == 4 ? 8 : 4>(b, h, L, scratch);
  }
  std::printf("# How the rows' and the columns' kernels hand their work to blocks: f32 sum, B x L = 2^26 (and f16 columns, B x L = 2^27), GB/s\n\n");
  std::printf("Device: %s. Steady state, cold (common/timing.hpp), the input read once plus the results written.\n\n",
              dev.name.c_str());
  std::printf("| shape | variant | GB/s |\n|---|---|---:|\n");
  for (const Row& r : b.rows) std::printf("| %s | %s | %.1f |\n", r.shape.c_str(), r.variant.c_str(), r.gbps);
  return b.exact ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return red::experiment_without_options(
      argc, argv, "11_batched_grid_tuning",
      "How the rows' and the columns' kernels hand their work to blocks, each choice against its\n"
      "alternative, timed on the benchmark's shapes (f32 sum, and f16 columns); it takes no options.",
      "results/h200/experiments/grid_tuning.md", [] { return run(); });
}
