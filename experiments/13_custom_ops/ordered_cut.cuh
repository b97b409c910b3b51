// The ordered kernel of chapter 13 (13_custom_ops/ordered.cuh) with the cut of a warp's stretch
// given as a policy, so that 13_custom_ops_ordered_tuning can change each choice alone: the
// experiment's own copy, line for line the lesson's kernel and launcher with the lesson's constants
// read from `Policy` (kLanesPerRegion, kRounds, kRuns, and kMinBlocks, the register cap that
// __launch_bounds__ asks for), and its loads (a policy of 07's). Cut<2, 1, 2, 1> is the lesson's.
#pragma once

#include "13_custom_ops/ordered.cuh"

namespace ordered_cut {

using ch13::Call;
using ch13::fold_warps_in_order;
using ch13::kBlock;
using ch13::kWarp;
using ch13::kWarps;
using ch13::ordered_warp_fold;
using ch13::OrderedScratch;

// The lesson's cut with its choices given, over chapter 07's loads.
template <unsigned kLanes, unsigned kRoundsV, unsigned kRunsV, unsigned kMinBlocksV>
struct Cut : ch07::Tuning {
  static constexpr unsigned kLanesPerRegion = kLanes;
  static constexpr unsigned kRounds = kRoundsV;
  static constexpr unsigned kRuns = kRunsV;
  static constexpr unsigned kMinBlocks = kMinBlocksV;
};

// The lanes of a region, for K vectors a lane a step: the policy's, but enough that a region's
// step fills a quarter-warp's load of 8 vectors (bytes, 2 vectors a lane, take regions of 4).
template <class Policy>
constexpr unsigned lanes_per_region(unsigned K) {
  return Policy::kLanesPerRegion * K >= 8 ? Policy::kLanesPerRegion : 8 / K;
}

// Every warp takes a contiguous stretch of whole steps (warp w of W: steps [T w / W, T (w + 1) / W)
// of the T whole steps; a step is 32 K vectors, K = kRounds x kVecs) and cuts it into 32 / G
// regions, one per group of G lanes. Each step a group takes the next G K vectors of its region,
// lane i of the group the i-th K of them: a lane's piece is contiguous, the group's pieces follow
// each other, and so do a region's steps. A lane folds its piece left to right (kRuns runs side by
// side, then in order), the group folds its lanes in order (log2 G shuffle steps) and its first
// lane appends that to the region's run; after the last step the warp folds the regions' runs in
// order. The loads stay coalesced: load u takes the vectors u 32 .. u 32 + 31 of the step's order
// (group 0's G K vectors, then group 1's, ...), so each quarter-warp reads one whole 128-byte line
// of one region, and the warp's shared memory hands every vector to its lane (loading a lane's
// piece directly, a warp's load would touch 32 lines, and the L1 becomes the limit). The next
// step's loads are in flight while a lane folds. The vectors after the last whole step form one
// more step of a single region (the lanes' pieces one after another) in the last warp, and the
// elements after the last whole vector come after it. Blocks fold their warps in order; the last
// block (chapter 10's acq_rel ticket) folds the blocks' partials in order, a contiguous share a thread.
template <class Op, class Policy, class Source>
__global__ void __launch_bounds__(kBlock, Policy::kMinBlocks)
    reduce_ordered(Source src, std::size_t n, typename Op::Acc* partials, unsigned* tickets, void* result) {
  using Acc = typename Op::Acc;
  using Loaded = typename Source::Loaded;
  constexpr unsigned kVecs = ch07::unroll_of<Policy, Source>(), kCount = Source::kCount;
  constexpr unsigned K = Policy::kRounds * kVecs, G = lanes_per_region<Policy>(K);
  constexpr unsigned kRuns = K < Policy::kRuns ? K : Policy::kRuns;
  static_assert((G * K) % 8 == 0, "a quarter-warp's load stays in one group's vectors");
  static_assert(K % kRuns == 0, "the runs split a lane's vectors evenly");
  static_assert(sizeof(Loaded) == sizeof(uint4), "a loaded vector is 16 bytes");
  constexpr std::size_t kStep = std::size_t{kWarp} * K;
  __shared__ Acc per_warp[kWarps];
  __shared__ bool last;
  // A step of each warp (ordered_shared_bytes), as 16-byte words (one STS.128 or LDS.128 a
  // vector; a struct of four floats would be stored a float at a time, four times the
  // shared-memory wavefronts): vector k of lane L's piece sits at L K + (k ^ (L % K)), so that
  // neither the stores nor the loads of a quarter-warp share a bank.
  extern __shared__ uint4 staged[];
  const unsigned lane = threadIdx.x % kWarp;
  uint4* const stage = staged + std::size_t{threadIdx.x / kWarp} * kStep;
  const std::size_t vectors = n / kCount, steps = vectors / kStep;
  const std::size_t warps = std::size_t{gridDim.x} * kWarps, w = std::size_t{blockIdx.x} * kWarps + threadIdx.x / kWarp;
  const std::size_t s0 = steps * w / warps, s1 = steps * (w + 1) / warps;
  const std::size_t first = s0 * kStep, region = (s1 - s0) * G * K;  // the warp's first vector; a region's vectors
  // Position p of step s's order: vector p % (G K) of group p / (G K)'s G K, lane p / K's (p % K)-th.
  const auto vector_at = [&](std::size_t s, unsigned p) { return first + p / (G * K) * region + s * (G * K) + p % (G * K); };
  Loaded x[K];
  const auto stage_loads = [&] {
    __syncwarp();  // the last step's reads of the stage are done
#pragma unroll
    for (unsigned u = 0; u < K; ++u) {
      const unsigned p = u * kWarp + lane, L = p / K;
      memcpy(&stage[L * K + ((p % K) ^ (L % K))], &x[u], sizeof(uint4));
    }
    __syncwarp();
  };
  // The lane's piece, vectors v0 .. v0 + K - 1 (those below `end` if guarded).
  const auto fold_piece = [&](std::size_t v0, auto guarded, std::size_t end) {
    Acc runs[kRuns];
#pragma unroll
    for (unsigned r = 0; r < kRuns; ++r) runs[r] = Op::identity();
#pragma unroll
    for (unsigned k = 0; k < K; ++k) {
      const uint4 word = stage[lane * K + (k ^ (lane % K))];
      Loaded y;
      memcpy(&y, &word, sizeof(uint4));
      if (!guarded || v0 + k < end)
#pragma unroll
        for (unsigned j = 0; j < kCount; ++j) {
          Acc& run_k = runs[k / (K / kRuns)];
          run_k = Op::append(run_k, src.value(y, j), (v0 + k) * kCount + j);
        }
    }
    Acc piece = runs[0];
#pragma unroll
    for (unsigned r = 1; r < kRuns; ++r) piece = Op::combine(piece, runs[r]);
    return piece;
  };
  Acc run = Op::identity();  // the group's first lane: its region's steps so far
  const std::size_t S = s1 - s0;
  if (S > 0)
#pragma unroll
    for (unsigned u = 0; u < K; ++u) x[u] = src.load(vector_at(0, u * kWarp + lane));
  for (std::size_t s = 0; s < S; ++s) {
    stage_loads();
    if (s + 1 < S)
#pragma unroll
      for (unsigned u = 0; u < K; ++u) x[u] = src.load(vector_at(s + 1, u * kWarp + lane));
    const Acc piece = ordered_warp_fold<Op, G>(fold_piece(vector_at(s, lane * K), std::false_type{}, 0));
    if (lane % G == 0) run = Op::combine(run, piece);
  }
  run = ordered_warp_fold<Op>(lane % G == 0 ? run : Op::identity());  // lane 0: the regions in order
  if (w == warps - 1) {
    const std::size_t rest = steps * kStep;  // the vectors after the last whole step
    if (rest < vectors) {
#pragma unroll
      for (unsigned u = 0; u < K; ++u)
        if (rest + u * kWarp + lane < vectors) x[u] = src.load(rest + u * kWarp + lane);
      stage_loads();
      const Acc piece = ordered_warp_fold<Op>(fold_piece(rest + std::size_t{lane} * K, std::true_type{}, vectors));
      if (lane == 0) run = Op::combine(run, piece);
    }
    if (lane == 0)  // the elements after the last whole vector
      for (std::size_t i = vectors * kCount; i < n; ++i) run = Op::append(run, src.element(i), i);
  }
  Acc block = fold_warps_in_order<Op>(run, per_warp);  // thread 0
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) Op::store(result, block);
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block;
    last = ch10::take_ticket(tickets) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  // The last block: thread i folds partials [P i / kBlock, P (i + 1) / kBlock), then the block in order.
  const std::size_t p = gridDim.x, p0 = p * threadIdx.x / kBlock, p1 = p * (threadIdx.x + 1) / kBlock;
  Acc share = Op::identity();
  for (std::size_t i = p0; i < p1; ++i) share = Op::combine(share, partials[i]);
  block = fold_warps_in_order<Op>(ordered_warp_fold<Op>(share), per_warp);
  if (threadIdx.x == 0) {
    Op::store(result, block);
    ch10::Counter(*tickets).store(0, cuda::memory_order_relaxed);  // every block has drawn its ticket
  }
}

template <class Op, class Policy>
using OrderedSource = ch07::Array<typename Op::In, typename Policy::Load>;

// The vectors a warp takes a step, and the shared memory of a block's steps (32 KB for the
// lesson's 8 warps x 32 lanes x 8 vectors; dynamic, so that a policy of 2 load rounds may have
// 64 KB, above the 48 KB a kernel may declare statically).
template <class Op, class Policy>
constexpr std::size_t ordered_step_vectors() {
  return std::size_t{kWarp} * Policy::kRounds * ch07::unroll_of<Policy, OrderedSource<Op, Policy>>();
}
template <class Op, class Policy>
constexpr std::size_t ordered_shared_bytes() {
  return std::size_t{kWarps} * ordered_step_vectors<Op, Policy>() * sizeof(uint4);
}

// Blocks the ordered kernel can hold at once, with its shared memory (asked once per device,
// which also lets the kernel have that much).
template <class Op, class Policy>
unsigned ordered_max_blocks() {
  return red::per_device<unsigned>([](int device) {
    const auto kernel = reduce_ordered<Op, Policy, OrderedSource<Op, Policy>>;
    const int bytes = static_cast<int>(ordered_shared_bytes<Op, Policy>());
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    int sms = 0, per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, static_cast<std::size_t>(bytes)));
    return static_cast<unsigned>(sms) * std::max(1u, static_cast<unsigned>(per_sm));
  });
}

// Blocks for n elements: a step a warp at least, at most what the GPU holds at once.
template <class Op, class Policy>
unsigned ordered_blocks(std::size_t n) {
  const std::size_t step = ordered_step_vectors<Op, Policy>() * OrderedSource<Op, Policy>::kCount;
  return static_cast<unsigned>(std::clamp<std::size_t>(red::ceil_div(n, step * kWarps), 1, ordered_max_blocks<Op, Policy>()));
}

template <class Op, class Policy>
std::size_t ordered_scratch_bytes(std::size_t) {
  return OrderedScratch<Op>(nullptr, ordered_max_blocks<Op, Policy>()).bytes;
}
template <class Op, class Policy>
std::size_t ordered_zeroed_scratch_bytes() {
  return OrderedScratch<Op>(nullptr, ordered_max_blocks<Op, Policy>()).zeroed_bytes;
}

// The order-keeping launcher: any associative operator.
template <class Op, class Policy>
void launch_ordered(const Call& c) {
  red::check_scratch("13_custom_ops", c.scratch, c.scratch_bytes, ordered_scratch_bytes<Op, Policy>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  using Source = OrderedSource<Op, Policy>;
  const Source src{static_cast<const typename Op::In*>(c.input), c.n};
  if (!src.element_aligned()) throw std::invalid_argument("13_custom_ops: input not aligned to its element type");
  const OrderedScratch<Op> s(c.scratch, ordered_max_blocks<Op, Policy>());
  reduce_ordered<Op, Policy, Source><<<ordered_blocks<Op, Policy>(c.n), kBlock, ordered_shared_bytes<Op, Policy>(), c.stream>>>(
      src, c.n, s.partials, s.tickets, c.output);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ordered_cut
