// Chapter 10's memory model, tested: what the PTX model requires is asserted, what it only allows
// is counted and reported. Message passing between two SMs (litmus.cuh): with the flag stored with
// release and loaded with acquire, no read may return data older than the flag seen (asserted);
// with a relaxed flag such reads are allowed and may or may not happen (reported).
#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include "10_single_pass/litmus.cuh"
#include "test_support.hpp"

using namespace red;
namespace litmus = ch10::litmus;

namespace {

constexpr unsigned kLitmusIterations = 200'000;

void check_finished(const litmus::Outcome& o) {
  CHECK(o.writer_gave_up == 0);
  CHECK(o.reader_gave_up == 0);
  CHECK(o.iterations == kLitmusIterations);
  CHECK(o.writer_sm != o.reader_sm);  // two SMs, two L1s
}

}  // namespace

TEST_CASE("10_single_pass: message passing with release and acquire never reads stale data") {
  const litmus::Outcome o = litmus::run(litmus::Order::acquire_release, kLitmusIterations);
  check_finished(o);
  INFO("first stale read at iteration ", o.first_stale, ": flag ", o.first_stale_flag, " seen, data ",
       o.first_stale_data, " read");
  CHECK(o.stale == 0);
}

TEST_CASE("10_single_pass: message passing with a relaxed flag (reported)") {
  // The PTX model allows the reader to see the flag and still read older data, and does not require
  // it: the count is the GPU's, not a property to assert.
  const litmus::Outcome o = litmus::run(litmus::Order::relaxed, kLitmusIterations);
  check_finished(o);
  MESSAGE(o.stale, " stale reads of ", o.iterations, " with a relaxed flag (writer on SM ", o.writer_sm,
          ", reader on SM ", o.reader_sm, "); allowed by the PTX memory model, not required");
}
