// main() of every GPU test binary: skip visibly (ctest's SKIP_RETURN_CODE 77) without a GPU,
// report progress as each test case starts (test_support.hpp), and fail a run that ran no test
// case: a ctest entry whose filter (--test-suite=large, say) matches nothing would otherwise pass
// while testing nothing.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "cuda_check.hpp"
#include "test_support.hpp"

namespace {
int test_cases_started = 0;

// A doctest listener: it announces and counts each test case; doctest's own reporter does the rest.
struct ProgressListener : doctest::IReporter {
  explicit ProgressListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& tc) override {
    ++test_cases_started;
    red::test::test_case_started(tc.m_name);
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
}  // namespace
REGISTER_LISTENER("progress", 1, ProgressListener);

int main(int argc, char** argv) {
  if (!red::gpu_available()) {
    std::fprintf(stderr, "SKIPPED: %s needs a CUDA GPU and this machine has none; the host tests still run.\n",
                 argc > 0 ? argv[0] : "this test");
    return 77;
  }
  red::test::set_program_name(argc > 0 ? argv[0] : nullptr);
  doctest::Context context(argc, argv);
  const int status = context.run();
  if (context.shouldExit()) return status;  // --help, --list-test-cases, --count and the like
  if (status == 0 && test_cases_started == 0) {
    std::fprintf(stderr, "FAILED: %s ran no test case: its filters match none\n", argc > 0 ? argv[0] : "this test");
    return 1;
  }
  return status;
}
