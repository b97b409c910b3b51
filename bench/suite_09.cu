#include "09_cub_comparison/chapter.cuh"
#include "suite.hpp"

namespace red::bench::suite {

const Chapter& chapter_09() { return ch09::chapter(); }

const Chapter& chapter_09_builtin() { return ch09::builtin(); }

}  // namespace red::bench::suite
