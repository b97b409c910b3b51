#include <doctest/doctest.h>

#include "progress.hpp"

using namespace red;

TEST_CASE("Progress: the time left scales the time so far by the weight still to run") {
  Progress p({1.0, 1.0, 2.0});
  CHECK(p.total() == 3);
  CHECK(p.seconds_left(0, 0.0) < 0);  // nothing done yet: unknown
  CHECK(p.starting(0, 0.0) == "[1/3] 0 s elapsed, time left not known yet");
  CHECK(p.seconds_left(1, 10.0) == doctest::Approx(30.0));  // 1 of 4 done in 10 s: 3 left
  CHECK(p.seconds_left(2, 20.0) == doctest::Approx(20.0));
  CHECK(p.starting(2, 20.0) == "[3/3] 20 s elapsed, about 20 s left");
  CHECK(p.seconds_left(3, 40.0) == 0.0);  // past the end
}

TEST_CASE("Progress: a counter as wide as the total") {
  Progress p(std::vector<double>(120, 1.0));
  CHECK(p.starting(4, 50.0) == "[  5/120] 50 s elapsed, about 24 min 10 s left");  // 4 done, 116 to go
}

TEST_CASE("duration_text") {
  CHECK(duration_text(0.4) == "0 s");
  CHECK(duration_text(59.6) == "1 min 00 s");
  CHECK(duration_text(125) == "2 min 05 s");
  CHECK(duration_text(3720) == "1 h 02 min");
  CHECK(duration_text(-3) == "0 s");
}
