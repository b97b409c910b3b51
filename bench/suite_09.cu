#include <cub/device/device_reduce.cuh>

#include "09_cub_comparison/chapter.cuh"
#include "suite.hpp"

namespace red::bench::suite {

const Chapter& chapter_09() { return ch09::chapter(); }

const Chapter& chapter_09_builtin() { return ch09::builtin(); }

namespace {

// CUB's TransformReduce with the chapters' own Sum: each element turned into the accumulator the
// chapters add in (double for f64, int64 for the integers, with the same wrapping add), then
// added. The counterpart of every chapter's sum of a type that chapter 09 does not cover.
// 32-bit offsets where n allows, as chapter 09's calls take them (CUB's faster choice).
template <class Op>
cudaError_t transform_reduce(void* temp, std::size_t& bytes, const ReduceCall& c) {
  const auto* in = static_cast<const typename Op::In*>(c.input);
  auto* out = static_cast<typename Op::Acc*>(c.output);
  if (c.n <= static_cast<std::size_t>(cuda::std::numeric_limits<int>::max()))
    return cub::DeviceReduce::TransformReduce(temp, bytes, in, out, static_cast<int>(c.n), ch09::CombinePairs<Op>{},
                                              red::LoadElement<Op>{}, Op::identity(), c.stream);
  return cub::DeviceReduce::TransformReduce(temp, bytes, in, out, static_cast<std::int64_t>(c.n), ch09::CombinePairs<Op>{},
                                            red::LoadElement<Op>{}, Op::identity(), c.stream);
}

template <class Op>
std::size_t transform_reduce_scratch(std::size_t n) {
  return remembered_scratch_query<&transform_reduce<Op>>(n);
}

template <class Op>
void launch_transform_reduce(const ReduceCall& c) {
  if (c.n == 0) return launch_store_identity<Op>(c.output, c.stream);
  std::size_t bytes = c.scratch_bytes;
  CUDA_CHECK(transform_reduce<Op>(c.scratch, bytes, c));
}

}  // namespace

const Chapter& cub_sum_other_types() {
  static const Chapter ch = make_chapter<Ops<Sum>, Types<double, std::int32_t, long long, std::uint8_t>>(
      "09_cub_comparison", "cub::DeviceReduce::TransformReduce with the chapters' Sum (widened, then added)",
      [](auto op) {
        using Op = decltype(op);
        return Launcher{&transform_reduce_scratch<Op>, &launch_transform_reduce<Op>};
      },
      cub_sum_depth, [](Op, DType) { return std::string("cub_transform_reduce"); });
  return ch;
}

}  // namespace red::bench::suite
