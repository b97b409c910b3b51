// Chapter 11's shapes: B x L = 2^26 elements as rows and as columns, each with the automatic choice
// of mapping run by the tuned kernels (reduce_rows, reduce_columns) and by the lesson's teaching
// kernels (reduce_rows_teaching, reduce_columns_teaching: variants of the tuned rows, at the same
// shapes, ops and dtypes), the strategies the plan chooses between, and cub::DeviceSegmentedReduce
// on the same input in the same run. Every call is checked against the float64 reference before
// it is timed.
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

struct Kernel {
  std::string name;  // benchmark kernel name
  std::string variant_of;
  ch11::Strategy strategy;  // automatic, or forced for a variant
  bool cub = false;
  ch11::Kernels kernels = ch11::Kernels::tuned;
};

struct Resources {
  std::shared_ptr<BatchedInput> data;
  std::unique_ptr<ch11::Prepared> prepared;
};

int layout_id(ch11::Layout l) { return l == ch11::Layout::rows ? 1 : 2; }  // tools/schema.py's LAYOUTS
int strategy_id(ch11::Strategy s) {
  switch (s) {
    case ch11::Strategy::thread_per_row: return 1;
    case ch11::Strategy::group_per_row: return 2;
    case ch11::Strategy::block_per_row: return 3;
    case ch11::Strategy::blocks_per_row: return 4;
    default: return 0;
  }
}

void register_case(Op op, DType t, ch11::Shape shape, const Kernel& k, int repetitions = 0) {
  const std::size_t n = ch11::elements_read(shape);
  // A row's shape is "rows x cols"; a column's the same matrix's (the bench.csv columns segments
  // and length are the rows and the row length for both).
  const std::string label = "11_batched/" + k.name + "/" + std::string(name(op)) + "/" + std::string(name(t)) + "/" +
                            std::to_string(n) + "/" + ch11::name(shape.layout) + "_" + std::to_string(shape.rows) + "x" +
                            std::to_string(shape.cols);
  register_timed(label, static_cast<double>(n * size_of(t)), [=](cudaStream_t stream) {
    auto r = std::make_shared<Resources>();
    r->data = batched_input(t, std::max(ch11::input_elements(shape), std::size_t{1}));
    const auto cub_call = [t](const ch11::BatchedCall& c, void* temp, std::size_t& bytes) {
      dispatch(Ops<Sum>{}, Types<float, __half, __nv_bfloat16>{}, Op::sum, t, [&](auto tag) {
        CUDA_CHECK(ch11::cub_segmented<typename decltype(tag)::type::In>(temp, bytes, c));
      });
    };
    r->prepared = ch11::prepare(op, t, r->data->device.data, shape, k.strategy, k.kernels, stream,
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
      const ch11::BatchCheck check = ch11::check_all(r->data->host, shape, op, plan, got);
      if (check.failed) tc.wrong = check.first_failure;
    }
    tc.elements = static_cast<double>(n);
    tc.bytes = static_cast<double>(ch11::counted_bytes(shape, size_of(t)));
    tc.repetitions = repetitions;
    tc.variant_of = k.variant_of;
    tc.counters["layout_id"] = layout_id(shape.layout);
    tc.counters["segments"] = static_cast<double>(shape.rows);
    tc.counters["length"] = static_cast<double>(shape.cols);
    if (!k.cub && shape.layout == ch11::Layout::rows) tc.counters["param_strategy_id"] = strategy_id(plan.strategy);
    if (k.kernels == ch11::Kernels::teaching) tc.counters["param_teaching"] = 1;
    tc.keep = r;
    return tc;
  });
}

}  // namespace

std::shared_ptr<BatchedInput> batched_input(DType t, std::size_t n) {
  static std::shared_ptr<BatchedInput> last;
  if (!last || last->host.dtype != t || last->host.n != n) {
    last.reset();  // the previous input's device memory first
    HostArray host = generate(t, n, Dist::normal, 0xBA7C + n);
    DeviceInput device = upload(host);
    last = std::make_shared<BatchedInput>(BatchedInput{std::move(host), std::move(device)});
  }
  return last;
}

void register_batched() {
  using ch11::Strategy;
  const Kernel rows{"reduce_rows", "", Strategy::automatic}, columns{"reduce_columns", "", Strategy::automatic},
      cub{"cub_segmented_reduce", "", Strategy::automatic, true};
  const Kernel rows_teaching{"reduce_rows_teaching", "reduce_rows", Strategy::automatic, false, ch11::Kernels::teaching},
      columns_teaching{"reduce_columns_teaching", "reduce_columns", Strategy::automatic, false, ch11::Kernels::teaching};
  const Kernel row_variants[] = {{"reduce_rows_thread_per_row", "reduce_rows", Strategy::thread_per_row},
                                 {"reduce_rows_group_per_row", "reduce_rows", Strategy::group_per_row},
                                 {"reduce_rows_block_per_row", "reduce_rows", Strategy::block_per_row},
                                 {"reduce_rows_blocks_per_row", "reduce_rows", Strategy::blocks_per_row}};
  const Kernel columns_naive{"reduce_columns_naive", "reduce_columns", Strategy::columns_naive};

  for (DType t : {DType::f32, DType::f16}) {
    std::vector<std::pair<std::size_t, std::size_t>> shapes;  // (B, L)
    for (std::size_t l : {8, 32, 128, 1024, 8192, 65536}) shapes.push_back({batched_elements(t) / l, l});
    shapes.push_back({batched_elements(t) >> 20, std::size_t{1} << 20});  // 64 rows of f32
    for (Op op : {Op::sum, Op::max, Op::argmax}) {
      if (t != DType::f32 && op != Op::sum) continue;
      for (auto [b, l] : shapes) {
        const ch11::Shape r = ch11::matrix_shape(ch11::Layout::rows, b, l), c = ch11::matrix_shape(ch11::Layout::columns, b, l);
        register_case(op, t, r, rows);
        register_case(op, t, r, rows_teaching);
        if (op != Op::argmax) register_case(op, t, r, cub);
        if (t == DType::f32 && op == Op::sum)
          for (const Kernel& v : row_variants) {
            // Each strategy where it can finish in reasonable time: a thread walking a row of
            // 65,536 elements alone, or 2^23 blocks of 8 elements each, are measured where
            // they are the wrong choice but not absurd.
            if (v.strategy == Strategy::thread_per_row && l > 1024) continue;
            if (v.strategy == Strategy::blocks_per_row && l < 8192) continue;
            register_case(op, t, r, v);
          }
        register_case(op, t, c, columns);
        register_case(op, t, c, columns_teaching);
        // The naive column mapping has only L threads: from 8192 columns on it is slow, below
        // that it is hopeless (8 threads walking 2^23 rows): measured from 8192 on.
        if (t == DType::f32 && op == Op::sum && l >= 8192) register_case(op, t, c, columns_naive, 5);
      }
    }
  }
}

}  // namespace red::bench::suite
