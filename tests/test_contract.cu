// The chapter contract's preconditions (common/chapter_builder.cuh), checked before anything
// reaches the GPU, so no GPU is needed: a call is refused with a message, never launched.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "03_shared/chapter.cuh"

using namespace red;

namespace {
// A call of chapter 03 on n = 1,000,003 floats with stand-ins for device pointers: the checks
// refuse the call before any is dereferenced. The message of its refusal, or "" if it was launched.
std::string refusal(const void* scratch, std::size_t scratch_bytes) {
  static int input_stand_in = 0, output_stand_in = 0;
  ReduceCall call;
  call.n = 1'000'003;
  call.input = &input_stand_in;
  call.output = &output_stand_in;
  call.scratch = const_cast<void*>(scratch);
  call.scratch_bytes = scratch_bytes;
  try {
    ch03::chapter().launch(call);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
std::size_t needed() { return ch03::chapter().scratch_bytes(Op::sum, DType::f32, 1'000'003); }
alignas(256) unsigned char scratch_stand_in[64];
}  // namespace

TEST_CASE("contract: a null scratch pointer is refused when the chapter needs scratch") {
  REQUIRE(needed() > 0);
  CHECK(refusal(nullptr, needed()).find("null scratch") != std::string::npos);
  // too small is refused first, whatever the pointer
  CHECK(refusal(nullptr, needed() - 1).find("03_shared: scratch buffer too small") == 0);
  CHECK(refusal(scratch_stand_in, needed() - 1).find("03_shared: scratch buffer too small") == 0);
}

TEST_CASE("contract: a scratch off a 16-byte boundary is refused") {
  for (std::size_t off : {1, 4, 8, 12})
    CHECK(refusal(scratch_stand_in + off, needed()) == "03_shared: scratch not aligned to 16 bytes");
}
