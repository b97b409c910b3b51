#include "07_two_pass/variants.cuh"
#include "suite.hpp"

namespace red::bench::suite {

const Chapter& chapter_07() { return ch07::chapter(); }

const Chapter& chapter_07_plain_launch() { return ch07::chapter_plain_launch(); }

}  // namespace red::bench::suite
