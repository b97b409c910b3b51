// Chapter 13 - any associative operator: the fast kernel made generic, and the one that keeps order.
//
// Idea: chapter 10's single-pass kernel never looked inside its operator: it loads, combines and
// stores through the operator struct (ops.cuh), so any operator with an identity, a combine and a
// transform runs at the memory's speed through it unchanged, as CUB's Reduce and TransformReduce
// take any functor. Two things change with the operator:
//  - the order. Chapter 10 hands a thread vectors a grid apart (tile r x grid + block) and its last
//    block takes the partials i, i + 256, ...: it combines elements out of order, which is right
//    only for a commutative operator. reduce_ordered gives every warp one contiguous stretch of
//    the input, cut into 16 regions of 2 lanes, every lane a contiguous piece of its region each
//    step, and combines lanes, regions, warps, blocks and partials strictly left to right: it
//    needs only associativity. Cost: the same memory traffic, a trip through shared memory, and 3
//    combines a lane per 32 elements (its 2 runs, its region's pair, the region's run).
//  - the block's combine for a logical any / all, which is a vote: __syncthreads_or/and is one
//    instruction for the whole block. any_all uses it, and can stop early (a flag in memory that
//    every warp polls once a trip) once the answer is known.
// Cost: the input read once; one launch; per block one partial and one atomic (chapter 10).
// Scratch: a counter (and for any_all a stop flag) that the caller zeroes once, then one partial
// per block.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "07_two_pass/reduce.cuh"    // ch07::Array, accumulate_share's loads, unroll_of
#include "10_single_pass/reduce.cuh"  // ch10::launch (the commutative kernel), take_ticket
#include "13_custom_ops/ops.cuh"
#include "cuda_check.hpp"
#include "multipass.cuh"
#include "per_device.hpp"

namespace ch13 {

constexpr unsigned kBlock = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kWarps = kBlock / kWarp;

// One call: n elements of Op::In at `input` into the 16-byte result at `output`.
struct Call {
  const void* input = nullptr;
  std::size_t n = 0;
  void* output = nullptr;
  void* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
};

// ---- the reordering kernel: chapter 10's, for a commutative operator --------------------------

template <class Op>
red::ReduceCall as_reduce_call(const Call& c) {
  red::ReduceCall r;
  r.input = c.input;
  r.n = c.n;
  r.output = c.output;
  r.scratch = c.scratch;
  r.scratch_bytes = c.scratch_bytes;
  r.stream = c.stream;
  return r;
}

// Chapter 10's policy, but for the operators whose load is a dozen instructions or more (a log2,
// a renormalisation): 16 elements a trip, not 32, which leaves the registers for more warps.
struct SixteenElements : ch10::Tuning {
  static constexpr unsigned kMaxElements = 16;
};
template <class Op>
struct TuningFor {
  using type = ch10::Tuning;
};
template <class T>
struct TuningFor<LogProduct<T>> {
  using type = SixteenElements;
};
template <class T>
struct TuningFor<ScaledProduct<T>> {
  using type = SixteenElements;
};
template <class Op>
using TuningOf = typename TuningFor<Op>::type;

template <class Op, class Policy = TuningOf<Op>>
std::size_t scratch_bytes(std::size_t n) {
  return ch10::scratch_bytes<Op, Policy>(n);
}
template <class Op, class Policy = TuningOf<Op>>
std::size_t zeroed_scratch_bytes() {
  return ch10::zeroed_scratch_bytes<Op, Policy>();
}
// The lesson's launcher for a commutative operator: chapter 10's kernel, unchanged.
template <class Op, class Policy = TuningOf<Op>>
void launch(const Call& c) {
  if constexpr (!Op::kCommutative)
    throw std::invalid_argument("13_custom_ops: this operator is not commutative; the reordering kernel would "
                                "combine its elements out of order (use launch_ordered)");
  else
    ch10::launch<Op, Policy>(as_reduce_call<Op>(c));
}
// The same kernel whatever the operator says: the demonstration that a non-commutative operator
// comes out wrong from it (the tests and the program show it).
template <class Op, class Policy = TuningOf<Op>>
void launch_reordering_anyway(const Call& c) {
  ch10::launch<Op, Policy>(as_reduce_call<Op>(c));
}

// ---- the order-keeping kernel --------------------------------------------------------------------

// __shfl_down_sync of any trivially copyable accumulator, 4 bytes at a time.
template <class Acc>
__device__ Acc shuffle_down(const Acc& v, unsigned delta) {
  constexpr unsigned kWords = (sizeof(Acc) + 3) / 4;
  unsigned words[kWords] = {};
  memcpy(words, &v, sizeof(Acc));
#pragma unroll
  for (unsigned k = 0; k < kWords; ++k) words[k] = __shfl_down_sync(0xffffffffu, words[k], delta);
  Acc out;
  memcpy(&out, words, sizeof(Acc));
  return out;
}

// Lane g kLanes of each group of kLanes lanes gets v of its lanes combined in their order (lane 0
// the whole warp's, by default): at each step a lane appends what the lane d above it holds (which
// covers the next d lanes), and a lane with nobody d above it in its group keeps its own (the tree
// the lanes near the group's top would otherwise corrupt; the group's first lane never reads them).
template <class Op, unsigned kLanes = kWarp>
__device__ typename Op::Acc ordered_warp_fold(typename Op::Acc v) {
  static_assert(kLanes <= kWarp && kWarp % kLanes == 0 && (kLanes & (kLanes - 1)) == 0, "groups of 2^k lanes");
  const unsigned lane = threadIdx.x % kLanes;
#pragma unroll
  for (unsigned d = 1; d < kLanes; d *= 2) {
    const typename Op::Acc above = shuffle_down(v, d);
    if (lane + d < kLanes) v = Op::combine(v, above);
  }
  return v;
}

// Thread 0 gets the warps' values (each warp's lane 0's) combined in warp order.
template <class Op>
__device__ typename Op::Acc fold_warps_in_order(typename Op::Acc v, typename Op::Acc* per_warp) {
  __syncthreads();  // per_warp may still be read by a previous fold
  if (threadIdx.x % kWarp == 0) per_warp[threadIdx.x / kWarp] = v;
  __syncthreads();
  if (threadIdx.x == 0)
    for (unsigned w = 1; w < kWarps; ++w) v = Op::combine(v, per_warp[w]);
  return v;
}

// The policy: chapter 07's loads (16-byte vectors, up to 8 a lane and 32 elements a load round),
// and how the ordered kernel cuts a warp's stretch. 13_custom_ops_ordered_tuning
// (experiments/13_custom_ops/ordered_tuning.cu) times each choice changed alone
// (results/h200/experiments/ordered_tuning.md): one region a warp
// (a 5-step tree every step, the layout of a plain ordered kernel) falls behind on the operators
// with a long combine, more lanes a region lose Welford's share, one region a lane reads 32
// separate streams a warp, one run leaves Welford's chain of dependent updates waiting, and two
// load rounds a step need more registers than 2 blocks an SM allow.
struct OrderedTuning : ch07::Tuning {
  static constexpr unsigned kLanesPerRegion = 2;  // the warp's stretch is cut into 32 / 2 = 16 regions
  static constexpr unsigned kRounds = 1;          // load rounds a step: a lane's piece is 8 vectors
  static constexpr unsigned kRuns = 2;            // a piece is folded as 2 runs side by side
  static constexpr unsigned kMinBlocks = 1;       // no register cap (__launch_bounds__' minimum blocks)
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
    last = ch10::take_ticket<ch10::Tuning>(tickets) == gridDim.x - 1;
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

template <class Op, class Policy = OrderedTuning>
using OrderedSource = ch07::Array<typename Op::In, typename Policy::Load>;

// The vectors a warp takes a step, and the shared memory of a block's steps (32 KB for the
// lesson's 8 warps x 32 lanes x 8 vectors; dynamic, so that a policy of 2 load rounds may have
// 64 KB, above the 48 KB a kernel may declare statically).
template <class Op, class Policy = OrderedTuning>
constexpr std::size_t ordered_step_vectors() {
  return std::size_t{kWarp} * Policy::kRounds * ch07::unroll_of<Policy, OrderedSource<Op, Policy>>();
}
template <class Op, class Policy = OrderedTuning>
constexpr std::size_t ordered_shared_bytes() {
  return std::size_t{kWarps} * ordered_step_vectors<Op, Policy>() * sizeof(uint4);
}

// Blocks the ordered kernel can hold at once, with its shared memory (asked once per device,
// which also lets the kernel have that much).
template <class Op, class Policy = OrderedTuning>
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
template <class Op, class Policy = OrderedTuning>
unsigned ordered_blocks(std::size_t n) {
  const std::size_t step = ordered_step_vectors<Op, Policy>() * OrderedSource<Op, Policy>::kCount;
  return static_cast<unsigned>(std::clamp<std::size_t>(red::ceil_div(n, step * kWarps), 1, ordered_max_blocks<Op, Policy>()));
}

template <class Op>
struct OrderedScratch {
  unsigned* tickets;
  typename Op::Acc* partials;
  std::size_t zeroed_bytes, bytes;
  OrderedScratch(void* base, unsigned blocks) {
    red::ScratchCarver carve(base);
    tickets = carve.take<unsigned>(1);
    zeroed_bytes = carve.bytes();
    partials = carve.take<typename Op::Acc>(blocks);
    bytes = carve.bytes();
  }
};
template <class Op, class Policy = OrderedTuning>
std::size_t ordered_scratch_bytes(std::size_t) {
  return OrderedScratch<Op>(nullptr, ordered_max_blocks<Op, Policy>()).bytes;
}
template <class Op, class Policy = OrderedTuning>
std::size_t ordered_zeroed_scratch_bytes() {
  return OrderedScratch<Op>(nullptr, ordered_max_blocks<Op, Policy>()).zeroed_bytes;
}

// The order-keeping launcher: any associative operator.
template <class Op, class Policy = OrderedTuning>
void launch_ordered(const Call& c) {
  red::check_scratch("13_custom_ops", c.scratch, c.scratch_bytes, ordered_scratch_bytes<Op, Policy>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  using Source = OrderedSource<Op, Policy>;
  const Source src{static_cast<const typename Op::In*>(c.input)};
  if (!src.element_aligned()) throw std::invalid_argument("13_custom_ops: input not aligned to its element type");
  const OrderedScratch<Op> s(c.scratch, ordered_max_blocks<Op, Policy>());
  reduce_ordered<Op, Policy, Source><<<ordered_blocks<Op, Policy>(c.n), kBlock, ordered_shared_bytes<Op, Policy>(), c.stream>>>(
      src, c.n, s.partials, s.tickets, c.output);
  CUDA_CHECK_LAUNCH();
}

// ---- any / all with votes ------------------------------------------------------------------------------

// Over bytes (nonzero is true). Each thread reads 16-byte vectors in chapter 07's tiles, kVotes of
// them a trip, and keeps one bit: any byte nonzero (kAll false) or any byte zero (kAll true, the
// answer then being "not all"). A block votes with one __syncthreads_or. With kEarlyExit a warp
// whose lanes found the deciding byte sets a stop flag (a relaxed store), and every warp reads it
// once a trip and leaves the loop when set: the bytes after are never read. The answer does not
// depend on which blocks stopped. The last block (a ticket) ORs the blocks' bits, writes the
// result and sets the counter and the flag back to 0; a grid of one block sets the flag back
// itself.
constexpr unsigned kVotes = 8;  // 128 bytes in flight a thread

__device__ inline bool decides(uint4 v, bool all) {
  if (!all) return (v.x | v.y | v.z | v.w) != 0;  // a nonzero byte somewhere
  // A zero byte somewhere: __vcmpeq4 sets 0xff in each byte lane that equals zero.
  return (__vcmpeq4(v.x, 0) | __vcmpeq4(v.y, 0) | __vcmpeq4(v.z, 0) | __vcmpeq4(v.w, 0)) != 0;
}

template <bool kAll, bool kEarlyExit>
__global__ void __launch_bounds__(kBlock)
    any_all_votes(const std::uint8_t* in, std::size_t n, unsigned* partials, unsigned* tickets, unsigned* stop,
                  int* result) {
  __shared__ bool last;
  const unsigned lane = threadIdx.x % kWarp;
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
  const std::size_t vectors = aligned ? n / 16 : 0;
  const std::size_t tile = std::size_t{kBlock} * kVotes, rounds = vectors / tile / gridDim.x;
  bool found = false;
  unsigned stopped = 0;  // lane 0: the flag as read at the previous trip (its load flies during the trip)
  for (std::size_t r = 0; r < rounds; ++r) {
    if constexpr (kEarlyExit) {
      if (__shfl_sync(0xffffffffu, stopped, 0)) break;
      if (lane == 0) stopped = ch10::Counter(*stop).load(cuda::memory_order_relaxed);
    }
    const std::size_t first = (r * gridDim.x + blockIdx.x) * tile + threadIdx.x;
    uint4 x[kVotes];
#pragma unroll
    for (unsigned u = 0; u < kVotes; ++u) x[u] = __ldg(reinterpret_cast<const uint4*>(in) + first + u * kBlock);
#pragma unroll
    for (unsigned u = 0; u < kVotes; ++u) found |= decides(x[u], kAll);
    if constexpr (kEarlyExit)
      if (__any_sync(0xffffffffu, found) && lane == 0) ch10::Counter(*stop).store(1, cuda::memory_order_relaxed);
  }
  // The rest: whole vectors one per thread, then single bytes (all of them when unaligned).
  const std::size_t thread = std::size_t{blockIdx.x} * kBlock + threadIdx.x, threads = std::size_t{gridDim.x} * kBlock;
  for (std::size_t v = rounds * gridDim.x * tile + thread; v < vectors; v += threads)
    found |= decides(__ldg(reinterpret_cast<const uint4*>(in) + v), kAll);
  for (std::size_t i = vectors * 16 + thread; i < n; i += threads) found |= kAll ? in[i] == 0 : in[i] != 0;
  const bool block_found = __syncthreads_or(found);
  if (gridDim.x == 1) {  // every warp has left its loop (the vote above): the flag is read no more
    if (threadIdx.x == 0) {
      *result = kAll ? !block_found : block_found;
      if constexpr (kEarlyExit) ch10::Counter(*stop).store(0, cuda::memory_order_relaxed);
    }
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_found;
    last = ch10::take_ticket<ch10::Tuning>(tickets) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  bool any = false;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kBlock) any |= partials[i] != 0;
  any = __syncthreads_or(any);
  if (threadIdx.x == 0) {
    *result = kAll ? !any : any;
    ch10::Counter(*tickets).store(0, cuda::memory_order_relaxed);
    ch10::Counter(*stop).store(0, cuda::memory_order_relaxed);
  }
}

template <bool kAll, bool kEarlyExit>
unsigned votes_max_blocks() {
  return ch07::device_limits<any_all_votes<kAll, kEarlyExit>>().max_blocks;
}

struct VoteScratch {
  unsigned *tickets, *stop, *partials;
  std::size_t zeroed_bytes, bytes;
  VoteScratch(void* base, unsigned blocks) {
    red::ScratchCarver carve(base);
    tickets = carve.take<unsigned>(1);
    stop = carve.take<unsigned>(1);
    zeroed_bytes = carve.bytes();
    partials = carve.take<unsigned>(blocks);
    bytes = carve.bytes();
  }
};
template <bool kAll, bool kEarlyExit>
std::size_t votes_scratch_bytes() {
  return VoteScratch(nullptr, votes_max_blocks<kAll, kEarlyExit>()).bytes;
}
template <bool kAll, bool kEarlyExit>
std::size_t votes_zeroed_scratch_bytes() {
  return VoteScratch(nullptr, votes_max_blocks<kAll, kEarlyExit>()).zeroed_bytes;
}

// any (kAll false) or all (kAll true) of n bytes: the int 0 or 1 at the result.
template <bool kAll, bool kEarlyExit>
void launch_votes(const Call& c) {
  red::check_scratch("13_custom_ops", c.scratch, c.scratch_bytes, votes_scratch_bytes<kAll, kEarlyExit>());
  if (c.n == 0) return red::launch_store_identity<std::conditional_t<kAll, AllNonzero, AnyNonzero>>(c.output, c.stream);
  const unsigned max_blocks = votes_max_blocks<kAll, kEarlyExit>();
  const VoteScratch s(c.scratch, max_blocks);
  const std::size_t tiles = red::ceil_div(c.n, std::size_t{kBlock} * kVotes * 16);
  const unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>(tiles, 1, max_blocks));
  any_all_votes<kAll, kEarlyExit><<<blocks, kBlock, 0, c.stream>>>(static_cast<const std::uint8_t*>(c.input), c.n, s.partials,
                                                                    s.tickets, s.stop, static_cast<int*>(c.output));
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch13
