#!/usr/bin/env bash
# The GPU verification of a change, cut into steps of a few minutes each (a later step reuses the
# build of an earlier one). Each step writes its logs into OUT and packs them into
# OUT/<step>.tar.gz, one file to keep.
#
#   scripts/device_run.sh STEP OUT
#     tests      build for sm_90, every ctest entry, the label "large" included (CTEST_JOBS at a
#                time, default one per core; CTEST_ARGS selects, e.g. "-L large"), racecheck of
#                block_reduce
#     sanitizer  compute-sanitizer over every chapter program and op/dtype pair, the smoke run
#                of every chapter program (scripts/smoke_programs.sh)
#     bench      the whole benchmark suite and the charts (scripts/run_benchmarks.sh --no-setup),
#                then 07 and CUB timed four ways (reduction_bench --timing-methods) and what a
#                misaligned start costs (scripts/alignment_cost.sh) and chapter 10's trees in SASS
#                (scripts/sass_compare.py) and chapter 10's one call against the bound of a kernel
#                that only reads (10_single_pass_one_call_bound), into bench/experiments/;
#                the solutions' own outputs into bench/solutions/; chapter 10's memory-model
#                evidence, the message-passing litmus test and racecheck over the warp-synchronous
#                trees (scripts/memory_model_outputs.sh), into bench/memory_model/ (run_benchmarks.sh
#                itself profiles the kernels and measures the load latency where ncu is installed)
#     all        the three, in that order
#
# The same steps run anywhere with an NVIDIA GPU, cmake, ninja, CLI11, doctest, Google Benchmark
# and compute-sanitizer (scripts/setup.sh installs the packages).
set -uo pipefail
cd "$(dirname "$0")/.."
step=${1:?usage: scripts/device_run.sh tests|sanitizer|bench|all OUT}
OUT=${2:?usage: scripts/device_run.sh tests|sanitizer|bench|all OUT}
mkdir -p "$OUT"
export BUILD_DIR=${BUILD_DIR:-build-sm90} CUDA_ARCHS=${CUDA_ARCHS:-90}
[[ -d .deps/usr/lib/x86_64-linux-gnu ]] && export LD_LIBRARY_PATH="$PWD/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
rc=0

pack() {  # name folder
  tar -czf "$OUT/$1.tar.gz" -C "$2" . && echo "packed $OUT/$1.tar.gz"
}

if [[ $step == tests || $step == all ]]; then
  scripts/gpu_check.sh "$OUT/tests" build tests || rc=1
  pack tests "$OUT/tests"
fi
if [[ $step == sanitizer || $step == all ]]; then
  [[ -x "$BUILD_DIR/bench/reduction_bench" ]] || scripts/gpu_check.sh "$OUT/sanitizer" build || exit 1
  scripts/gpu_check.sh "$OUT/sanitizer" sanitizer || rc=1
  scripts/smoke_programs.sh "$BUILD_DIR" >"$OUT/sanitizer/programs.txt" 2>&1 || rc=1
  tail -1 "$OUT/sanitizer/programs.txt"
  rm -f "$OUT/sanitizer/sanitizer_jobs.txt" "$OUT/sanitizer/build.log"
  pack sanitizer "$OUT/sanitizer"
fi
if [[ $step == bench || $step == all ]]; then
  scripts/run_benchmarks.sh --no-setup --out "$OUT/bench" >"$OUT/bench_run.log" 2>&1 || rc=1
  tail -5 "$OUT/bench_run.log"
  mv "$OUT/bench_run.log" "$OUT/bench/"
  mkdir -p "$OUT/bench/experiments"
  "$BUILD_DIR/bench/reduction_bench" --timing-methods >"$OUT/bench/experiments/timing_methods.md" 2>&1 || rc=1
  scripts/alignment_cost.sh "$BUILD_DIR" >"$OUT/bench/experiments/alignment_cost.md" 2>&1 || rc=1
  scripts/sass_compare.py "$BUILD_DIR/bench/reduction_bench" "$OUT/bench/experiments/sass_cooperative_groups.md" || rc=1
  "$BUILD_DIR/10_single_pass/experiments/10_single_pass_one_call_bound" >"$OUT/bench/experiments/one_call_bound.md" || rc=1
  cat "$OUT/bench/experiments/timing_methods.md" "$OUT/bench/experiments/alignment_cost.md" \
    "$OUT/bench/experiments/one_call_bound.md"
  scripts/solution_outputs.sh "$BUILD_DIR" "$OUT/bench/solutions" || rc=1
  scripts/memory_model_outputs.sh "$BUILD_DIR" "$OUT/bench/memory_model" || rc=1
  pack bench "$OUT/bench"
fi
exit $rc
