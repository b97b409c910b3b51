#include "suite.hpp"

namespace red::bench::suite {

std::vector<Registration> classic_steps() { return {}; }

}  // namespace red::bench::suite
