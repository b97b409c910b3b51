// main() of every GPU test binary: skip visibly (ctest's SKIP_RETURN_CODE 77) without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "cuda_check.hpp"

int main(int argc, char** argv) {
  if (!red::gpu_available()) {
    std::fprintf(stderr, "SKIPPED: %s needs a CUDA GPU and this machine has none; the host tests still run.\n",
                 argc > 0 ? argv[0] : "this test");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
