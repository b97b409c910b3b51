#include "06_warp_shuffle/chapter.cuh"
#include "suite.hpp"

namespace red::bench::suite {

const Chapter& chapter_06() { return ch06::chapter(); }

}  // namespace red::bench::suite
