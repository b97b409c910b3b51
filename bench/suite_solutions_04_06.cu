#include "suite.hpp"

namespace red::bench::suite {

std::vector<Registration> solutions_04_to_06() { return {}; }

}  // namespace red::bench::suite
