#include "07_two_pass/chapter.cuh"
#include "suite.hpp"

namespace red::bench::suite {

const Chapter& chapter_07() { return ch07::chapter(); }

const Chapter& chapter_07_plain_launch() { return ch07::chapter_with<false>(); }

}  // namespace red::bench::suite
