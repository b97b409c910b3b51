#include <algorithm>
#include <cstdint>
#include <vector>

#include "device_buffer.hpp"
#include "solutions/06_warp_shuffle.cuh"
#include "test_support.hpp"

using namespace red;

namespace {
constexpr std::size_t kTile = ch06::tile_of<ch06::kBlock>();

// Each thread writes what the butterfly left in it: after the warp's, then after the block's
// (warp 0 only), then after two more block reductions through the same shared buffer.
template <unsigned Block>
__global__ void butterflies(const float* values, float* warp_sums, float* block_sums, float* block_max,
                            float* block_min) {
  __shared__ float per_warp[Block / ch06::kWarp];
  const std::size_t at = std::size_t{blockIdx.x} * Block + threadIdx.x;
  const float mine = values[3 * std::size_t{blockIdx.x} * Block + threadIdx.x];
  warp_sums[at] = sol06::butterfly<Sum<float>>(mine);
  const float s = sol06::block_reduce_butterfly<Sum<float>, Block>(mine, per_warp);
  const float m =
      sol06::block_reduce_butterfly<Max<float>, Block>(values[(3 * blockIdx.x + 1) * Block + threadIdx.x], per_warp);
  const float l =
      sol06::block_reduce_butterfly<Min<float>, Block>(values[(3 * blockIdx.x + 2) * Block + threadIdx.x], per_warp);
  if (threadIdx.x < ch06::kWarp) {
    block_sums[blockIdx.x * ch06::kWarp + threadIdx.x] = s;
    block_max[blockIdx.x * ch06::kWarp + threadIdx.x] = m;
    block_min[blockIdx.x * ch06::kWarp + threadIdx.x] = l;
  }
}

template <unsigned Block>
void check_butterflies() {
  INFO("block size ", Block);
  constexpr unsigned kWarp = ch06::kWarp;
  const unsigned blocks = 300;
  const HostArray host = generate(DType::f32, std::size_t{blocks} * 3 * Block, Dist::ints, test::fresh_seed());
  const auto* v = static_cast<const float*>(host.data());
  DeviceBuffer values(host.size_bytes()), warp_sums(std::size_t{blocks} * Block * sizeof(float));
  DeviceBuffer sums(blocks * kWarp * sizeof(float)), maxima(blocks * kWarp * sizeof(float)),
      minima(blocks * kWarp * sizeof(float));
  values.upload(host.data(), host.size_bytes());
  butterflies<Block><<<blocks, Block>>>(static_cast<const float*>(values.get()), static_cast<float*>(warp_sums.get()),
                                        static_cast<float*>(sums.get()), static_cast<float*>(maxima.get()),
                                        static_cast<float*>(minima.get()));
  CUDA_CHECK_LAUNCH();
  std::vector<float> w(std::size_t{blocks} * Block), s(blocks * kWarp), mx(blocks * kWarp), mn(blocks * kWarp);
  warp_sums.download(w.data(), w.size() * sizeof(float));
  sums.download(s.data(), s.size() * sizeof(float));
  maxima.download(mx.data(), mx.size() * sizeof(float));
  minima.download(mn.data(), mn.size() * sizeof(float));
  int wrong_warps = 0, wrong_blocks = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    const float* sum_in = v + std::size_t{b} * 3 * Block;
    const test::SumMaxMin want = test::sum_max_min(sum_in, Block);
    for (unsigned warp = 0; warp < Block / kWarp; ++warp) {
      float warp_sum = 0;
      for (unsigned lane = 0; lane < kWarp; ++lane) warp_sum += sum_in[warp * kWarp + lane];
      // Every lane of every warp holds its warp's sum, not lane 0 alone.
      for (unsigned lane = 0; lane < kWarp; ++lane)
        wrong_warps += w[std::size_t{b} * Block + warp * kWarp + lane] != warp_sum;
    }
    // Every lane of warp 0 holds the block's values.
    for (unsigned lane = 0; lane < kWarp; ++lane) {
      const std::size_t at = std::size_t{b} * kWarp + lane;
      wrong_blocks += s[at] != want.sum || mx[at] != want.max || mn[at] != want.min;
    }
  }
  CHECK(wrong_warps == 0);
  CHECK(wrong_blocks == 0);
}

// The blocks of the counting kernel that took the lock in one call, read from scratch.
struct LockCount {
  std::uint64_t taken = 0;
  std::size_t blocks = 0;
};
LockCount count_locks(const HostArray& host) {
  const Chapter& ch = sol06::counting_locks();
  DeviceInput in = upload(host);
  Workspace ws(ch, Op::argmax, DType::f32, host.n);
  run_once(ch, make_call(Op::argmax, DType::f32, in.data, host.n, ws, nullptr), ws);
  LockCount c;
  ws.scratch.download(&c.taken, sizeof c.taken, sol06::lock_counter_offset<ArgMax<float>>());
  c.blocks = red::ceil_div(host.n, kTile);
  return c;
}
}  // namespace

// ---- the butterfly -------------------------------------------------------------------------

TEST_CASE("solution_06 butterfly: every lane ends with its warp's value, warp 0 with the block's") {
  check_butterflies<32>();
  check_butterflies<64>();
  check_butterflies<256>();
  check_butterflies<1024>();
}

TEST_CASE("solution_06 butterfly: shared size matrix, every op and dtype") {
  test::check_support_matrix(sol06::butterfly(), {kTile});
}

TEST_CASE("solution_06 butterfly: NaN, infinities and the empty input") {
  test::check_special_values(sol06::butterfly());
}

TEST_CASE("solution_06 butterfly: repeated calls into one output and scratch leave nothing stale") {
  for (Op op : {Op::sum, Op::max, Op::min, Op::argmax})
    for (DType t : {DType::f32, DType::bf16, DType::i64})
      test::check_repeated_calls(sol06::butterfly(), op, t, 300'001);
}

TEST_CASE("solution_06 butterfly: misaligned starts") { test::check_misaligned_starts(sol06::butterfly()); }

TEST_CASE("solution_06 butterfly: adversarial inputs") { test::check_adversarial(sol06::butterfly()); }

TEST_CASE("solution_06 butterfly: 10,000 reductions of random n over 4 streams") {
  for (Op op : {Op::sum, Op::max}) test::check_stress(sol06::butterfly(), op);
}

TEST_CASE("solution_06 butterfly: more than 2^31 elements" * doctest::test_suite("large")) {
  test::check_above_2_31(sol06::butterfly());
}

// ---- counting the blocks that take 04's lock -----------------------------------------------

TEST_CASE("solution_06 lock count: the counting kernel still gives argmax's answers") {
  const Chapter& ch = sol06::counting_locks();
  test::check_sizes(ch, Op::argmax, DType::f32, test::shared_sizes({kTile}), Dist::normal);
  test::check_sizes(ch, Op::argmax, DType::f32, {4097, 1'000'003}, Dist::constant);
  test::check_special_values(ch);
}

TEST_CASE("solution_06 lock count: ties always take the lock, random data takes it at least once") {
  // All equal: no block can tell from the held value alone that it loses (a smaller index wins
  // a tie), so every block takes the lock.
  for (std::size_t n : {std::size_t{1}, kTile, kTile + 1, std::size_t{1'000'003}}) {
    INFO("n = ", n);
    const LockCount c = count_locks(filled(DType::f32, n, 1.0));
    CHECK(c.taken == c.blocks);
  }
  // Random data: the first block always takes it; the blocks that leave early never do.
  for (std::size_t n : {std::size_t{1} << 16, std::size_t{1'000'003}, std::size_t{1} << 22}) {
    INFO("n = ", n);
    const LockCount c = count_locks(generate(DType::f32, n, Dist::uniform, test::fresh_seed()));
    CHECK(c.taken >= 1);
    CHECK(c.taken <= c.blocks);
    MESSAGE("n = ", n, ": ", c.taken, " of ", c.blocks, " blocks took the lock");
  }
  // The empty input runs no block: the counter stays 0.
  CHECK(count_locks(HostArray(DType::f32, 0)).taken == 0);
}
