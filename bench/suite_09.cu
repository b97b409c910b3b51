#include "09_cub_comparison/chapter.cuh"
#include "suite.hpp"

namespace red::bench::suite {

const Chapter& chapter_09() { return ch09::chapter(); }

}  // namespace red::bench::suite
