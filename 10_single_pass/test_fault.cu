// Chapter 10: a call interrupted by an error, and why it cannot leave a later call a bad counter.
//
// Every call leaves the ticket counter at 0 for the next (reduce.cuh): the last block resets it.
// A kernel that faults mid-way, after some blocks took tickets, ends with no last block, and the
// counter is left at whatever count it had reached. Would the next call on that scratch then count
// from there and never combine? It cannot meet that counter: a fault in a kernel is a sticky error.
// The context it happened in is unusable, every later CUDA call in it returns the same error, and
// the context goes with every allocation made in it, the scratch included. Work resumes only in a
// new context, with a new scratch whose counter Workspace zeroes again: CUDA documents a new
// process as the way back ("to continue using CUDA, the process must be terminated and
// relaunched", cudaErrorIllegalAddress); cudaDeviceReset destroys the context in this process, and
// the next call creates a new one. How far the faulting grid got does not matter (here every block
// faults at its first load, before any ticket). A call the launcher refuses on the host never
// launches and leaves the counter as it was (test.cu checks that).
//
// The program makes a good call; then a call whose input is a bogus device address, so that its
// blocks fault; checks that the error comes back from cudaDeviceSynchronize and stays (it is
// sticky: cudaGetLastError does not clear it, later calls return it again, even zeroing the counter
// again is refused); destroys everything it allocated, before the reset (a device pointer from the
// old context must not be freed in the new one: the address may belong to a new allocation there);
// calls cudaDeviceReset; and checks that a fresh upload and a fresh Workspace give the exact answer
// and leave the counter at 0. Where the reset does not bring the device back in this process, that
// check runs in a new process instead (this program, with --fresh-process).
//
// It faults on purpose, so it stays out of the compute-sanitizer runs: scripts/gpu_check.sh gives
// the sanitizer the chapter programs (no "_test" in their names) and named cases of listed test
// binaries, and this is neither. Its ctest entry runs alone (RUN_SERIAL): a fault ends only the
// context it happened in, but nothing else need share the GPU with one made on purpose.
//
// Exit codes: 0 passed, 1 a check failed, 77 no GPU.
#include <spawn.h>
#include <sys/wait.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <string>

#include "10_single_pass/chapter.cuh"
#include "cuda_check.hpp"
#include "runner.hpp"

extern char** environ;

using namespace red;

namespace {

constexpr std::size_t kN = std::size_t{1} << 22;
const void* const kBogusInput = reinterpret_cast<const void*>(0x100);  // no allocation is ever there

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok     " : "FAILED ", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

std::string error_name(cudaError_t e) { return cudaGetErrorName(e); }

// The counter's 4 bytes (ch10::Scratch puts it first), once the device is idle.
unsigned counter_of(const Workspace& ws) {
  unsigned counter = 0xFFFFFFFFu;
  CUDA_CHECK(cudaDeviceSynchronize());
  ws.scratch.download(&counter, sizeof counter);
  return counter;
}

// One f32 sum of small integers (exact in any order of additions) on `ws`: whether it is exact.
bool exact_call(const HostArray& host, const DeviceInput& in, const Workspace& ws) {
  const ReduceCall call = make_call(Op::sum, DType::f32, in.data, kN, ws, nullptr);
  const double got = decode_result(run_once(ch10::chapter(), call, ws), DType::f32, Op::sum).value;
  return got == reference(host, Op::sum).value;
}

// A fresh upload, a fresh Workspace (its counter zeroed), one call: exact, and the counter left at 0.
void check_fresh_call(const std::string& where) {
  const HostArray host = generate(DType::f32, kN, Dist::ints, 10);
  const DeviceInput in = upload(host);
  const Workspace ws(ch10::chapter(), Op::sum, DType::f32, kN);
  check(exact_call(host, in, ws), where + ": a fresh Workspace and upload give the exact sum");
  check(counter_of(ws) == 0, where + ": the counter is left at 0");
}

// The good call, then the faulting one, then the checks that its error is sticky. Everything
// allocated here is destroyed on return, before the reset: the DeviceBuffers' destructors call
// cudaFree in the dead context, which returns the error (unchecked there) and aborts nothing.
void fault_once() {
  const HostArray host = generate(DType::f32, kN, Dist::ints, 9);
  const DeviceInput in = upload(host);
  const Workspace ws(ch10::chapter(), Op::sum, DType::f32, kN);
  check(exact_call(host, in, ws), "a good call gives the exact sum");
  check(counter_of(ws) == 0, "and leaves the counter at 0");

  ReduceCall bogus = make_call(Op::sum, DType::f32, kBogusInput, kN, ws, nullptr);
  ch10::chapter().launch(bogus);  // queued: the launch itself is fine, its blocks fault on their first load
  const cudaError_t fault = cudaDeviceSynchronize();
  check(fault != cudaSuccess, "the call on a bogus input fails: cudaDeviceSynchronize returned " + error_name(fault));
  check(fault == cudaErrorIllegalAddress || fault == cudaErrorLaunchFailure,
        "with an error CUDA documents as leaving the process unusable (illegal address or launch failure)");
  check(cudaPeekAtLastError() == fault, "cudaPeekAtLastError returns it");
  check(cudaGetLastError() == fault, "cudaGetLastError returns it");
  // An ordinary error would be cleared now. This one is sticky: every later call returns it.
  check(cudaDeviceSynchronize() == fault, "cudaDeviceSynchronize returns it again after cudaGetLastError");
  check(cudaMemset(ws.scratch.get(), 0, ws.zeroed) == fault, "zeroing the counter again is refused with it");
  check(cudaPeekAtLastError() == fault, "cudaPeekAtLastError still returns it");
}

// Runs this program again with --fresh-process and returns its exit status (-1 when it could not).
int run_in_new_process() {
  char exe[] = "/proc/self/exe";
  char flag[] = "--fresh-process";
  char* args[] = {exe, flag, nullptr};
  pid_t child = 0;
  if (posix_spawn(&child, exe, nullptr, nullptr, args, environ) != 0) return -1;
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

int run(bool fresh_process) {
  if (fresh_process) {
    check_fresh_call("in a new process");
    return failures ? 1 : 0;
  }
  std::printf("10_single_pass_test_fault: f32 sum of n = 2^22 small integers, input %p for the faulting call\n",
              kBogusInput);
  fault_once();
  // CUDA documents a new process as the way back: where the reset is not enough in this process,
  // that is no failure, and the last check runs in a new process instead.
  const cudaError_t reset = cudaDeviceReset();
  std::printf("note    cudaDeviceReset returned %s\n", cudaGetErrorName(reset));
  bool checked = false;
  if (reset == cudaSuccess) {
    try {
      check_fresh_call("after cudaDeviceReset");
      checked = true;
    } catch (const CudaError& e) {
      std::printf("note    the device is not back in this process: %s\n", e.what());
    }
  }
  if (!checked) {
    const int status = run_in_new_process();
    check(status == 0,
          "in a new process, a fresh call gives the exact sum (exit status " + std::to_string(status) + ")");
  }
  std::printf("%s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!gpu_available()) {
    std::fprintf(stderr, "SKIPPED: %s needs a CUDA GPU and this machine has none; the host tests still run.\n",
                 argc > 0 ? argv[0] : "10_single_pass_test_fault");
    return 77;
  }
  const bool fresh_process = argc == 2 && std::string(argv[1]) == "--fresh-process";
  try {
    return run(fresh_process);
  } catch (const std::exception& e) {
    std::printf("FAILED  %s\n", e.what());
    return 1;
  }
}
