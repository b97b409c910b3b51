// What chapter 07's benchmark measures beside the lesson, and its tests hold to the same answers:
// launchers that change the lesson's grid or its launch of pass 2, and loads policies that change
// how pass 1 reads (Tuning, reduce.cuh). The lesson does not include this file.
#pragma once

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "07_two_pass/chapter.cuh"

namespace ch07 {

// What the launchers below read: an array of Op::In, with the lesson's loads.
template <class Op>
using Source = Array<typename Op::In>;

// A call's input as pass 1 reads it; refused when off its element type's boundary.
template <class Op>
Source<Op> source_for(const red::ReduceCall& c) {
  const Source<Op> src{static_cast<const typename Op::In*>(c.input), c.n};
  if (!src.element_aligned()) throw std::invalid_argument("07_two_pass: input not aligned to its element type");
  return src;
}

// The lesson's two launches on `blocks` pass-1 blocks, pass 2 early where `early`: the variants'
// own, so that each sets its grid or its launch.
template <class Op>
void launch_passes(Source<Op> src, std::size_t n, typename Op::Acc* partials, unsigned blocks, void* result,
                   cudaStream_t stream, bool early) {
  reduce_pass1<Op, Tuning, Source<Op>><<<blocks, kBlock, 0, stream>>>(src, n, partials, blocks == 1 ? result : nullptr);
  CUDA_CHECK(cudaGetLastError());
  if (blocks == 1) return;
  CUDA_CHECK(launch_early(reduce_pass2<Op>, dim3(1), dim3(kFinalBlock), 0, stream, early,
                          static_cast<const typename Op::Acc*>(partials), blocks, result));
}

// Without the fixed grid: a block per tile, as in chapter 06, and as many partials for pass 2 (a
// scratch that grows with n).
template <class Op>
std::size_t growing_grid_scratch_bytes(std::size_t n) {
  return tile_blocks<Op, Tuning, Source<Op>>(n) * sizeof(typename Op::Acc);
}

template <class Op>
void launch_growing_grid(const red::ReduceCall& c) {
  red::check_scratch("07_two_pass", c.scratch, c.scratch_bytes, growing_grid_scratch_bytes<Op>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  const Source<Op> src = source_for<Op>(c);
  const auto blocks = static_cast<unsigned>(tile_blocks<Op, Tuning, Source<Op>>(c.n));
  launch_passes<Op>(src, c.n, static_cast<typename Op::Acc*>(c.scratch), blocks, c.output, c.stream,
                    limits_of<Op, Tuning, Source<Op>>().programmatic);
}

inline const red::Chapter& chapter_growing_grid() {
  static const red::Chapter ch = two_pass_chapter<Tuning>(
      "reduce_two_pass_growing_grid",
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&growing_grid_scratch_bytes<Op>, &launch_growing_grid<Op>};
      },
      [](std::size_t n) {
        const auto depth = [n](auto op) {
          using Op = decltype(op);
          return sum_depth_on<Tuning, Op>(n, static_cast<unsigned>(tile_blocks<Op, Tuning, Source<Op>>(n)));
        };
        return std::max(depth(red::Sum<float>{}), depth(red::Sum<__half>{}));
      },
      [] {
        Settings s;
        s.fixed_grid = false;
        return s;
      }());
  return ch;
}

// Without vector loads: one element per load instruction, 32 loads in flight per thread, so a
// 4-byte input keeps the lesson's 128 bytes in flight.
struct ScalarLoad {
  template <class T>
  using Vec = Vector<T, sizeof(T)>;
  template <class T>
  __device__ static Vec<T> load(const T* body, std::size_t v) {
    return load_vector<sizeof(T)>(body, v);
  }
};
struct ScalarLoads : Tuning {
  using Load = ScalarLoad;
  static constexpr unsigned kMaxLoads = 32;
  static std::string name() { return "scalar_loads"; }
};

// Pass 2 launched the ordinary way, after pass 1 ends (the result bits are the same).
template <class Op>
void launch_plain(const red::ReduceCall& c) {
  red::check_scratch("07_two_pass", c.scratch, c.scratch_bytes, scratch_bytes<Op>(c.n));
  if (c.n == 0) return red::launch_store_identity<Op>(c.output, c.stream);
  const Source<Op> src = source_for<Op>(c);
  launch_passes<Op>(src, c.n, static_cast<typename Op::Acc*>(c.scratch), pass1_blocks<Op, Tuning, Source<Op>>(c.n),
                    c.output, c.stream, false);
}

inline const red::Chapter& chapter_plain_launch() {
  static const red::Chapter ch = two_pass_chapter<Tuning>(
      "reduce_two_pass_plain_launch",
      [](auto op) {
        using Op = decltype(op);
        return red::Launcher{&scratch_bytes<Op>, &launch_plain<Op>};
      },
      deepest_sum_depth<Tuning>,
      [] {
        Settings s;
        s.early_launch = false;
        return s;
      }());
  return ch;
}

// Another number of vectors in flight per thread, the same for every input type.
template <unsigned N>
struct Unroll : Tuning {
  static constexpr unsigned kMaxLoads = N;
  static constexpr unsigned kMaxElements = 16 * N;  // never the limit: 16 elements per vector at most
  static std::string name() { return "unroll" + std::to_string(N); }
};

// The 16-byte load with an L2 prefetch hint (PTX `ld.global.nc.L2::256B`, sm_80+): a miss brings
// the whole 256-byte group around the address into L2. The benchmark measures whether a stream
// that reads every byte anyway gains from it.
struct L2PrefetchLoad {
  template <class T>
  using Vec = Vector<T, 16>;
  template <class T>
  __device__ static Vec<T> load(const T* body, std::size_t v) {
#if __CUDA_ARCH__ >= 800
    uint4 raw;
    asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(raw.x), "=r"(raw.y), "=r"(raw.z), "=r"(raw.w)
        : "l"(reinterpret_cast<const uint4*>(body) + v));
    Vec<T> out;
    std::memcpy(&out, &raw, 16);
    return out;
#else  // older GPUs have no such hint
    return load_vector<16>(body, v);
#endif
  }
};
template <>
inline constexpr bool prefetches_l2<L2PrefetchLoad> = true;

template <unsigned N>
struct L2Prefetch : Unroll<N> {
  using Load = L2PrefetchLoad;
  static std::string name() { return "unroll" + std::to_string(N) + "_l2prefetch"; }
};

}  // namespace ch07
