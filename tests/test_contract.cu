// The chapter contract's preconditions (common/chapter_builder.cuh), checked before anything
// reaches the GPU, so no GPU is needed: a call is refused with a message, never launched.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "03_shared/chapter.cuh"

using namespace red;

TEST_CASE("contract: a null scratch pointer is refused when the chapter needs scratch") {
  const Chapter& ch = ch03::chapter();
  const std::size_t n = 1'000'003;
  const std::size_t needed = ch.scratch_bytes(Op::sum, DType::f32, n);
  REQUIRE(needed > 0);
  // Stand-ins for device pointers: the checks refuse the call before any is dereferenced.
  int input_stand_in = 0, output_stand_in = 0;
  ReduceCall call;
  call.n = n;
  call.input = &input_stand_in;
  call.output = &output_stand_in;
  call.scratch = nullptr;
  call.scratch_bytes = needed;
  try {
    ch.launch(call);
    FAIL("a call with a null scratch pointer was launched");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("null scratch") != std::string::npos);
  }
  call.scratch_bytes = needed - 1;  // too small is refused first, whatever the pointer
  try {
    ch.launch(call);
    FAIL("a call with too small a scratch was launched");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("03_shared: scratch buffer too small") == 0);
  }
}

TEST_CASE("contract: a scratch off a 16-byte boundary is refused") {
  const Chapter& ch = ch03::chapter();
  const std::size_t n = 1'000'003;
  const std::size_t needed = ch.scratch_bytes(Op::sum, DType::f32, n);
  alignas(256) static unsigned char stand_in[64];
  int input_stand_in = 0, output_stand_in = 0;
  ReduceCall call;
  call.n = n;
  call.input = &input_stand_in;
  call.output = &output_stand_in;
  call.scratch_bytes = needed;
  for (std::size_t off : {1, 4, 8, 12}) {
    call.scratch = stand_in + off;
    try {
      ch.launch(call);
      FAIL("a call with a misaligned scratch was launched");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("scratch not aligned to 16 bytes") != std::string::npos);
    }
  }
}
