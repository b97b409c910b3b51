// Chapter 01's exercise: its kernel with the tail guard `&& i + stride < tile_len` deleted, run once
// on n = 1000 floats (or the n given as its argument) through chapter 01's own launcher
// (ch01::launch_passes: the copy into scratch, then one pass of the kernel per level).
// solutions/check_01_unguarded.sh runs it under compute-sanitizer's memcheck and initcheck;
// solutions/01_naive.md explains what each reports.
//
// The scratch is a fresh allocation, as a caller's would be, and is not poisoned: the chapter
// programs fill it with 0xA5 bytes first, and initcheck counts that fill as initialisation.
#include <cstdio>
#include <exception>
#include <vector>

#include "01_naive/reduce.cuh"
#include "command_line.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"

// ch01::reduce_naive with the exercise's one change: no `&& i + stride < tile_len`. A thread
// whose partner lies past the end of a short tile now reads it anyway, and writes the sum back.
template <class Op>
__global__ void reduce_naive_unguarded(typename Op::Acc* data, std::size_t /* len: no longer read */,
                                       typename Op::Acc* partials, void* result) {
  const std::size_t base = blockIdx.x * std::size_t{ch01::kTile};
  typename Op::Acc* tile = data + base;
  const unsigned i = 2 * threadIdx.x;

  for (unsigned stride = 1; stride < ch01::kTile; stride *= 2) {
    if (threadIdx.x % stride == 0) tile[i] = Op::combine(tile[i], tile[i + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (result)
      Op::store(result, tile[0]);
    else
      partials[blockIdx.x] = tile[0];
  }
}

int main(int argc, char** argv) {
  std::size_t n = 1000;
  CLI::App app{"Chapter 01's kernel without its tail guard, on n floats (solutions/01_naive.md).",
               "solution_01_unguarded"};
  app.add_option("n", n, "number of floats (default 1000)")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  app.footer("Exit codes: 0 ran, 1 stopped by a CUDA error, 2 bad arguments, 77 no GPU.");
  if (const int stop = red::parse_command_line(app, argc, argv); stop >= 0) return stop;
  if (!red::gpu_available()) {
    std::fprintf(stderr, "SKIPPED: solution_01_unguarded needs a CUDA GPU and this machine has none.\n");
    return 77;
  }
  using Op = red::Sum<float>;
  try {
    // Small integers: every order of additions is exact, so the right answer is known exactly.
    std::vector<float> host(n);
    double expected = 0;
    for (std::size_t k = 0; k < n; ++k) expected += host[k] = static_cast<float>(k % 8 + 1);

    red::DeviceBuffer input(n * sizeof(float)), output(red::kResultBytes);
    red::DeviceBuffer scratch(ch01::scratch_bytes<Op>(n));  // allocated last: nothing of ours lies after it
    input.upload(host.data(), n * sizeof(float));

    const ch01::InPlaceScratch<float> layout(scratch.get(), n);
    auto offset = [&](const void* p) { return static_cast<const char*>(p) - static_cast<const char*>(scratch.get()); };
    std::printf("n = %zu floats\n", n);
    for (std::size_t len = n, pass = 1;; len = red::ceil_div(len, ch01::kTile), ++pass) {
      const std::size_t blocks = red::ceil_div(len, ch01::kTile);
      std::printf("pass %zu: %zu block(s) over %zu values, the last tile holding %zu\n", pass, blocks, len,
                  len - (blocks - 1) * ch01::kTile);
      if (blocks == 1) break;
    }
    std::printf("scratch: %zu bytes; the copy at bytes [0, %zu), unused padding [%zu, %td), the partials [%td, %zu)\n",
                scratch.bytes(), n * sizeof(float), n * sizeof(float), offset(layout.partials), offset(layout.partials),
                scratch.bytes());

    red::ReduceCall call;
    call.op = red::Op::sum;
    call.dtype = red::DType::f32;
    call.input = input.get();
    call.n = n;
    call.output = output.get();
    call.scratch = scratch.get();
    call.scratch_bytes = scratch.bytes();
    ch01::launch_passes<Op>(call, reduce_naive_unguarded<Op>);
    CUDA_CHECK(cudaDeviceSynchronize());

    float got = 0;
    output.download(&got, sizeof got);
    std::printf("result %.1f, expected %.1f: %s\n", got, expected,
                got == expected ? "the same (what was read past the tiles happened to add nothing)" : "different");
    return 0;
  } catch (const std::exception& e) {
    std::printf("stopped by a CUDA error: %s\n", e.what());
    return 1;
  }
}
