#include <algorithm>
#include <vector>

#include "chapter.cuh"
#include "device_buffer.hpp"
#include "test_support.hpp"

using namespace red;

namespace {
constexpr std::size_t kTile = ch06::tile_of<ch06::kBlock>();
}

TEST_CASE("06_warp_shuffle: shared size matrix, every op and dtype") {
  test::check_support_matrix(ch06::chapter(), {kTile});
}

TEST_CASE("06_warp_shuffle: block sizes that are not multiples of 32 (partial last warp)") {
  auto check_block = [](const Chapter& ch, std::size_t tile) {
    INFO(ch.kernel_name(Op::sum, DType::f32));
    const std::vector<std::size_t> sizes = {1, 31, 33, tile - 1, tile, tile + 1, 5 * tile + 3, 1'000'003};
    test::check_sizes(ch, Op::sum, DType::f32, sizes, Dist::ints);
    test::check_sizes(ch, Op::argmax, DType::f32, sizes, Dist::normal);
    test::check_sizes(ch, Op::max, DType::i32, sizes, Dist::normal);
    test::check_sizes(ch, Op::sum, DType::f16, sizes, Dist::normal);
  };
  check_block(ch06::chapter_with_block<33>(), ch06::tile_of<33>());
  check_block(ch06::chapter_with_block<100>(), ch06::tile_of<100>());
  check_block(ch06::chapter_with_block<250>(), ch06::tile_of<250>());
  check_block(ch06::chapter_with_block<1000>(), ch06::tile_of<1000>());
}

namespace {
// Three block reductions in a row through one shared buffer, each over different values. Without
// block_reduce's first barrier, a fast warp's second write could land before warp 0 has read the
// first call's values (racecheck reports it; the results may go wrong).
__global__ void three_in_a_row(const float* values, float* out) {
  __shared__ float per_warp[ch06::kWarp];
  const float* mine = values + std::size_t{blockIdx.x} * 3 * blockDim.x;
  const float s = ch06::block_reduce<Sum<float>>(mine[threadIdx.x], per_warp);
  const float m = ch06::block_reduce<Max<float>>(mine[blockDim.x + threadIdx.x], per_warp);
  const float l = ch06::block_reduce<Min<float>>(mine[2 * blockDim.x + threadIdx.x], per_warp);
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = s;
    out[3 * blockIdx.x + 1] = m;
    out[3 * blockIdx.x + 2] = l;
  }
}
}  // namespace

TEST_CASE("06_warp_shuffle: block_reduce called back-to-back in one kernel") {
  for (unsigned block : {33u, 64u, 250u, 256u, 1000u, 1024u}) {
    INFO("block size ", block);
    const unsigned blocks = 500;
    const std::size_t count = std::size_t{blocks} * 3 * block;
    HostArray host = generate(DType::f32, count, Dist::ints, test::fresh_seed());
    const auto* v = static_cast<const float*>(host.data());
    DeviceBuffer values(host.size_bytes()), out(std::size_t{blocks} * 3 * sizeof(float));
    values.upload(host.data(), host.size_bytes());
    three_in_a_row<<<blocks, block>>>(static_cast<const float*>(values.get()), static_cast<float*>(out.get()));
    CUDA_CHECK_LAUNCH();
    std::vector<float> got(std::size_t{blocks} * 3);
    out.download(got.data(), got.size() * sizeof(float));
    int wrong = 0;
    for (unsigned b = 0; b < blocks; ++b) {
      const test::SumMaxMin want = test::sum_max_min(v + std::size_t{b} * 3 * block, block);
      wrong += got[3 * b] != want.sum || got[3 * b + 1] != want.max || got[3 * b + 2] != want.min;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("06_warp_shuffle: NaN, infinities and the empty input") { test::check_special_values(ch06::chapter()); }

TEST_CASE("06_warp_shuffle: repeated calls into one output and scratch leave nothing stale") {
  for (Op op : {Op::sum, Op::max, Op::min, Op::argmax})
    for (DType t : {DType::f32, DType::bf16, DType::i64}) test::check_repeated_calls(ch06::chapter(), op, t, 300'001);
}

TEST_CASE("06_warp_shuffle: misaligned starts") { test::check_misaligned_starts(ch06::chapter()); }

TEST_CASE("06_warp_shuffle: more than 2^31 elements" * doctest::test_suite("large")) {
  test::check_above_2_31(ch06::chapter());
}

TEST_CASE("06_warp_shuffle: adversarial inputs") { test::check_adversarial(ch06::chapter()); }

TEST_CASE("06_warp_shuffle: 10,000 reductions of random n over 4 streams") {
  for (Op op : {Op::sum, Op::max}) test::check_stress(ch06::chapter(), op);
}
