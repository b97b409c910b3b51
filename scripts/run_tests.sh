#!/usr/bin/env bash
# The README's test command: sets up what is missing, builds (for the GPU in this machine only, or
# sm_90 where there is none; CUDA_ARCHS overrides) and runs every test with ctest, as many at a
# time as there are cores: the host tests and the results tooling always, the GPU tests where there is a GPU
# (elsewhere ctest lists them as "Skipped", each with the reason).
#
#   scripts/run_tests.sh [--with-large]      (BUILD_DIR: default build-ci)
#
# The cases above 2^31 elements carry the ctest label "large" and are left to
# scripts/gpu_check.sh; run them alone with `ctest --test-dir build-ci -L large`, or pass
# --with-large to run them here too (they need about 17 GB of host memory, and skip with a message
# on a GPU with less than 26 GB free, 52 GB for the dot products).
#
# Every test binary reports its progress (test case, op, dtype, n) as it goes; ctest's bookkeeping
# lines are filtered out. The unfiltered log is $BUILD_DIR/ctest.log.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
select_tests=(-LE large)
case "${1:-}" in
  --with-large) select_tests=() ;;
  "") ;;
  *) echo "run_tests.sh: unknown argument '$1' (the only option is --with-large)" >&2; exit 2 ;;
esac
started=$(date +%s)
scripts/setup.sh
export BUILD_DIR=${BUILD_DIR:-build-ci}
source scripts/cuda_archs.sh
echo "== build ($BUILD_DIR, sm_$CUDA_ARCHS: $CUDA_ARCHS_WHY)"
scripts/build.sh
echo "== tests ($(nproc) at a time)"
# ctest -V shows each test's output as it comes ("N: ..." for test number N); the filter keeps the
# progress lines, doctest's summaries and failures, and ctest's results.
set +e
ctest --test-dir "$BUILD_DIR" -j "$(nproc)" -V ${select_tests[@]+"${select_tests[@]}"} 2>&1 |
  tee "$BUILD_DIR/ctest.log" |
  grep --line-buffered -v -E '^(UpdateCTestConfiguration|Constructing a list|Done constructing|Updating test list|Added [0-9]+ tests to meet|Checking test dependency|test [0-9]+$)|^[0-9]+: (Test command:|Working Directory:|Test timeout computed|Environment variables:|\[doctest\] (doctest version|run with))|^[0-9]+: =+$|^$'
status=${PIPESTATUS[0]}
set -e
echo "== run_tests.sh took $(($(date +%s) - started)) s (set-up, build and tests)"
exit "$status"
