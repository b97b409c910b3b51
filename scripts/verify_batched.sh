#!/usr/bin/env bash
# A change to chapter 11's kernels, checked and measured on a GPU from a tree built elsewhere (for
# example on a machine without a GPU, with CUDA_ARCHS=90): chapter 11's test program, the four
# compute-sanitizer tools over its program (scripts/gpu_check.sh with SANITIZE_ONLY=11_), every
# chapter program run as a reader would (scripts/smoke_programs.sh), then the whole benchmark
# suite with its charts, tables and profile (scripts/run_benchmarks.sh --no-build), and the
# balanced segments kernel's choices timed one at a time (11_batched_segment_tuning). Everything
# lands in OUT, laid out as results/<gpu>/ is, and packed into OUT.tar.gz.
#
#   scripts/verify_batched.sh BUILD_DIR OUT [checks|bench|all]
#
# checks: the tests, the sanitizer run, the smoke run and the tuning experiment (a few minutes);
# bench: the benchmark with its charts and profile (the longest step); all (default): both.
#
# Needs only the executables of BUILD_DIR (the chapter programs, their tests, bench/), cmake not;
# shared libraries of the build machine that this one lacks (Google Benchmark's, from another
# distribution) can travel in BUILD_DIR/lib.
set -uo pipefail
cd "$(dirname "$0")/.."
export BUILD_DIR=${1:?usage: scripts/verify_batched.sh BUILD_DIR OUT}
OUT=${2:?usage: scripts/verify_batched.sh BUILD_DIR OUT}
step=${3:-all}
[[ $step == checks || $step == bench || $step == all ]] || { echo "verify_batched.sh: unknown step '$step'" >&2; exit 2; }
export PATH="$PATH:/usr/local/cuda/bin"
[[ -d "$BUILD_DIR/lib" ]] && export LD_LIBRARY_PATH="$(cd "$BUILD_DIR/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/tests"
rc=0

if [[ $step != bench ]]; then
  echo "== chapter 11's tests"
  { time "$BUILD_DIR/11_batched/11_batched_test"; echo "rc=$?"; } >"$OUT/tests/11_batched_test.log" 2>&1
  grep -E "test cases|assertions|^rc=" "$OUT/tests/11_batched_test.log"
  grep -q "^rc=0$" "$OUT/tests/11_batched_test.log" || rc=1

  echo "== compute-sanitizer over chapter 11's program"
  SANITIZE_ONLY=11_ scripts/gpu_check.sh "$OUT/sanitizer" sanitizer >"$OUT/sanitizer.log" 2>&1 || rc=1
  tail -3 "$OUT/sanitizer.log"
  mv "$OUT/sanitizer/sanitizer.txt" "$OUT/sanitizer_11_batched.txt" && rm -rf "$OUT/sanitizer" "$OUT/sanitizer.log"

  echo "== every chapter program, as a reader runs it"
  scripts/smoke_programs.sh "$BUILD_DIR" >"$OUT/programs.txt" 2>&1 || rc=1
  tail -1 "$OUT/programs.txt"

  echo "== the balanced segments kernel's choices, one at a time"
  mkdir -p "$OUT/experiments"
  "$BUILD_DIR/11_batched/experiments/11_batched_segment_tuning" >"$OUT/experiments/segment_tuning.md" || rc=1
  tail -6 "$OUT/experiments/segment_tuning.md"
fi

if [[ $step != checks ]]; then
  echo "== the benchmark"
  scripts/run_benchmarks.sh --no-setup --no-build --out "$OUT" >"$OUT/run_benchmarks_command.log" 2>&1 || rc=1
  tail -4 "$OUT/run_benchmarks_command.log"
fi

tar -czf "$OUT.tar.gz" --exclude='*.ncu-rep' -C "$OUT" . && echo "packed $OUT.tar.gz"
exit $rc
