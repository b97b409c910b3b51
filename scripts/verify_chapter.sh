#!/usr/bin/env bash
# A change to one chapter's kernels, checked and measured on a GPU from a tree built elsewhere (for
# example on a machine without a GPU, with CUDA_ARCHS=90): the chapter's test program (and its
# exercise answer's, solutions/solution_NN_test, where there is one), the four
# compute-sanitizer tools over its program (scripts/gpu_check.sh with SANITIZE_ONLY=NN_), every
# chapter program run as a reader would (scripts/smoke_programs.sh), the chapter's experiment
# programs (BUILD_DIR/NN_name/experiments/, each writing a Markdown table), then the whole
# benchmark suite with its charts, tables and profile (scripts/run_benchmarks.sh --no-build).
# Everything lands in OUT, laid out as results/<gpu>/ is, and packed into OUT.tar.gz.
#
#   scripts/verify_chapter.sh CHAPTER BUILD_DIR OUT [checks|bench|all]      (CHAPTER: e.g. 11_batched)
#
# checks: the tests, the sanitizer run, the smoke run and the experiments (a few minutes); bench:
# the benchmark with its charts and profile (the longest step); all (default): both.
#
# Needs only the executables of BUILD_DIR (the chapter programs, their tests, bench/), cmake not;
# shared libraries of the build machine that this one lacks (Google Benchmark's, from another
# distribution) can travel in BUILD_DIR/lib.
set -uo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/verify_chapter.sh CHAPTER BUILD_DIR OUT [checks|bench|all]"
chapter=${1:?$usage}
export BUILD_DIR=${2:?$usage}
OUT=${3:?$usage}
step=${4:-all}
[[ $step == checks || $step == bench || $step == all ]] || { echo "verify_chapter.sh: unknown step '$step'" >&2; exit 2; }
[[ -x "$BUILD_DIR/$chapter/${chapter}_test" ]] || { echo "verify_chapter.sh: no $BUILD_DIR/$chapter/${chapter}_test" >&2; exit 2; }
export PATH="$PATH:/usr/local/cuda/bin"
[[ -d "$BUILD_DIR/lib" ]] && export LD_LIBRARY_PATH="$(cd "$BUILD_DIR/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/tests"
rc=0

if [[ $step != bench ]]; then
  echo "== $chapter's tests"
  { time "$BUILD_DIR/$chapter/${chapter}_test"; echo "rc=$?"; } >"$OUT/tests/${chapter}_test.log" 2>&1
  grep -E "test cases|assertions|^rc=" "$OUT/tests/${chapter}_test.log"
  grep -q "^rc=0$" "$OUT/tests/${chapter}_test.log" || rc=1
  solution="$BUILD_DIR/solutions/solution_${chapter%%_*}_test"
  if [[ -x "$solution" ]]; then
    echo "== $chapter's exercise answer"
    { time "$solution"; echo "rc=$?"; } >"$OUT/tests/solution_${chapter%%_*}_test.log" 2>&1
    grep -E "test cases|assertions|^rc=" "$OUT/tests/solution_${chapter%%_*}_test.log"
    grep -q "^rc=0$" "$OUT/tests/solution_${chapter%%_*}_test.log" || rc=1
  fi

  echo "== compute-sanitizer over $chapter's program"
  SANITIZE_ONLY="${chapter%%_*}_" scripts/gpu_check.sh "$OUT/sanitizer" sanitizer >"$OUT/sanitizer.log" 2>&1 || rc=1
  tail -3 "$OUT/sanitizer.log"
  # the failing runs' last lines, if any, beside the summary (the rest of the folder goes)
  [[ -s "$OUT/sanitizer/sanitizer_failures.log" ]] && mv "$OUT/sanitizer/sanitizer_failures.log" "$OUT/sanitizer_${chapter}_failures.log"
  mv "$OUT/sanitizer/sanitizer.txt" "$OUT/sanitizer_$chapter.txt" && rm -rf "$OUT/sanitizer" "$OUT/sanitizer.log"

  echo "== every chapter program, as a reader runs it"
  scripts/smoke_programs.sh "$BUILD_DIR" >"$OUT/programs.txt" 2>&1 || rc=1
  tail -1 "$OUT/programs.txt"

  for experiment in "$BUILD_DIR/$chapter"/experiments/*; do
    [[ -x "$experiment" ]] || continue
    name=$(basename "$experiment")
    echo "== experiment $name"
    mkdir -p "$OUT/experiments"
    "$experiment" >"$OUT/experiments/${name#${chapter}_}.md" || rc=1
    tail -6 "$OUT/experiments/${name#${chapter}_}.md"
  done
fi

if [[ $step != checks ]]; then
  echo "== the benchmark"
  scripts/run_benchmarks.sh --no-setup --no-build --out "$OUT" >"$OUT/run_benchmarks_command.log" 2>&1 || rc=1
  tail -4 "$OUT/run_benchmarks_command.log"
fi

tar -czf "$OUT.tar.gz" --exclude='*.ncu-rep' -C "$OUT" . && echo "packed $OUT.tar.gz"
exit $rc
