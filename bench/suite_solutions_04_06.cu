#include "solutions/04_multiblock_atomic.cuh"
#include "solutions/05_coarsened.cuh"
#include "solutions/06_warp_shuffle.cuh"
#include "suite.hpp"

namespace red::bench::suite {

// One registration per (case, kernel), grouped by size: the benchmark keeps only the latest input
// on the device, so all the f32 rows at 2^28 share one input, then those at 2^20 another. They
// are compared with the chapters' own rows of the same run (04, 05 and 06 at 2^20 and 2^28).
std::vector<Registration> solutions_04_to_06() {
  const std::size_t n20 = std::size_t{1} << 20, n28 = std::size_t{1} << 28;
  std::vector<Registration> r;
  // 04's sum over K slots, every K at 2^28.
  for (const Chapter* spread : sol04::spread_sums()) r.push_back({spread, {{Op::sum, DType::f32, n28}}});
  r.push_back({&sol06::butterfly(), {{Op::sum, DType::f32, n28}}});
  r.push_back({&sol05::early_nan_max(), {{Op::max, DType::f32, n28}}});
  r.push_back({&sol04::packed_argmax(), {{Op::argmax, DType::f32, n28}}});
  r.push_back({&sol06::butterfly(), {{Op::argmax, DType::f32, n28}}});
  // At 2^20: one slot, and the K that 04_multiblock_atomic.md expects to be enough at 2^28 even if
  // the slots of one 128-byte line take turns.
  r.push_back({&sol04::spread_sum<1>(), {{Op::sum, DType::f32, n20}}});
  r.push_back({&sol04::spread_sum<64>(), {{Op::sum, DType::f32, n20}}});
  r.push_back({&sol06::butterfly(), {{Op::sum, DType::f32, n20}}});
  r.push_back({&sol04::packed_argmax(), {{Op::argmax, DType::f32, n20}}});
  r.push_back({&sol06::butterfly(), {{Op::argmax, DType::f32, n20}}});
  return r;
}

}  // namespace red::bench::suite
