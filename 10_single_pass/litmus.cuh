// Message passing between two SMs: what release and acquire add to a flag, measured.
//
// The pattern chapter 10 stands on (reduce.cuh): a block stores its partial, then takes a ticket;
// the block that sees the last ticket reads every partial. Cut down to two threads, it is the
// litmus test "message passing": a writer stores data, then a flag; a reader waits for the flag,
// then reads the data. The question is whether the reader, having seen the flag, can still read
// the data as it was before. The PTX memory model answers: yes with a relaxed flag (nothing orders
// the data after the flag), never when the flag is stored with release and loaded with acquire
// (the store of the data then happens before the read). This header runs the test on the GPU, so
// the programs and the tests can count how often the allowed outcome really happens:
//
//   writer (block 0, one thread)            reader (block 1, one thread)
//   for k = 1 .. n:                         for k = 1 .. n:
//     wait until ack >= k - 1                 d1 = data            weak load: the line into L1
//     data = k          weak store            wait until flag >= k, seen = flag
//     flag = k          relaxed | release     d2 = data            weak load
//                                             stale if d2 < seen   (the data older than the flag)
//                                             ack = k              relaxed | release
//
// Why each piece is there:
//  - Different SMs: each block asks for more than half an SM's shared memory (it uses none of it),
//    so no SM can hold both; the blocks report their %smid. Only then are there two L1s.
//  - The first read d1: a weak load caches the data's line in the reader's SM's L1, which is not
//    kept coherent with other SMs. A relaxed load of the flag goes to L2 (device scope) but
//    invalidates nothing, so d2 may be answered by that L1 with a value older than the flag. An
//    acquire load at device scope invalidates the SM's L1 before later loads (and a release store
//    makes the writer's data reach L2 before the flag does), so d2 must see the writer's data. d1
//    races with the writer on purpose: its value is never judged, only counted (`early`: the
//    writer's store came first, and that iteration had no stale value to return).
//  - The weak accesses are inline PTX (ld.global.u32, st.global.u32) in asm volatile statements
//    with a "memory" clobber, and both loads' values are used (a load whose value is unused is
//    dropped by ptxas, asm volatile or not): the compiler keeps each one, in its place, so what is
//    counted is the hardware, not an optimisation. The flag and the acknowledgement are
//    cuda::atomic_ref at device scope (PTX: ld/st.relaxed.gpu, ld.acquire.gpu, st.release.gpu).
//    In the sm_90 code (nvdisasm) the weak accesses are LDG.E and STG.E, d1 and d2 each where it
//    is written; a relaxed load or store is LD/ST.E.STRONG.GPU alone; an acquire load is
//    LD.E.STRONG.GPU followed by CCTL.IVALL (every line of the SM's L1 invalidated); a release
//    store is MEMBAR.ALL.GPU, then ST.E.STRONG.GPU.
//  - The acknowledgement: the writer stores k only after the reader has finished k - 1, so every
//    iteration is a fresh race between one store and one load. Without it the writer would finish
//    all its stores while the reader still waits for its first L2 round trips. In acquire-release
//    mode it is released and acquired too, so the reader's d2 happens before the writer's next store
//    (it has no race to lose); in relaxed mode it is relaxed, and orders nothing.
//  - No hang: each side gives up when it has waited more than a second of %globaltimer for the
//    other (the blocks were not running at the same time, or one gave up first), and says where.
//
// A stale read in relaxed mode is allowed, not required: zero is a legitimate outcome on a given
// GPU. In acquire-release mode any stale read breaks the model.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cuda/atomic>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "device_buffer.hpp"

namespace ch10::litmus {

enum class Order {
  relaxed,          // flag and acknowledgement stored and loaded relaxed
  acquire_release,  // stored with release, loaded with acquire
};

inline const char* name(Order order) { return order == Order::relaxed ? "relaxed" : "acquire-release"; }

// The three words the blocks share, each on a 128-byte line of its own: the data's line in the
// reader's L1 holds nothing else.
struct Cells {
  alignas(128) unsigned data;
  alignas(128) unsigned flag;
  alignas(128) unsigned ack;
};

// What one run saw. The reader writes all but the writer's two fields.
struct Outcome {
  unsigned long long iterations;  // the reader's completed iterations
  unsigned long long stale;       // d2 < seen
  unsigned long long early;       // d1 >= k: the writer's store of k came before the first read
  unsigned first_stale;           // the iteration of the first stale read (0: none)
  unsigned first_stale_flag;      // the flag it had seen, and the data it read then
  unsigned first_stale_data;
  unsigned writer_sm, reader_sm;            // %smid at the start
  unsigned writer_gave_up, reader_gave_up;  // the iteration it stopped waiting at (0: never)
};

constexpr unsigned long long kGiveUpNs = 1'000'000'000;  // one second of waiting for the other block

__device__ inline unsigned load_weak(const unsigned* p) {
  unsigned v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(__cvta_generic_to_global(p)) : "memory");
  return v;
}
__device__ inline void store_weak(unsigned* p, unsigned v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "r"(v) : "memory");
}
__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ inline unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

using Word = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

// Waits until `word` holds at least `target` and returns true with the value seen in `seen`;
// false after kGiveUpNs.
template <cuda::memory_order kLoad>
__device__ bool wait_for(const Word& word, unsigned target, unsigned& seen) {
  const unsigned long long start = global_ns();
  while ((seen = word.load(kLoad)) < target)
    if (global_ns() - start > kGiveUpNs) return false;
  return true;
}

// Launched as 2 blocks of 1 thread: block 0 writes, block 1 reads (the picture above).
template <Order kOrder>
__global__ void __launch_bounds__(1) message_passing(Cells* cells, unsigned n, Outcome* out) {
  constexpr cuda::memory_order kStore =
      kOrder == Order::relaxed ? cuda::memory_order_relaxed : cuda::memory_order_release;
  constexpr cuda::memory_order kLoad =
      kOrder == Order::relaxed ? cuda::memory_order_relaxed : cuda::memory_order_acquire;
  const Word flag(cells->flag), ack(cells->ack);
  unsigned seen = 0;
  if (blockIdx.x == 0) {
    out->writer_sm = sm_id();
    for (unsigned k = 1; k <= n; ++k) {
      if (!wait_for<kLoad>(ack, k - 1, seen)) {
        out->writer_gave_up = k;
        return;
      }
      store_weak(&cells->data, k);
      flag.store(k, kStore);
    }
    return;
  }
  out->reader_sm = sm_id();
  unsigned long long stale = 0, early = 0;
  unsigned k = 1;
  for (; k <= n; ++k) {
    // d1: the line into this SM's L1. Its value is counted, so that no compiler drops the load.
    early += load_weak(&cells->data) >= k;
    if (!wait_for<kLoad>(flag, k, seen)) {
      out->reader_gave_up = k;
      break;
    }
    const unsigned data = load_weak(&cells->data);  // d2
    if (data < seen && stale++ == 0) {
      out->first_stale = k;
      out->first_stale_flag = seen;
      out->first_stale_data = data;
    }
    ack.store(k, kStore);
  }
  out->iterations = k - 1;
  out->stale = stale;
  out->early = early;
}

// The dynamic shared memory that keeps two blocks of `kernel` off one SM: half an SM's, plus one
// byte, checked with the occupancy calculator.
template <class Kernel>
std::size_t one_block_per_sm_bytes(Kernel kernel) {
  int device = 0, per_sm = 0, per_block = 0, resident = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int bytes = std::min(per_block, per_sm / 2 + 1);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, 1, static_cast<std::size_t>(bytes)));
  if (resident != 1)
    throw std::runtime_error("litmus: " + std::to_string(bytes) + " bytes of shared memory still let " +
                             std::to_string(resident) + " blocks share an SM");
  return static_cast<std::size_t>(bytes);
}

// One run of n iterations in the given order, on the current device; waits for it.
inline Outcome run(Order order, unsigned n) {
  const auto kernel =
      order == Order::relaxed ? message_passing<Order::relaxed> : message_passing<Order::acquire_release>;
  const std::size_t shared = one_block_per_sm_bytes(kernel);
  const red::DeviceBuffer cells(sizeof(Cells)), outcome(sizeof(Outcome));
  cells.fill(0);
  outcome.fill(0);
  kernel<<<2, 1, shared>>>(static_cast<Cells*>(cells.get()), n, static_cast<Outcome*>(outcome.get()));
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  Outcome o{};
  outcome.download(&o, sizeof o);
  return o;
}

}  // namespace ch10::litmus
