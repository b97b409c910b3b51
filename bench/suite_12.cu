// Chapter 12's segments: 2^26 elements in segments of mean length 32 and 1024, uniform and heavy-
// tailed, each with the tuned balanced kernel (reduce_segments), the lesson's teaching balanced
// kernel (reduce_segments_teaching), the naive mapping (f32 sums), and cub::DeviceSegmentedReduce
// on the same input in the same run. Every call is checked against the float64 reference before
// it is timed.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "11_batched/baselines.cuh"
#include "12_segmented/host_reference.hpp"
#include "device_buffer.hpp"
#include "runner.hpp"
#include "suite.hpp"

namespace red::bench::suite {

namespace {

constexpr int kSegmentsLayout = 3;  // tools/schema.py's LAYOUTS: flat, rows, columns, segments

struct Kernel {
  std::string name;  // benchmark kernel name
  std::string variant_of;
  ch12::Strategy strategy;  // automatic for the balanced mapping; forced for the naive one
  ch12::Kernels kernels = ch12::Kernels::tuned;
  bool cub = false;
};

struct Resources {
  std::shared_ptr<BatchedInput> data;
  std::unique_ptr<ch12::Prepared> prepared;
};

void register_case(Op op, DType t, std::vector<std::int64_t> offsets, bool heavy, const Kernel& k, int repetitions = 0) {
  const std::size_t n = static_cast<std::size_t>(offsets.back()), segments = offsets.size() - 1;
  const std::size_t length = segments ? n / segments : 0;
  const std::string label = "12_segmented/" + k.name + "/" + std::string(name(op)) + "/" + std::string(name(t)) + "/" +
                            std::to_string(n) + "/segments_" + std::to_string(segments) + "x" + std::to_string(length) +
                            (heavy ? "_heavy" : "_uniform");
  const auto shared_offsets = std::make_shared<std::vector<std::int64_t>>(std::move(offsets));
  register_timed(label, static_cast<double>(n * size_of(t)), [=](cudaStream_t stream) {
    auto r = std::make_shared<Resources>();
    r->data = batched_input(t, std::max(n, std::size_t{1}));
    r->prepared = ch12::prepare(op, t, r->data->device.data, n, *shared_offsets, k.strategy, k.kernels, stream,
                                k.cub ? std::optional<std::size_t>(0) : std::nullopt);
    ch12::SegmentedCall& call = r->prepared->call;
    const auto cub_call = [t](const ch12::SegmentedCall& c, void* temp, std::size_t& bytes) {
      dispatch(Ops<Sum>{}, Types<float, __half, __nv_bfloat16>{}, Op::sum, t, [&](auto tag) {
        CUDA_CHECK(ch11::cub_segmented<typename decltype(tag)::type::In>(
            temp, bytes, c.op, c.input, c.offsets, c.offsets + 1, static_cast<long long>(c.segments), c.output, c.stream));
      });
    };
    if (k.cub) {  // CUB's own size query, once, and its scratch
      std::size_t bytes = 0;
      cub_call(call, nullptr, bytes);
      r->prepared->scratch = DeviceBuffer(bytes);
      call.scratch = r->prepared->scratch.get();
      call.scratch_bytes = bytes;
    }
    const ch12::SegmentedCall c = call;
    ch12::Plan plan = r->prepared->plan;
    // CUB's order is its own: the loosest bound, the naive mapping's with one lane (a serial chain).
    if (k.cub) plan.strategy = ch12::Strategy::naive, plan.lanes = 1;
    TimedCase tc;
    tc.call = [c, k, cub_call] {
      if (!k.cub) return ch12::run(c);
      std::size_t bytes = c.scratch_bytes;
      cub_call(c, c.scratch, bytes);
    };
    tc.call();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<std::byte> got = r->prepared->results();
    if (!(k.cub && op == Op::max)) {  // CUB's max has its own NaN rule (11_batched/baselines.cuh)
      const ch11::BatchCheck check = ch12::check_all(r->data->host, c, *shared_offsets, plan, got);
      if (check.failed) tc.wrong = check.first_failure;
    }
    tc.elements = static_cast<double>(n);
    tc.bytes = static_cast<double>(ch12::counted_bytes(n, segments, size_of(t)));
    tc.repetitions = repetitions;
    tc.variant_of = k.variant_of;
    tc.counters["layout_id"] = kSegmentsLayout;
    tc.counters["segments"] = static_cast<double>(segments);
    tc.counters["length"] = static_cast<double>(length);
    tc.counters["param_heavy"] = heavy ? 1 : 0;
    tc.keep = r;
    return tc;
  });
}

}  // namespace

void register_segmented() {
  using ch12::Strategy;
  const Kernel balanced{"reduce_segments", "", Strategy::automatic};
  const Kernel cub{"cub_segmented_reduce", "", Strategy::automatic, ch12::Kernels::tuned, true};
  const Kernel naive{"reduce_segments_naive", "reduce_segments", Strategy::naive};
  // The lesson's teaching kernel beside the tuned one: how far the simplest code of the idea trails.
  const Kernel teaching{"reduce_segments_teaching", "reduce_segments", Strategy::automatic, ch12::Kernels::teaching};
  for (DType t : {DType::f32, DType::f16})
    for (Op op : {Op::sum, Op::max, Op::argmax}) {
      if (t != DType::f32 && op != Op::sum) continue;
      for (std::size_t mean : {32, 1024})
        for (bool heavy : {false, true}) {
          const auto dist = heavy ? ch12::SegmentDist::heavy : ch12::SegmentDist::uniform;
          const std::vector<std::int64_t> o = ch12::make_offsets(batched_elements(t) / mean, mean, dist, 0x5E6 + mean);
          register_case(op, t, o, heavy, balanced);
          register_case(op, t, o, heavy, teaching);
          if (op != Op::argmax) register_case(op, t, o, heavy, cub);
          // The naive mapping: one group per segment, whatever its length. On the heavy tail one
          // group reads half of the input alone: few timed calls.
          if (t == DType::f32 && op == Op::sum) register_case(op, t, o, heavy, naive, heavy ? 3 : 0);
        }
    }
}

}  // namespace red::bench::suite
