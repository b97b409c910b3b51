// What the benchmark reports about each kernel beside its name (Chapter::BenchInfo): the lesson's
// kernels are nobody's variant, every variant names the kernel it varies and its settings. No GPU
// needed: registering a chapter makes no CUDA call.
#include <doctest/doctest.h>

#include <string>

#include "03_shared/chapter.cuh"
#include "05_coarsened/chapter.cuh"
#include "07_two_pass/variants.cuh"
#include "08_dot_product/chapter.cuh"

using namespace red;

namespace {
double param(const Chapter& ch, const std::string& key) {
  for (const auto& [k, v] : ch.bench_info.params)
    if (k == key) return v;
  FAIL("no parameter ", key, " on ", ch.name);
  return -1;
}
}  // namespace

TEST_CASE("bench info: lessons are nobody's variant; variants name their kernel and settings") {
  CHECK(ch03::chapter().bench_info.variant_of.empty());
  CHECK(param(ch03::chapter(), "elements_per_thread") == 2);  // the first add while loading
  CHECK(ch05::chapter().bench_info.variant_of.empty());
  CHECK(param(ch05::chapter(), "coarsening") == ch05::kCoarsen);
  CHECK(ch05::chapter_with_factor<4>().bench_info.variant_of == "reduce_coarsened");
  CHECK(param(ch05::chapter_with_factor<4>(), "coarsening") == 4);

  CHECK(ch07::chapter().bench_info.variant_of.empty());
  CHECK(param(ch07::chapter(), "fixed_grid") == 1);
  CHECK(param(ch07::chapter(), "vector_bytes") == 16);
  CHECK(param(ch07::chapter(), "unroll") == 8);  // the f32 input's
  const Chapter& plain = ch07::chapter_plain_launch();
  CHECK(plain.bench_info.variant_of == "reduce_two_pass");
  CHECK(param(plain, "early_launch") == 0);
  CHECK(param(plain, "l2_prefetch") == 0);
  const Chapter& scalar = ch07::chapter_with<ch07::ScalarLoads>();
  CHECK(param(scalar, "vector_bytes") == 4);
  CHECK(param(scalar, "unroll") == 32);  // the same 128 bytes in flight per thread
  CHECK(param(ch07::chapter_growing_grid(), "fixed_grid") == 0);
  CHECK(param(ch07::chapter_with<ch07::L2Prefetch<4>>(), "l2_prefetch") == 1);
  CHECK(param(ch07::chapter_with<ch07::L2Prefetch<4>>(), "unroll") == 4);

  CHECK(ch08::chapter().bench_info.variant_of.empty());
  CHECK(param(ch08::chapter_step<ch08::Step::shared>(), "step") == 1);
  CHECK(param(ch08::chapter(), "step") == 4);
}
