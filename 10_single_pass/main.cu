// Chapter 10's program: one reduction on the GPU, checked and timed. common/harness.hpp lists
// its flags, its report and its exit codes; the Program there does everything but the call itself.
#include "10_single_pass/chapter.cuh"
#include "harness.hpp"

int main(int argc, char** argv) {
  red::Program program(ch10::chapter(), argc, argv);  // the flags, parsed and checked
  if (program.stopped()) return program.exit_code();  // --help, or a bad value (exit 2)
  try {
    // The chapter's table (chapter.cuh) holds, for the flags' op and dtype, its scratch_bytes and
    // ch10::launch<Op>, instantiated for that operator: main() calls them itself.
    const red::Launcher lesson = program.launcher();
    const red::ReduceCall call = program.call(lesson.scratch_bytes(program.n()));  // input, output, scratch
    lesson.launch(call);        // queues the kernels on call.stream
    program.read_result(call);  // waits, copies the result back
    program.check();            // against the host's float64 reference
    program.time();             // the same launch, back to back
    return program.report();    // the report or one JSON line; the exit code
  } catch (...) {
    return program.failed();  // no GPU (exit 3), a CUDA error (4), a request too large (2)
  }
}
