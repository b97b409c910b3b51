#include "suite.hpp"

namespace red::bench::suite {

std::vector<Registration> solutions_07_08() { return {}; }

}  // namespace red::bench::suite
