#include "progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace red {

Progress::Progress(std::vector<double> weights) : weights_(std::move(weights)), before_(weights_.size() + 1, 0.0) {
  for (std::size_t i = 0; i < weights_.size(); ++i) before_[i + 1] = before_[i] + weights_[i];
}

double Progress::seconds_left(std::size_t index, double elapsed_s) const {
  if (index >= weights_.size()) return 0.0;
  const double done = before_[index], all = before_.back();
  if (done <= 0.0 || elapsed_s <= 0.0) return -1.0;
  return elapsed_s * (all - done) / done;
}

std::string Progress::starting(std::size_t index, double elapsed_s) {
  const int width = static_cast<int>(std::to_string(weights_.size()).size());
  char head[64];
  std::snprintf(head, sizeof head, "[%*zu/%zu] ", width, index + 1, weights_.size());
  const double left = seconds_left(index, elapsed_s);
  return std::string(head) + duration_text(elapsed_s) + " elapsed, " +
         (left < 0 ? std::string("time left not known yet") : "about " + duration_text(left) + " left");
}

std::string duration_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[48];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%ld s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, s / 60 % 60);
  return buf;
}

}  // namespace red
