// Progress of a long run of many cases of unequal cost: how far along, and about how long is left.
// Host-only, no benchmark dependency, so it is tested on any machine (tests/test_progress.cpp).
//
// Each case has a weight (an estimate of its cost in arbitrary units: the benchmark uses the
// bytes it reads plus a fixed amount per case). The time left is the time so far, scaled by the
// weight still to run over the weight done: it needs no model of the machine and corrects itself
// as the run goes on.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace red {

class Progress {
 public:
  explicit Progress(std::vector<double> weights);

  // Case `index` (0-based, in the order of `weights`) is about to start, `elapsed_s` seconds into
  // the run. Returns a line such as "[ 12/420] 4.1 s elapsed, about 1 min 50 s left".
  std::string starting(std::size_t index, double elapsed_s);

  std::size_t total() const { return weights_.size(); }
  // Seconds left once `index` starts, or a negative number before anything is done.
  double seconds_left(std::size_t index, double elapsed_s) const;

 private:
  std::vector<double> weights_;
  std::vector<double> before_;  // before_[i]: the weight of cases 0 .. i-1
};

// "45 s", "2 min 05 s", "1 h 02 min".
std::string duration_text(double seconds);

}  // namespace red
