#include "10_single_pass/variants.cuh"
#include "suite.hpp"

namespace red::bench::suite {

const Chapter& chapter_10() { return ch10::chapter(); }

std::vector<const Chapter*> variants_10() {
  return {&ch10::chapter_with<ch10::AcqRelTicket>(),        &ch10::chapter_with<ch10::FenceTicket>(),
          &ch10::chapter_with<ch10::PlainLaunch>(),         &ch10::chapter_with<ch10::HandwrittenShuffles>(),
          &ch10::chapter_with<ch10::SingleBlockOneTile>(),  &ch10::chapter_grid_sync()};
}

}  // namespace red::bench::suite
