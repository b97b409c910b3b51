#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "12_segmented/host_reference.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "runner.hpp"
#include "test_support.hpp"

using namespace red;
using ch12::Kernels;
using ch12::SegmentDist;
using ch12::Strategy;

namespace {

// Both balanced kernels: every case that runs the tuned one runs the lesson's teaching one too.
const Kernels kKernels[] = {Kernels::tuned, Kernels::teaching};

// One segmented call on the device, its results downloaded (4 bytes each).
struct Segments {
  const HostArray& host;
  std::vector<std::int64_t> offsets;
  std::size_t n = 0;            // the input's elements: the last offset unless set
  std::size_t base_offset = 0;  // elements past a 256-byte boundary where the input starts

  Segments(const HostArray& h, std::vector<std::int64_t> o, std::size_t elements = 0)
      : host(h), offsets(std::move(o)), n(elements ? elements : static_cast<std::size_t>(offsets.back())) {}

  // Two calls on one scratch, the output poisoned before each (a result never written shows as
  // 0xA5A5A5A5): the second must give the first's bits, and its results are returned.
  std::vector<std::byte> run(Op op, Strategy strategy, Kernels kernels, cudaStream_t stream = nullptr,
                             int scratch_fill = -1) const {
    const DeviceInput in = upload(host, base_offset);
    const auto p = ch12::prepare(op, host.dtype, in.data, n, offsets, strategy, kernels, stream);
    if (scratch_fill >= 0) p->scratch.fill(scratch_fill, stream);
    p->output.fill(0xA5, stream);  // on the call's stream: ordered before it
    p->run_and_wait();
    const std::vector<std::byte> first = p->results();
    p->output.fill(0xA5, stream);
    p->run_and_wait();
    const std::vector<std::byte> second = p->results();
    CHECK_MESSAGE(second == first, "a second call on the same scratch gave other results");
    return second;
  }

  // Runs one mapping with one kernel and checks every result.
  void check_one(Op op, Strategy strategy, Kernels kernels) const {
    INFO("segments=", offsets.size() - 1, " n=", n, " op=", std::string(name(op)), " dtype=", std::string(name(host.dtype)),
         " strategy=", ch12::name(strategy), " kernels=", ch12::name(kernels), " base offset=", base_offset);
    ch12::SegmentedCall c;
    c.op = op;
    c.dtype = host.dtype;
    c.n = n;
    c.segments = offsets.size() - 1;
    c.strategy = strategy;
    c.kernels = kernels;
    const ch12::Plan plan = ch12::plan_of(c);
    const ch11::BatchCheck r = ch12::check_all(host, c, offsets, plan, run(op, strategy, kernels));
    INFO("plan: ", ch12::name(plan.strategy), " lanes ", plan.lanes, " blocks ", plan.blocks);
    CHECK_MESSAGE(r.failed == 0, r.first_failure);
    CHECK(r.checked == offsets.size() - 1);
  }

  // The balanced mapping (automatic) with both kernels, or the naive one (one kernel for both).
  void check(Op op, Strategy strategy = Strategy::automatic) const {
    if (strategy == Strategy::naive) return check_one(op, strategy, Kernels::tuned);
    for (Kernels k : kKernels) check_one(op, strategy, k);
  }
};

const Op kOps[] = {Op::sum, Op::max, Op::argmax};
const DType kTypes[] = {DType::f32, DType::f16, DType::bf16};

SegmentDist dist_of(bool heavy) { return heavy ? SegmentDist::heavy : SegmentDist::uniform; }

}  // namespace

TEST_CASE("12_segmented: uniform and heavy-tailed segments, balanced (tuned and teaching) and naive") {
  for (DType t : kTypes)
    for (std::size_t mean : {4, 32, 1024})
      for (bool heavy : {false, true}) {
        const std::size_t count = std::max<std::size_t>(16, (std::size_t{1} << 21) / mean);
        const std::vector<std::int64_t> o = ch12::make_offsets(count, mean, dist_of(heavy), test::fresh_seed());
        const HostArray host = generate(t, static_cast<std::size_t>(o.back()), Dist::ints, test::fresh_seed());
        for (Op op : kOps) {
          Segments{host, o}.check(op);
          if (mean == 32) Segments{host, o}.check(op, Strategy::naive);
        }
      }
  // Enough elements for many windows per warp: a segment's partial carried from window to window
  // (through windows with no end, in the lanes' own partials), and the heavy tail's longest
  // segment across hundreds of warps' ranges.
  for (DType t : {DType::f32, DType::f16})
    for (bool heavy : {false, true}) {
      const std::vector<std::int64_t> o = ch12::make_offsets(1 << 16, 256, dist_of(heavy), test::fresh_seed());
      const HostArray host = generate(t, static_cast<std::size_t>(o.back()), Dist::normal, test::fresh_seed());
      for (Op op : kOps) Segments{host, o}.check(op);
    }
}

TEST_CASE("12_segmented: odd sizes, from one element to a few windows, and one huge segment") {
  for (DType t : kTypes) {
    const HostArray host = generate(t, 300'000, Dist::normal, test::fresh_seed());
    for (std::size_t n : {1, 2, 3, 7, 31, 33, 255, 257, 511, 513, 1023, 1025, 4097, 65537, 299'999})
      for (std::size_t count : {1, 2, 3, 17, 1000}) {
        // `count` segments of random lengths summing to n (empty ones among them).
        std::mt19937_64 rng(test::fresh_seed());
        std::vector<std::int64_t> o(count + 1, 0);
        for (std::size_t s = 1; s < count; ++s) o[s] = static_cast<std::int64_t>(rng() % (n + 1));
        o[count] = static_cast<std::int64_t>(n);
        std::sort(o.begin(), o.end());
        for (Op op : kOps) Segments{host, o}.check(op);
      }
    // One segment of all the elements, and one between long runs of empty segments.
    for (Op op : kOps) {
      Segments{host, {0, static_cast<std::int64_t>(host.n)}}.check(op);
      std::vector<std::int64_t> o(5000, 3);
      o.insert(o.end(), 5000, static_cast<std::int64_t>(host.n) - 5);
      Segments{host, o, host.n}.check(op);
    }
  }
}

TEST_CASE("12_segmented: inputs that start off a 16-byte boundary") {
  for (DType t : kTypes)
    for (std::size_t offset : {1, 3, 5}) {
      const HostArray host = generate(t, 1000 * 80, Dist::normal, test::fresh_seed());
      for (Op op : kOps) {
        Segments s{host, ch12::make_offsets(1000, 40, SegmentDist::uniform, test::fresh_seed())};
        s.base_offset = offset;
        s.check(op);
        // A heavy tail off the boundary: one segment across many warps' ranges, read element by
        // element where the tuned kernel cannot load 16 bytes at once.
        Segments h{host, ch12::make_offsets(300, 64, SegmentDist::heavy, test::fresh_seed())};
        h.base_offset = offset;
        REQUIRE(h.n <= host.n);  // about 1.05 x 300 x 64 of the 80,000 elements
        h.check(op);
      }
    }
}

TEST_CASE("12_segmented: NaN in one segment only") {
  for (DType t : kTypes) {
    HostArray host = generate(t, 300 * 64, Dist::normal, test::fresh_seed());
    host.set(17 * 64 + 5, std::numeric_limits<double>::quiet_NaN());
    std::vector<std::int64_t> o(301);
    for (std::size_t s = 0; s <= 300; ++s) o[s] = static_cast<std::int64_t>(s * 64);
    for (Op op : kOps) Segments{host, o}.check(op);
  }
}

TEST_CASE("12_segmented: all-empty segments, no segments, and empty segments at both ends") {
  for (DType t : kTypes) {
    const HostArray none = generate(t, 1, Dist::normal, test::fresh_seed());
    for (Op op : kOps) {
      Segments{none, std::vector<std::int64_t>(1001, 0), 0}.check(op);
      Segments{none, std::vector<std::int64_t>(1, 0), 0}.check(op);
    }
    const HostArray host = generate(t, 100'000, Dist::normal, test::fresh_seed());
    const std::vector<std::int64_t> o = {0, 0, 0, 5, 5, 99'000, 99'000, 100'000, 100'000, 100'000};
    // Elements before the first segment and after the last belong to none.
    const std::vector<std::int64_t> inside = {7, 7, 100, 5'000, 60'000, 60'001, 99'000};
    // Far more ends in one window than a warp reads at a time: an empty segment before every
    // one-element segment, then a run of 3000 empty ones, then segments of 0 to 3 elements.
    std::vector<std::int64_t> dense;
    for (std::int64_t e = 0; e < 20'000; ++e) dense.insert(dense.end(), {e, e});
    dense.insert(dense.end(), 3000, 20'000);
    for (std::int64_t e = 20'001; e <= 30'000; ++e) dense.push_back(e / 3 * 3);
    // Every segment empty, at an offset inside the input.
    const std::vector<std::int64_t> all_at_one(700, 4321);
    for (Op op : kOps) {
      Segments{host, o}.check(op);
      Segments{host, inside, host.n}.check(op);
      Segments{host, dense}.check(op);
      Segments{host, all_at_one, host.n}.check(op);
    }
  }
}

TEST_CASE("12_segmented: the balanced kernels over many more warps than the work needs") {
  // Grids far larger than the plans': ranges of a few elements or none, ranges that hold ends only,
  // and bounds that fall inside an end's cost. Small integers: every order of additions is exact.
  for (DType t : {DType::f32, DType::bf16}) {
    const HostArray host = generate(t, 20'000, Dist::ints, test::fresh_seed());
    const DeviceInput in = upload(host);
    std::vector<std::vector<std::int64_t>> shapes = {
        ch12::make_offsets(400, 8, SegmentDist::heavy, test::fresh_seed()), {0, 1}, {0, 0, 0, 1, 1, 2, 2, 2},
        ch12::make_offsets(3, 3000, SegmentDist::uniform, test::fresh_seed())};
    std::vector<std::int64_t> runs;  // runs of empty segments between single elements
    for (std::int64_t e = 0; e < 64; ++e) runs.insert(runs.end(), 40, e);
    shapes.push_back(runs);
    for (const auto& o : shapes)
      for (unsigned blocks : {1u, 3u, 17u, 64u})
        for (Kernels kernels : kKernels)
          for (Op op : kOps) {
            INFO("segments ", o.size() - 1, ", n ", o.back(), ", blocks ", blocks, ", kernels ", ch12::name(kernels),
                 ", op ", std::string(name(op)));
            const std::size_t n = static_cast<std::size_t>(o.back());
            auto p = ch12::prepare(op, t, in.data, n, o, Strategy::balanced, kernels, nullptr);
            ch12::SegmentedCall& c = p->call;
            ch12::Plan& plan = p->plan;
            plan.blocks = blocks;
            plan.per_warp = n + 32 * 32 + 64;  // the deepest chain any range can have
            p->output.fill(0xA5);
            dispatch(ch12::Ops{}, ch12::Types{}, op, t, [&](auto tag) {
              using O = typename decltype(tag)::type;
              using T = typename O::In;
              // A record a warp, garbage before the call.
              p->scratch = DeviceBuffer(std::size_t{blocks} * ch12::kWarpsPerBlock * sizeof(ch12::Pieces<typename O::Acc>));
              p->scratch.fill(0x5A);
              c.scratch = p->scratch.get();
              c.scratch_bytes = p->scratch.bytes();
              if (kernels == Kernels::teaching)
                ch12::launch_balanced<O, T>(c, plan);
              else
                ch12::launch_balanced_tuned<O, T>(c, plan);
            });
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            const ch11::BatchCheck r = ch12::check_all(host, c, o, plan, p->results());
            CHECK_MESSAGE(r.failed == 0, r.first_failure);
          }
  }
}

TEST_CASE("12_segmented: the result's bits depend on the offsets only (20 runs, scratch refilled)") {
  std::mt19937 fill(static_cast<unsigned>(test::fresh_seed()));
  const std::vector<std::int64_t> o = ch12::make_offsets(1 << 16, 256, SegmentDist::heavy, test::fresh_seed());
  const HostArray host = generate(DType::f32, static_cast<std::size_t>(o.back()), Dist::normal, test::fresh_seed());
  const Segments segs{host, o};
  for (Kernels kernels : kKernels) {
    INFO("kernels ", ch12::name(kernels));
    std::set<std::vector<std::byte>> distinct;
    for (int run = 0; run < 20; ++run)
      distinct.insert(segs.run(Op::sum, Strategy::automatic, kernels, nullptr, static_cast<int>(fill() & 0xFF)));
    CHECK(distinct.size() == 1);
  }
}

TEST_CASE("12_segmented: two streams with their own scratch at once give each stream's answer") {
  Stream a, b;
  const std::vector<std::int64_t> o = ch12::make_offsets(1 << 14, 4096, SegmentDist::heavy, test::fresh_seed());
  const std::vector<std::int64_t> p = ch12::make_offsets(1 << 16, 512, SegmentDist::uniform, test::fresh_seed());
  const HostArray x = generate(DType::f32, static_cast<std::size_t>(o.back()), Dist::normal, test::fresh_seed());
  const HostArray y = generate(DType::f16, static_cast<std::size_t>(p.back()), Dist::normal, test::fresh_seed());
  const Segments heavy{x, o}, uniform{y, p};
  for (Kernels kernels : kKernels) {
    INFO("kernels ", ch12::name(kernels));
    const auto alone_heavy = heavy.run(Op::sum, Strategy::automatic, kernels);
    const auto alone_uniform = uniform.run(Op::max, Strategy::automatic, kernels);
    for (int k = 0; k < 5; ++k) {
      // Each run() uploads, launches on its stream and waits for it: launch both before waiting by
      // running them from two host threads.
      std::vector<std::byte> got_heavy, got_uniform;
      std::thread t([&] { got_heavy = heavy.run(Op::sum, Strategy::automatic, kernels, a.get()); });
      got_uniform = uniform.run(Op::max, Strategy::automatic, kernels, b.get());
      t.join();
      CHECK(got_heavy == alone_heavy);
      CHECK(got_uniform == alone_uniform);
    }
  }
}

TEST_CASE("12_segmented: bad offsets and calls are refused with a reason") {
  const std::int64_t decreasing[] = {0, 5, 3};
  CHECK(ch12::check_offsets(decreasing, 2, 10).find("decrease") != std::string::npos);
  const std::int64_t past[] = {0, 5, 11};
  CHECK(ch12::check_offsets(past, 2, 10).find("outside") != std::string::npos);
  const std::int64_t negative[] = {-1, 5};
  CHECK(ch12::check_offsets(negative, 1, 10).find("offset 0 (-1) is negative") != std::string::npos);
  const std::int64_t fine[] = {0, 0, 10};
  CHECK(ch12::check_offsets(fine, 2, 10).empty());
  CHECK(ch12::why_invalid(0xffffffffu, 10).find("2^32") != std::string::npos);
  CHECK(ch12::why_invalid(1, (std::size_t{1} << 60) + 1).find("2^60") != std::string::npos);

  const HostArray host = generate(DType::f32, std::size_t{1} << 20, Dist::normal, test::fresh_seed());
  const DeviceInput in = upload(host);
  const std::vector<std::int64_t> o = ch12::make_offsets(1000, 32, SegmentDist::uniform, test::fresh_seed());
  DeviceBuffer offsets(o.size() * 8), out(o.size() * 4);
  offsets.upload(o.data(), o.size() * 8);
  for (Kernels kernels : kKernels) {
    INFO("kernels ", ch12::name(kernels));
    ch12::SegmentedCall c;
    c.input = in.data;
    c.n = static_cast<std::size_t>(o.back());
    c.segments = o.size() - 1;
    c.offsets = static_cast<const std::int64_t*>(offsets.get());
    c.output = out.get();
    c.kernels = kernels;
    const std::size_t needed = ch12::scratch_bytes_of(c);
    REQUIRE(needed > 0);  // the balanced mapping's records
    DeviceBuffer scratch(needed + 16);
    c.scratch = scratch.get();
    c.scratch_bytes = needed;
    c.op = Op::min;
    CHECK_THROWS_AS(ch12::run(c), std::invalid_argument);  // not one of this chapter's ops
    c.op = Op::sum;
    c.dtype = DType::i32;
    CHECK_THROWS_AS(ch12::run(c), std::invalid_argument);
    c.dtype = DType::f32;
    c.offsets = nullptr;
    CHECK_THROWS_WITH_AS(ch12::run(c), "12_segmented: null offsets", std::invalid_argument);
    c.offsets = static_cast<const std::int64_t*>(offsets.get());
    c.input = static_cast<const char*>(in.data) + 2;
    CHECK_THROWS_WITH_AS(ch12::run(c), doctest::Contains("not aligned"), std::invalid_argument);
    c.input = in.data;
    c.scratch_bytes = needed - 1;
    CHECK_THROWS_WITH_AS(ch12::run(c), doctest::Contains("scratch buffer too small"), std::invalid_argument);
    c.scratch_bytes = needed;
    c.scratch = static_cast<char*>(scratch.get()) + 8;
    CHECK_THROWS_WITH_AS(ch12::run(c), "12_segmented: scratch not aligned to 16 bytes", std::invalid_argument);
    c.scratch = nullptr;
    CHECK_THROWS_WITH_AS(ch12::run(c), doctest::Contains("null scratch"), std::invalid_argument);
  }
}

TEST_CASE("12_segmented: one scratch serves calls of other n and segment counts in turn") {
  // Calls of different sizes one after another on one scratch, the output poisoned before each,
  // then the same sequence again: no call may depend on what an earlier one left in the scratch.
  // The two balanced kernels take turns on the same scratch too.
  const HostArray host = generate(DType::f32, std::size_t{1} << 23, Dist::ints, test::fresh_seed());
  const DeviceInput in = upload(host);
  std::vector<std::vector<std::int64_t>> cases = {
      ch12::make_offsets(1 << 14, 256, SegmentDist::heavy, test::fresh_seed()),
      ch12::make_offsets(10, 1000, SegmentDist::uniform, test::fresh_seed()),
      ch12::make_offsets(1 << 20, 4, SegmentDist::uniform, test::fresh_seed()),
      ch12::make_offsets(3, 1 << 20, SegmentDist::uniform, test::fresh_seed()),
      std::vector<std::int64_t>(100, 0)};
  for (auto& o : cases)
    for (auto& v : o) v = std::min<std::int64_t>(v, static_cast<std::int64_t>(host.n));
  ch12::SegmentedCall c;
  c.input = in.data;
  std::size_t largest = 0;
  for (const auto& o : cases)
    for (Kernels kernels : kKernels) {
      c.n = static_cast<std::size_t>(o.back());
      c.segments = o.size() - 1;
      c.kernels = kernels;
      largest = std::max(largest, ch12::scratch_bytes_of(c));
    }
  DeviceBuffer scratch(largest), out(std::size_t{1} << 20 << 2), offsets(((std::size_t{1} << 20) + 1) * 8);
  for (int round = 0; round < 2; ++round)
    for (const auto& o : cases)
      for (Kernels kernels : kKernels) {
        INFO("round ", round, ", segments ", o.size() - 1, ", n ", o.back(), ", kernels ", ch12::name(kernels));
        offsets.upload(o.data(), o.size() * 8);
        c.n = static_cast<std::size_t>(o.back());
        c.segments = o.size() - 1;
        c.offsets = static_cast<const std::int64_t*>(offsets.get());
        c.output = out.get();
        c.scratch = scratch.get();
        c.scratch_bytes = scratch.bytes();
        c.kernels = kernels;
        out.fill(0xA5);
        CUDA_CHECK(cudaDeviceSynchronize());
        ch12::run(c);
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<std::byte> got(c.segments * 4);
        out.download(got.data(), got.size());
        const ch11::BatchCheck r = ch12::check_all(host, c, o, ch12::plan_of(c), got);
        CHECK_MESSAGE(r.failed == 0, r.first_failure);
      }
}

// ---- above 2^31 elements (ctest's label "large") ----------------------------------------------------

TEST_CASE("large: 12_segmented segments of more than 2^31 elements in all, and one of 2^31 - 1" *
          doctest::test_suite("large")) {
  constexpr std::size_t kPast31 = (std::size_t{1} << 31) + 34;  // past every 32-bit count
  const std::size_t n = kPast31 + 4096;
  if (3 * n * 2 >= query_device().free_memory) {
    MESSAGE("skipped: the device has too little free memory for ", n * 2, " bytes of input (and room to spare)");
    return;
  }
  // f16 small integers: every partial sum stays an integer far below 2^24 (a random walk), so the
  // sums are exact and a lost or doubled element shows.
  const HostArray host = generate(DType::f16, n, Dist::ints, test::fresh_seed());
  test::progress("1000 segments of about 2^21 elements");
  std::vector<std::int64_t> o = ch12::make_offsets(1000, std::size_t{1} << 21, SegmentDist::uniform, test::fresh_seed());
  for (auto& v : o) v = std::min<std::int64_t>(v, static_cast<std::int64_t>(kPast31));
  o.back() = static_cast<std::int64_t>(kPast31);
  Segments{host, o}.check(Op::sum);
  test::progress("one segment of 2^31 - 1 elements");
  Segments{host, {0, 17, 17 + std::int64_t{0x7fffffff}}}.check(Op::sum);
}
