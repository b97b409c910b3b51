// Chapter 11's shapes: B x L = 2^26 elements as rows and as columns, and segments of two length
// distributions, each with the lesson's automatic choice, the strategies it chooses between, and
// cub::DeviceSegmentedReduce on the same input in the same run. Every call is checked against the
// float64 reference before it is timed.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "11_batched/baselines.cuh"
#include "11_batched/host_reference.hpp"
#include "device_buffer.hpp"
#include "runner.hpp"
#include "suite.hpp"

namespace red::bench::suite {

namespace {

constexpr std::size_t kElements = std::size_t{1} << 26;

// The input (one per dtype and element count, shared by the cases that follow each other) and a
// shape's offsets on the device.
struct Data {
  HostArray host;
  DeviceInput device;
};
std::shared_ptr<Data> data_for(DType t, std::size_t n) {
  static std::shared_ptr<Data> last;
  if (!last || last->host.dtype != t || last->host.n != n) {
    last.reset();  // the previous input's device memory first
    HostArray host = generate(t, n, Dist::normal, 0xBA7C + n);
    DeviceInput device = upload(host);
    last = std::make_shared<Data>(Data{std::move(host), std::move(device)});
  }
  return last;
}

struct Kernel {
  std::string name;  // benchmark kernel name
  std::string variant_of;
  ch11::Strategy strategy;  // automatic for the lesson; forced for a variant
  bool cub = false;
};

struct Resources {
  std::shared_ptr<Data> data;
  std::unique_ptr<ch11::Prepared> prepared;
};

int layout_id(ch11::Layout l) { return l == ch11::Layout::rows ? 1 : l == ch11::Layout::columns ? 2 : 3; }
int strategy_id(ch11::Strategy s) {
  switch (s) {
    case ch11::Strategy::thread_per_row: return 1;
    case ch11::Strategy::group_per_row: return 2;
    case ch11::Strategy::block_per_row: return 3;
    case ch11::Strategy::blocks_per_row: return 4;
    default: return 0;
  }
}

void register_case(Op op, DType t, ch11::Shape shape, std::vector<std::int64_t> offsets, bool heavy, const Kernel& k,
                   int repetitions = 0) {
  const std::size_t n = ch11::elements_read(shape);
  const std::size_t segments = shape.layout == ch11::Layout::segments ? shape.segments : shape.rows;
  const std::size_t length = shape.layout == ch11::Layout::segments ? (segments ? n / segments : 0) : shape.cols;
  std::string label = "11_batched/" + k.name + "/" + std::string(name(op)) + "/" + std::string(name(t)) + "/" +
                      std::to_string(n) + "/" + ch11::name(shape.layout) + "_" + std::to_string(segments) + "x" +
                      std::to_string(length) + (shape.layout == ch11::Layout::segments ? (heavy ? "_heavy" : "_uniform") : "");
  const auto shared_offsets = std::make_shared<std::vector<std::int64_t>>(std::move(offsets));
  register_timed(label, static_cast<double>(n * size_of(t)), [=](cudaStream_t stream) {
    auto r = std::make_shared<Resources>();
    r->data = data_for(t, std::max(ch11::input_elements(shape), std::size_t{1}));
    const auto cub_call = [t](const ch11::BatchedCall& c, void* temp, std::size_t& bytes) {
      dispatch(Ops<Sum>{}, Types<float, __half, __nv_bfloat16>{}, Op::sum, t, [&](auto tag) {
        CUDA_CHECK(ch11::cub_segmented<typename decltype(tag)::type::In>(temp, bytes, c));
      });
    };
    r->prepared = ch11::prepare(op, t, r->data->device.data, shape, *shared_offsets, k.strategy, stream,
                                k.cub ? std::optional<std::size_t>(0) : std::nullopt);
    if (k.cub) {  // CUB's own size query, once, and its scratch
      std::size_t bytes = 0;
      cub_call(r->prepared->call, nullptr, bytes);
      r->prepared->scratch = DeviceBuffer(bytes);
      r->prepared->call.scratch = r->prepared->scratch.get();
      r->prepared->call.scratch_bytes = bytes;
    }
    const ch11::BatchedCall c = r->prepared->call;
    ch11::Plan plan = r->prepared->plan;
    if (k.cub) plan.strategy = ch11::Strategy::columns_naive;  // CUB's order is its own: the loosest bound, a serial chain
    TimedCase tc;
    tc.call = [c, k, cub_call] {
      if (!k.cub) return ch11::run(c);
      std::size_t bytes = c.scratch_bytes;
      cub_call(c, c.scratch, bytes);
    };
    tc.call();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<std::byte> got = r->prepared->results();
    if (!(k.cub && op == Op::max)) {  // CUB's max has its own NaN rule (baselines.cuh)
      const ch11::BatchCheck check = ch11::check_all(r->data->host, shape, *shared_offsets, op, plan, got);
      if (check.failed) tc.wrong = check.first_failure;
    }
    tc.elements = static_cast<double>(n);
    tc.bytes = static_cast<double>(ch11::counted_bytes(shape, size_of(t)));
    tc.repetitions = repetitions;
    tc.variant_of = k.variant_of;
    tc.counters["layout_id"] = layout_id(shape.layout);
    tc.counters["segments"] = static_cast<double>(segments);
    tc.counters["length"] = static_cast<double>(length);
    if (shape.layout == ch11::Layout::segments) tc.counters["param_heavy"] = heavy ? 1 : 0;
    if (!k.cub && shape.layout == ch11::Layout::rows) tc.counters["param_strategy_id"] = strategy_id(plan.strategy);
    tc.keep = r;
    return tc;
  });
}

ch11::Shape matrix(ch11::Layout layout, std::size_t b, std::size_t l) {
  ch11::Shape s;
  s.layout = layout;
  s.rows = b;
  s.cols = l;
  s.stride = l;
  return s;
}

}  // namespace

void register_batched() {
  using ch11::Strategy;
  const Kernel rows{"reduce_rows", "", Strategy::automatic}, columns{"reduce_columns", "", Strategy::automatic},
      segments{"reduce_segments", "", Strategy::automatic}, cub{"cub_segmented_reduce", "", Strategy::automatic, true};
  const Kernel row_variants[] = {{"reduce_rows_thread_per_row", "reduce_rows", Strategy::thread_per_row},
                                 {"reduce_rows_group_per_row", "reduce_rows", Strategy::group_per_row},
                                 {"reduce_rows_block_per_row", "reduce_rows", Strategy::block_per_row},
                                 {"reduce_rows_blocks_per_row", "reduce_rows", Strategy::blocks_per_row}};
  const Kernel columns_naive{"reduce_columns_naive", "reduce_columns", Strategy::columns_naive};
  const Kernel segments_naive{"reduce_segments_naive", "reduce_segments", Strategy::segments_naive};

  for (DType t : {DType::f32, DType::f16}) {
    std::vector<std::pair<std::size_t, std::size_t>> shapes;  // (B, L)
    for (std::size_t l : {8, 32, 128, 1024, 8192, 65536}) shapes.push_back({kElements / l, l});
    shapes.push_back({64, std::size_t{1} << 20});
    for (Op op : {Op::sum, Op::max, Op::argmax}) {
      if (t != DType::f32 && op != Op::sum) continue;
      for (auto [b, l] : shapes) {
        const ch11::Shape r = matrix(ch11::Layout::rows, b, l), c = matrix(ch11::Layout::columns, b, l);
        register_case(op, t, r, {}, false, rows);
        if (op != Op::argmax) register_case(op, t, r, {}, false, cub);
        if (t == DType::f32 && op == Op::sum)
          for (const Kernel& v : row_variants) {
            // Each strategy where it can finish in reasonable time: a thread walking a row of
            // 65,536 elements alone, or 2^23 blocks of 8 elements each, are measured where
            // they are the wrong choice but not absurd.
            if (v.strategy == Strategy::thread_per_row && l > 1024) continue;
            if (v.strategy == Strategy::blocks_per_row && l < 8192) continue;
            register_case(op, t, r, {}, false, v);
          }
        register_case(op, t, c, {}, false, columns);
        // The naive column mapping has only L threads: from 8192 columns on it is slow, below
        // that it is hopeless (8 threads walking 2^23 rows): measured from 8192 on.
        if (t == DType::f32 && op == Op::sum && l >= 8192) register_case(op, t, c, {}, false, columns_naive, 5);
      }
      for (std::size_t mean : {32, 1024})
        for (bool heavy : {false, true}) {
          std::vector<std::int64_t> o = ch11::make_offsets(
              kElements / mean, mean, heavy ? ch11::SegmentDist::heavy : ch11::SegmentDist::uniform, 0x5E6 + mean);
          ch11::Shape s;
          s.layout = ch11::Layout::segments;
          s.segments = o.size() - 1;
          s.n = static_cast<std::size_t>(o.back());
          register_case(op, t, s, o, heavy, segments);
          if (op != Op::argmax) register_case(op, t, s, o, heavy, cub);
          // The naive mapping: one group per segment, whatever its length. On the heavy tail one
          // group reads half of the input alone: few timed calls.
          if (t == DType::f32 && op == Op::sum) register_case(op, t, s, o, heavy, segments_naive, heavy ? 3 : 0);
        }
    }
  }
}

}  // namespace red::bench::suite
