#include "10_single_pass/variants.cuh"
#include "suite.hpp"

namespace red::bench::suite {

const Chapter& chapter_10() { return ch10::chapter(); }

std::vector<const Chapter*> variants_10() { return ch10::variant_chapters(); }

}  // namespace red::bench::suite
