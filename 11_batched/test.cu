#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "11_batched/host_reference.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "runner.hpp"
#include "test_support.hpp"

using namespace red;
using ch11::Kernels;
using ch11::Layout;
using ch11::Shape;
using ch11::Strategy;

namespace {

// Every case runs the tuned kernels (the default) and the lesson's teaching kernels.
const Kernels kKernels[] = {Kernels::tuned, Kernels::teaching};

// One batched call on the device, its results downloaded (4 bytes each).
struct Batch {
  const HostArray& host;
  Shape shape;
  std::size_t base_offset = 0;        // elements past a 256-byte boundary where the input starts

  // Two calls on one scratch, the output poisoned before each (a result never written shows as
  // 0xA5A5A5A5): the second must give the first's bits, and its results are returned (and the
  // plan that ran, in *ran).
  std::vector<std::byte> run(Op op, Kernels kernels, Strategy strategy = Strategy::automatic, cudaStream_t stream = nullptr,
                             int scratch_fill = -1, ch11::Plan* ran = nullptr) const {
    const DeviceInput in = upload(host, base_offset);
    const auto p = ch11::prepare(op, host.dtype, in.data, shape, strategy, kernels, stream);
    if (ran) *ran = p->plan;
    if (scratch_fill >= 0) p->scratch.fill(scratch_fill, stream, p->plan.zeroed_scratch_bytes);  // not the counters
    p->output.fill(0xA5, stream);  // on the call's stream: ordered before it
    p->run_and_wait();
    CHECK_MESSAGE(p->counters_are_zero(), "a call left its scratch's counters nonzero");
    const std::vector<std::byte> first = p->results();
    p->output.fill(0xA5, stream);
    p->run_and_wait();  // the counters as the first call left them
    CHECK_MESSAGE(p->counters_are_zero(), "a second call left its scratch's counters nonzero");
    const std::vector<std::byte> second = p->results();
    CHECK_MESSAGE(second == first, "a second call on the same scratch gave other results");
    return second;
  }

  // Runs and checks every result, under the tuned and the teaching kernels.
  void check(Op op, Strategy strategy = Strategy::automatic) const {
    for (Kernels kernels : kKernels) check(op, strategy, kernels);
  }
  void check(Op op, Strategy strategy, Kernels kernels) const {
    INFO("layout=", ch11::name(shape.layout), " rows=", shape.rows, " cols=", shape.cols, " stride=", shape.stride, " op=", std::string(name(op)),
         " dtype=", std::string(name(host.dtype)), " strategy=", ch11::name(strategy), " kernels=", ch11::name(kernels),
         " base offset=", base_offset);
    ch11::Plan plan;
    const std::vector<std::byte> got = run(op, kernels, strategy, nullptr, -1, &plan);
    CHECK(plan.kernels == kernels);
    const ch11::BatchCheck r = ch11::check_all(host, shape, op, plan, got);
    INFO("plan: ", ch11::name(plan.strategy), " lanes ", plan.lanes, " split ", plan.split);
    CHECK_MESSAGE(r.failed == 0, r.first_failure);
    CHECK(r.checked == ch11::outputs(shape));
  }
};

Shape rows(std::size_t b, std::size_t l, std::size_t stride = 0) { return ch11::matrix_shape(Layout::rows, b, l, stride); }
Shape columns(std::size_t b, std::size_t l, std::size_t stride = 0) {
  return ch11::matrix_shape(Layout::columns, b, l, stride);
}

const Op kOps[] = {Op::sum, Op::max, Op::argmax};
const DType kTypes[] = {DType::f32, DType::f16, DType::bf16};

}  // namespace

TEST_CASE("11_batched: rows and columns at B and L of 0, 1, 31, 32, 33 and 1025, every op and dtype") {
  for (DType t : kTypes)
    for (std::size_t b : {0, 1, 31, 32, 33, 1025})
      for (std::size_t l : {0, 1, 31, 32, 33, 1025}) {
        const HostArray host = generate(t, std::max<std::size_t>(b * l, 1), Dist::normal, test::fresh_seed());
        for (Op op : kOps) {
          Batch{host, rows(b, l)}.check(op);
          Batch{host, columns(b, l)}.check(op);
        }
      }
}

TEST_CASE("11_batched: every row strategy at every length, with small integers (exact sums)") {
  for (DType t : kTypes)
    for (std::size_t l : {1, 7, 8, 33, 100, 1024, 4099, 70'000}) {
      const std::size_t b = std::max<std::size_t>(3, (std::size_t{1} << 20) / l);
      const HostArray host = generate(t, b * l, Dist::ints, test::fresh_seed());
      for (Strategy s : {Strategy::thread_per_row, Strategy::group_per_row, Strategy::block_per_row, Strategy::blocks_per_row})
        for (Op op : kOps) Batch{host, rows(b, l)}.check(op, s);
    }
}

TEST_CASE("11_batched: very long single rows, and a few very long rows split across blocks") {
  for (DType t : {DType::f32, DType::f16}) {
    const HostArray one = generate(t, (std::size_t{1} << 24) + 3, Dist::normal, test::fresh_seed());
    for (Op op : kOps) Batch{one, rows(1, one.n)}.check(op);
    const HostArray few = generate(t, 64 * ((std::size_t{1} << 20) + 5), Dist::ints, test::fresh_seed());
    for (Op op : kOps) Batch{few, rows(64, (std::size_t{1} << 20) + 5)}.check(op);
  }
}

TEST_CASE("11_batched: strided rows and columns (padded rows), chunked or tiled and naive columns") {
  for (DType t : kTypes)
    for (std::size_t l : {1, 8, 13, 64, 1000}) {
      const std::size_t b = 777, stride = l + 5;
      const HostArray host = generate(t, b * stride, Dist::normal, test::fresh_seed());
      for (Op op : kOps) {
        Batch{host, rows(b, l, stride)}.check(op);
        Batch{host, columns(b, l, stride)}.check(op);
        Batch{host, columns(b, l, stride)}.check(op, Strategy::columns_tiled);
        Batch{host, columns(b, l, stride)}.check(op, Strategy::columns_naive);
      }
    }
}

TEST_CASE("11_batched: inputs that start off a 16-byte boundary") {
  for (DType t : kTypes)
    for (std::size_t offset : {1, 3, 5}) {
      const HostArray host = generate(t, 1000 * 80, Dist::normal, test::fresh_seed());
      for (Op op : kOps) {
        Batch r{host, rows(1000, 40)};
        r.base_offset = offset;
        r.check(op);
        Batch c{host, columns(1000, 40)};
        c.base_offset = offset;
        c.check(op);
      }
    }
}

TEST_CASE("11_batched: NaN in one row only, one column only") {
  for (DType t : kTypes) {
    HostArray host = generate(t, 300 * 64, Dist::normal, test::fresh_seed());
    host.set(17 * 64 + 5, std::numeric_limits<double>::quiet_NaN());
    for (Op op : kOps) {
      Batch{host, rows(300, 64)}.check(op);
      Batch{host, columns(300, 64)}.check(op);
    }
  }
}

TEST_CASE("11_batched: the result's bits depend on the shape only (20 runs, scratch refilled)") {
  std::mt19937 fill(static_cast<unsigned>(test::fresh_seed()));
  const HostArray host = generate(DType::f32, 64 * ((std::size_t{1} << 18) + 1), Dist::normal, test::fresh_seed());
  const Batch cases[] = {Batch{host, rows(64, (std::size_t{1} << 18) + 1)}, Batch{host, rows((std::size_t{1} << 18) + 1, 64)},
                         Batch{host, columns(64, (std::size_t{1} << 18) + 1)}, Batch{host, columns((std::size_t{1} << 18) + 1, 64)}};
  for (const Batch& b : cases)
    for (Kernels kernels : kKernels) {
      INFO("layout=", ch11::name(b.shape.layout), " rows=", b.shape.rows, " cols=", b.shape.cols,
           " kernels=", ch11::name(kernels));
      std::set<std::vector<std::byte>> distinct;
      for (int run = 0; run < 20; ++run)
        distinct.insert(b.run(Op::sum, kernels, Strategy::automatic, nullptr, static_cast<int>(fill() & 0xFF)));
      CHECK(distinct.size() == 1);
    }
}

TEST_CASE("11_batched: two streams with their own scratch at once give each stream's answer") {
  Stream a, b;
  const HostArray host = generate(DType::f32, 64 * ((std::size_t{1} << 20) + 3), Dist::normal, test::fresh_seed());
  const HostArray cols = generate(DType::f16, 4095 * 2048, Dist::normal, test::fresh_seed());
  const Batch split{host, rows(64, (std::size_t{1} << 20) + 3)};
  const Batch chunked{cols, columns(4095, 2048)};
  for (Kernels kernels : kKernels) {
    INFO("kernels=", ch11::name(kernels));
    const auto alone_rows = split.run(Op::sum, kernels), alone_cols = chunked.run(Op::sum, kernels);
    for (int k = 0; k < 5; ++k) {
      // Each run() uploads, launches on its stream and waits for it: launch both before waiting by
      // running them from two host threads.
      std::vector<std::byte> got_rows, got_cols;
      std::thread t([&] { got_rows = split.run(Op::sum, kernels, Strategy::automatic, a.get()); });
      got_cols = chunked.run(Op::sum, kernels, Strategy::automatic, b.get());
      t.join();
      CHECK(got_rows == alone_rows);
      CHECK(got_cols == alone_cols);
    }
  }
}

TEST_CASE("11_batched: bad shapes and calls are refused with a reason") {
  CHECK(ch11::why_invalid(rows(std::size_t{1} << 40, std::size_t{1} << 40)).find("overflows") != std::string::npos);
  CHECK(ch11::why_invalid(rows(10, 100, 50)).find("stride") != std::string::npos);
  CHECK(ch11::why_invalid(rows(std::size_t{1} << 32, 1)).find("2^31") != std::string::npos);

  const HostArray host = generate(DType::f32, 1000, Dist::normal, test::fresh_seed());
  const DeviceInput in = upload(host);
  DeviceBuffer out(1000 * 4);
  ch11::BatchedCall c;
  c.input = in.data;
  c.output = out.get();
  c.shape = rows(10, 100, 50);
  CHECK_THROWS_AS(ch11::run(c), std::invalid_argument);
  c.shape = rows(10, 100);
  c.op = Op::min;
  CHECK_THROWS_AS(ch11::run(c), std::invalid_argument);  // not one of this chapter's ops
  c.op = Op::sum;
  c.dtype = DType::i32;
  CHECK_THROWS_AS(ch11::run(c), std::invalid_argument);
  c.dtype = DType::f32;
  for (Kernels kernels : kKernels) {
    c.kernels = kernels;
    c.strategy = Strategy::columns_naive;
    CHECK_THROWS_AS(ch11::run(c), std::invalid_argument);  // a column strategy for rows
    c.strategy = Strategy::thread_per_row;
    c.shape = columns(10, 100);
    CHECK_THROWS_AS(ch11::run(c), std::invalid_argument);  // a row strategy for columns
    c.shape = rows(10, 100);
  }
  c.kernels = static_cast<Kernels>(7);
  c.strategy = Strategy::automatic;
  CHECK_THROWS_WITH_AS(ch11::run(c), "11_batched: unknown kernels", std::invalid_argument);
  // Shapes that need scratch on any GPU: two rows of 2^22 split across blocks, and 2^16 rows of 64
  // columns in chunks.
  const HostArray big = generate(DType::f32, std::size_t{1} << 22 << 1, Dist::normal, test::fresh_seed());
  const DeviceInput big_in = upload(big);
  DeviceBuffer many(std::size_t{1} << 16 << 2);
  for (Kernels kernels : kKernels)
    for (const Shape& shape : {rows(2, std::size_t{1} << 22), columns(std::size_t{1} << 16, 64)}) {
      INFO("layout ", ch11::name(shape.layout), ", kernels ", ch11::name(kernels));
      c.kernels = kernels;
      c.input = big_in.data;
      c.output = many.get();
      c.shape = shape;
      c.strategy = Strategy::automatic;
      const std::size_t needed = ch11::scratch_bytes_of(c);
      REQUIRE(needed > 0);
      DeviceBuffer scratch(needed + 16);
      c.scratch = scratch.get();
      c.scratch_bytes = needed - 1;
      CHECK_THROWS_WITH_AS(ch11::run(c), doctest::Contains("scratch buffer too small"), std::invalid_argument);
      c.scratch_bytes = needed;
      c.scratch = static_cast<char*>(scratch.get()) + 8;
      CHECK_THROWS_WITH_AS(ch11::run(c), "11_batched: scratch not aligned to 16 bytes", std::invalid_argument);
      c.scratch = nullptr;
      CHECK_THROWS_WITH_AS(ch11::run(c), doctest::Contains("null scratch"), std::invalid_argument);
    }
}

TEST_CASE("11_batched: rows of no columns under every row strategy, columns of no rows under every column strategy") {
  const HostArray host = generate(DType::f32, 1, Dist::normal, test::fresh_seed());
  for (Strategy s : {Strategy::automatic, Strategy::thread_per_row, Strategy::group_per_row, Strategy::block_per_row,
                     Strategy::blocks_per_row})
    for (Op op : kOps) Batch{host, rows(10, 0)}.check(op, s);
  for (Strategy s : {Strategy::automatic, Strategy::columns_tiled, Strategy::columns_naive})
    for (Op op : kOps) Batch{host, columns(0, 10)}.check(op, s);
}

TEST_CASE("11_batched: the teaching kernels run the tuned plan's mapping of rows, and fill the GPU with columns") {
  // The lesson's plan picks the mapping; the tuned kernels change how it is carried out, not which.
  const std::size_t lengths[] = {1, 8, 9, 100, 1024, 2049, 4096, 8192, 70'000, std::size_t{1} << 22};
  for (std::size_t l : lengths)
    for (std::size_t b : {1, 64, 4096}) {
      INFO("rows ", b, ", cols ", l);
      ch11::BatchedCall c;
      c.shape = rows(b, l);
      const ch11::Plan tuned = ch11::plan_of(c);
      c.kernels = Kernels::teaching;
      const ch11::Plan teaching = ch11::plan_of(c);
      CHECK(teaching.strategy == tuned.strategy);
      CHECK(teaching.lanes == tuned.lanes);
      CHECK(teaching.split == tuned.split);
      CHECK(teaching.chunk == tuned.chunk);
      CHECK(teaching.scratch_bytes == tuned.scratch_bytes);
    }
  // Columns: chunks of rows while the strips of 256 columns are fewer than the GPU's blocks, no
  // more chunks than a chunk has rows; one chunk (the naive mapping) once the strips fill the GPU.
  const std::size_t blocks =
      std::size_t{ch11::sm_count()} * ch11::blocks_per_sm<ch11::kBlock>(ch11::columns_by_chunks<red::Sum<float>, float>);
  for (std::size_t l : {1, 8, 255, 256, 257, 4096, 1 << 20})
    for (std::size_t b : {1, 7, 1000, 1 << 20}) {
      INFO("rows ", b, ", cols ", l);
      ch11::BatchedCall c;
      c.shape = columns(b, l);
      c.kernels = Kernels::teaching;
      const ch11::Plan p = ch11::plan_of(c);
      const std::size_t strips = (l + 255) / 256;
      CHECK(p.split * p.chunk >= b);
      CHECK((p.split - 1) * p.chunk < std::max<std::size_t>(b, 1));
      CHECK(p.split <= std::max<std::size_t>(1, blocks / strips));
      CHECK(p.split <= p.chunk);
      CHECK(p.split <= 65535);
      if (strips >= blocks) CHECK(p.split == 1);
      CHECK((p.split == 1) == (p.strategy == Strategy::columns_naive));
      CHECK(p.scratch_bytes == (p.split == 1 ? 0 : ch11::counter_bytes() + p.split * l * 4));
      c.strategy = Strategy::columns_naive;
      CHECK(ch11::plan_of(c).split == 1);
    }
}

TEST_CASE("11_batched: one scratch, zeroed once, serves calls of every shape in turn") {
  // Rows split across blocks, chunked columns and the rest, one after another on one scratch,
  // under the tuned and then the teaching kernels, then the same sequence again: each shape's
  // counters lie where another shape's partials were unless every shape and both kinds of kernels
  // keep their counters in one place (ch11::counter_bytes).
  const HostArray host = generate(DType::f32, std::size_t{1} << 23, Dist::ints, test::fresh_seed());
  const DeviceInput in = upload(host);
  const Shape shapes[] = {rows(2, std::size_t{1} << 22),  rows(7, 1'000'003),      columns(std::size_t{1} << 16, 64),
                          columns(4095, 2048),            rows(1 << 16, 100),
                          columns(300, 1 << 13),          rows(3, (std::size_t{1} << 21) + 1)};
  std::size_t largest = 0;
  ch11::BatchedCall c;
  c.input = in.data;
  for (Kernels kernels : kKernels)
    for (const Shape& s : shapes) {
      c.kernels = kernels;
      c.shape = s;
      largest = std::max(largest, ch11::scratch_bytes_of(c));
    }
  DeviceBuffer scratch(largest), out(std::size_t{1} << 16 << 2);
  scratch.zero_prefix(ch11::counter_bytes());  // once
  for (int round = 0; round < 2; ++round)
    for (Kernels kernels : kKernels)
      for (const Shape& s : shapes) {
        INFO("round ", round, ", kernels ", ch11::name(kernels), ", layout ", ch11::name(s.layout), ", rows ", s.rows,
             ", cols ", s.cols);
        c.kernels = kernels;
        c.shape = s;
        c.output = out.get();
        c.scratch = scratch.get();
        c.scratch_bytes = scratch.bytes();
        c.op = Op::sum;
        const ch11::Plan plan = ch11::plan_of(c);
        CHECK((plan.scratch_bytes == 0 || plan.zeroed_scratch_bytes == ch11::counter_bytes()));
        out.fill(0xA5);
        CUDA_CHECK(cudaDeviceSynchronize());
        ch11::run(c);
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<std::byte> got(ch11::outputs(s) * 4);
        out.download(got.data(), got.size());
        const ch11::BatchCheck r = ch11::check_all(host, s, Op::sum, plan, got);
        CHECK_MESSAGE(r.failed == 0, r.first_failure);
        CHECK(scratch.prefix_is_zero(ch11::counter_bytes()));
      }
}

TEST_CASE("11_batched: prepare with a scratch size of the caller's own plans the call and zeroes its counters") {
  // A larger scratch than the plan asks for, and a library's (0 bytes, as CUB's size is asked for
  // later): the plan is the call's all the same, and the counters are zeroed wherever the scratch
  // holds them, so that the chapter's kernels run on it as on a scratch of the plan's size.
  const HostArray host = generate(DType::f32, std::size_t{1} << 22, Dist::ints, test::fresh_seed());
  const DeviceInput in = upload(host);
  for (Kernels kernels : kKernels)
    for (const Shape& s : {rows(2, std::size_t{1} << 21), columns(4095, 1024)}) {
      INFO("kernels ", ch11::name(kernels), ", layout ", ch11::name(s.layout), ", rows ", s.rows, ", cols ", s.cols);
      const auto planned = ch11::prepare(Op::sum, DType::f32, in.data, s, Strategy::automatic, kernels, nullptr);
      REQUIRE(planned->plan.zeroed_scratch_bytes == ch11::counter_bytes());  // a plan that keeps counters
      const std::size_t bytes = planned->plan.scratch_bytes + 4096;
      const auto p = ch11::prepare(Op::sum, DType::f32, in.data, s, Strategy::automatic, kernels, nullptr, bytes);
      CHECK(p->call.scratch_bytes == bytes);
      CHECK(p->plan.strategy == planned->plan.strategy);
      CHECK(p->plan.split == planned->plan.split);
      CHECK(p->plan.scratch_bytes == planned->plan.scratch_bytes);
      CHECK(p->plan.zeroed_scratch_bytes == planned->plan.zeroed_scratch_bytes);
      CHECK(p->counters_are_zero());
      p->scratch.fill(0xA5, nullptr, p->plan.zeroed_scratch_bytes);  // garbage after the counters
      for (int call = 0; call < 2; ++call) {
        p->output.fill(0xA5);
        p->run_and_wait();
        const ch11::BatchCheck r = ch11::check_all(host, s, Op::sum, p->plan, p->results());
        CHECK_MESSAGE(r.failed == 0, r.first_failure);
        CHECK(p->counters_are_zero());
      }
      const auto library = ch11::prepare(Op::sum, DType::f32, in.data, s, Strategy::automatic, kernels, nullptr, 0);
      CHECK(library->call.scratch_bytes == 0);
      CHECK(library->plan.strategy == planned->plan.strategy);
    }
}

// ---- above 2^31 elements (ctest's label "large") ----------------------------------------------------

namespace {
// Whether the device holds `bytes` of input with room to spare; else the case says why it skipped.
bool device_holds(std::size_t bytes) {
  if (3 * bytes < query_device().free_memory) return true;
  MESSAGE("skipped: the device has too little free memory for ", bytes, " bytes of input (and room to spare)");
  return false;
}
constexpr std::size_t kPast31 = (std::size_t{1} << 31) + 34;  // elements in all: past every 32-bit count
}  // namespace

TEST_CASE("large: 11_batched rows and columns of more than 2^31 elements" * doctest::test_suite("large")) {
  const std::size_t n = kPast31 + 4096;
  if (!device_holds(n * 2)) return;
  // f16 small integers: every partial sum stays an integer far below 2^24 (a random walk), so the
  // sums are exact and a lost or doubled element shows.
  const HostArray host = generate(DType::f16, n, Dist::ints, test::fresh_seed());
  test::progress("rows: 2 rows of 2^30 + 17");
  for (Op op : {Op::sum, Op::argmax}) Batch{host, rows(2, kPast31 / 2)}.check(op);
  test::progress("columns: 2^21 + 1 rows of 1024, then of 1023 with a stride of 1024");
  const std::size_t tall = (std::size_t{1} << 21) + 1;
  Batch{host, columns(tall, 1024)}.check(Op::sum);
  Batch{host, columns(tall, 1023, 1024)}.check(Op::max);
}

TEST_CASE("large: 11_batched argmax of one row of 2^31 - 1 elements, the winner at the end" *
          doctest::test_suite("large")) {
  const std::size_t n = 0x7fffffff;
  if (!device_holds(n * 2)) return;
  HostArray host = generate(DType::f16, n, Dist::ints, test::fresh_seed());
  host.set(n - 2, 1000.0);  // above every small integer: the index is 2^31 - 3, the top of int32's range
  for (Op op : {Op::argmax, Op::max}) Batch{host, rows(1, n)}.check(op);
}
