#!/usr/bin/env bash
# The GPU checks, in one run, for a machine with an NVIDIA GPU:
#   1. build for sm_90 (override with CUDA_ARCHS) with Ninja,
#   2. run every test (host and GPU) with ctest,
#   3. run compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every chapter
#      program, for every op/dtype pair it supports, at sizes 1, 33, 1025 and one just over
#      its tile boundary, and over the special-value cases of the classic steps and solutions,
#   4. profile every chapter's kernels with Nsight Compute and measure the load latency
#      (scripts/profile_kernels.sh),
# then print a summary and exit non-zero if anything failed.
#
#   scripts/gpu_check.sh [LOG_DIR] [PHASE...]
#
# LOG_DIR (default build/gpu_check) receives the logs, sanitizer.txt, profile/ and latency.csv.
# PHASEs: build, tests, sanitizer, profile (default: all four). Each phase can run on its own (a few minutes each on an H200); a
# later phase reuses the earlier build. SANITIZE_ONLY="06_ 07_" limits the sanitizer
# to chapter programs whose names start with those prefixes, SANITIZE_TOOLS="memcheck racecheck"
# to those tools; SANITIZER_JOBS runs (default: one per core) go at once.
set -uo pipefail
cd "$(dirname "$0")/.."
LOG_DIR=${1:-build/gpu_check}
shift || true
phases=${*:-build tests sanitizer profile}
mkdir -p "$LOG_DIR"
export BUILD_DIR=${BUILD_DIR:-build-sm90} CUDA_ARCHS=${CUDA_ARCHS:-90}
failures=()
wants() { [[ " $phases " == *" $1 "* ]]; }

if wants build; then
  echo "== build ($BUILD_DIR, sm_$CUDA_ARCHS)"
  if ! scripts/build.sh >"$LOG_DIR/build.log" 2>&1; then
    tail -30 "$LOG_DIR/build.log"
    echo "FAILED: build"; exit 1
  fi
fi

if wants tests; then
  echo "== tests"
  # Every ctest entry, the label "large" (the cases above 2^31 elements) included. -V keeps every
  # test's own output (progress, doctest's summaries and MESSAGEs) in the log. CTEST_JOBS at a time
  # (default: one per core; a large entry counts as 8). CTEST_ARGS adds ctest options, e.g.
  # CTEST_ARGS="-L large" to run only the large cases.
  # shellcheck disable=SC2086
  if ! ctest --test-dir "$BUILD_DIR" -V -j "${CTEST_JOBS:-$(nproc)}" ${CTEST_ARGS:-} >"$LOG_DIR/ctest.log" 2>&1; then
    failures+=("ctest")
  fi
  grep -E "tests passed|tests failed|Test +#|\[doctest\] (test cases|assertions)|distinct bit|skipped:" \
    "$LOG_DIR/ctest.log" | tail -60
  # block_reduce called back-to-back through one shared buffer: racecheck proves the barrier.
  if [[ -x "$BUILD_DIR/06_warp_shuffle/06_warp_shuffle_test" ]]; then
    if compute-sanitizer --tool racecheck --error-exitcode 99 "$BUILD_DIR/06_warp_shuffle/06_warp_shuffle_test" \
      -tc="*back-to-back*" >"$LOG_DIR/racecheck_block_reduce.log" 2>&1; then
      echo "racecheck of block_reduce back-to-back: $(grep -E 'RACECHECK SUMMARY' "$LOG_DIR/racecheck_block_reduce.log")"
    else
      failures+=("racecheck block_reduce"); tail -20 "$LOG_DIR/racecheck_block_reduce.log"
    fi
  fi
fi

if wants sanitizer; then
echo "== compute-sanitizer"
# SANITIZE_TOOLS narrows the tools (default: all four), e.g. "memcheck racecheck synccheck".
tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
# The tile boundaries: 512 elements for chapters 01-04, 8192 for 05 and 06, 16384 for 07, 08 and
# 10 (past it even u8 inputs take two blocks: the second pass, or 10's ticket), CUB's own beyond that.
tile_of() { case $1 in 05_* | 06_*) echo 8192 ;; 07_* | 08_* | 10_*) echo 16384 ;; 09_*) echo 65536 ;; *) echo 512 ;; esac; }
jobs_file="$LOG_DIR/sanitizer_jobs.txt"
: >"$jobs_file"
for bin in "$BUILD_DIR"/[0-9][0-9]_*/[0-9][0-9]_*; do
  [[ -x "$bin" && "$bin" != *_test* ]] || continue
  chapter=$(basename "$bin")
  if [[ -n "${SANITIZE_ONLY:-}" ]]; then
    keep=0
    for prefix in $SANITIZE_ONLY; do [[ "$chapter" == "$prefix"* ]] && keep=1; done
    ((keep)) || continue
  fi
  pairs=$("$bin" --help | sed -n 's/^Supported op\/dtype pairs: //p' | tr -d ',')
  for pair in $pairs; do
    for n in 1 33 1025 $(( $(tile_of "$chapter") + 1 )); do
      for tool in $tools; do
        echo "$tool $bin ${pair%/*} ${pair#*/} $n" >>"$jobs_file"
      done
    done
  done
  # 07, 08 and 10 read a misaligned input in narrower pieces: starts 1, 3 and 5 elements past a
  # 16-byte boundary. And one input larger than L2, timed cold after the L2 scrub kernel.
  if [[ "$chapter" == 07_* || "$chapter" == 08_* || "$chapter" == 10_* ]]; then
    for pair in $pairs; do
      [[ "$pair" == sum/f32 || "$pair" == sum/f16 || "$pair" == sum/u8 || "$pair" == dot/* ]] || continue
      for offset in 1 3 5; do
        for tool in $tools; do
          echo "$tool $bin ${pair%/*} ${pair#*/} 40001 $offset" >>"$jobs_file"
        done
      done
    done
    cold=$([[ "$chapter" == 08_* ]] && echo "dot f32" || echo "sum f32")
    echo "memcheck $bin $cold 16777217 0" >>"$jobs_file"
  fi
done
# A chapter program runs its main kernel only. Chapter 08's other steps (dot_shared,
# dot_coarsened, dot_fma) and its library baselines run through its test binary's special-value
# case (up to 100,003 elements each).
steps_test="$BUILD_DIR/08_dot_product/08_dot_product_test"
if [[ -x "$steps_test" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 08_"* ) ]]; then
  for tool in $tools; do
    echo "$tool $steps_test test-case *NaN* 0" >>"$jobs_file"
  done
fi
# Chapter 10's variants (the classic fences, grid.sync in a cooperative launch, cooperative groups'
# tree, programmatic launch) run through its test binary's case at the sanitizer's sizes.
variants_test="$BUILD_DIR/10_single_pass/10_single_pass_test"
if [[ -x "$variants_test" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 10_"* ) ]]; then
  for tool in $tools; do
    echo "$tool $variants_test test-case *variants*sanitizer* 0" >>"$jobs_file"
  done
fi
# Chapter 11's program takes shapes, not n: its mappings at small shapes (a thread, a group, a block
# and split blocks per row; unaligned rows; tiled columns in one chunk and in several, with element
# and 16-byte loads (8 rows a trip for 4-byte elements and accumulators, else 4, and 8 for fewer
# than 128 rows), and naive columns), each run checking every result. Its job lines carry the
# program's arguments after "args". The program's input always starts on a 16-byte boundary; the
# mappings' other loads run through the test binary's case of inputs off one.
batched="$BUILD_DIR/11_batched/11_batched"
batched_test="$BUILD_DIR/11_batched/11_batched_test"
if [[ -x "$batched_test" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 11_"* ) ]]; then
  # ... and one scratch serving calls of every shape in turn (split rows, chunked columns)
  for tool in $tools; do
    echo "$tool $batched_test test-case *off?a?16-byte?boundary* 0" >>"$jobs_file"
    echo "$tool $batched_test test-case *one?scratch* 0" >>"$jobs_file"
  done
fi
# Chapter 12's segments: the balanced kernel's loads into registers and element by element (inputs
# off a 16-byte boundary), and calls of other sizes in turn on one scratch.
segmented_test="$BUILD_DIR/12_segmented/12_segmented_test"
if [[ -x "$segmented_test" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 12_"* ) ]]; then
  for tool in $tools; do
    echo "$tool $segmented_test test-case *off?a?16-byte?boundary* 0" >>"$jobs_file"
    echo "$tool $segmented_test test-case *one?scratch* 0" >>"$jobs_file"
  done
fi
# Chapter 13: calls of different n in turn on one scratch (the counters and the vote's stop flag
# left zero by every call, a grid of one block included).
custom_test="$BUILD_DIR/13_custom_ops/13_custom_ops_test"
if [[ -x "$custom_test" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 13_"* ) ]]; then
  for tool in $tools; do
    echo "$tool $custom_test test-case *one?scratch* 0" >>"$jobs_file"
  done
fi
if [[ -x "$variants_test" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 10_"* ) ]]; then
  for tool in $tools; do
    echo "$tool $variants_test test-case *refuses* 0" >>"$jobs_file"
  done
fi
if [[ -x "$batched" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 11_"* ) ]]; then
  for shape in "--rows 1025 --cols 8" "--rows 33 --cols 33" "--rows 3 --cols 70000" "--rows 77 --cols 13 --stride 18" \
    "--rows 33 --cols 1000 --strategy block_per_row" "--rows 1025 --cols 33 --axis 0" \
    "--rows 33 --cols 1025 --stride 1030 --axis 0" "--rows 4000 --cols 64 --axis 0" "--rows 100 --cols 64 --axis 0" \
    "--rows 300 --cols 40 --axis 0 --strategy columns_naive" "--rows 1025 --cols 33 --axis 0 --kernels teaching" \
    "--rows 4000 --cols 64 --axis 0 --kernels teaching" "--rows 1025 --cols 8 --kernels teaching" \
    "--rows 3 --cols 70000 --kernels teaching"; do
    for pair in sum/f32 max/f16 argmax/bf16 sum/bf16 argmax/f32; do
      for tool in $tools; do
        echo "$tool $batched args $shape --op ${pair%/*} --dtype ${pair#*/} --repeat 1" >>"$jobs_file"
      done
    done
  done
fi
# Chapter 12's program: segments balanced over one and hundreds of warps, and the naive mapping.
segmented="$BUILD_DIR/12_segmented/12_segmented"
if [[ -x "$segmented" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 12_"* ) ]]; then
  for shape in "--segment-dist uniform --segment-count 1000 --segment-mean 32" \
    "--segment-dist heavy --segment-count 1000 --segment-mean 64" \
    "--segment-dist heavy --segment-count 3000 --segment-mean 256" \
    "--segment-dist uniform --segment-count 1000 --segment-mean 32 --strategy naive" \
    "--segment-dist heavy --segment-count 1000 --segment-mean 64 --kernels teaching" \
    "--segment-dist uniform --segment-count 1000 --segment-mean 32 --kernels teaching"; do
    for pair in sum/f32 max/f16 argmax/bf16 sum/bf16 argmax/f32; do
      for tool in $tools; do
        echo "$tool $segmented args $shape --op ${pair%/*} --dtype ${pair#*/} --repeat 1" >>"$jobs_file"
      done
    done
  done
fi
# Chapter 13: every operator through the kernels it may take (the automatic one, and the ordered
# kernel; any/all also the vote kernel with its early exit and the generic kernels), at sizes
# below one block's tile, across many blocks, and just past a whole trip, each run checked.
custom="$BUILD_DIR/13_custom_ops/13_custom_ops"
if [[ -x "$custom" && ( -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" 13_"* ) ]]; then
  for op in argmin minmax product log_product scaled_product lse lse_naive mean_variance mean_variance_naive \
    sum_of_squares affine any all; do
    kernels="automatic ordered"
    [[ $op == any || $op == all ]] && kernels="votes early_exit reordering ordered"
    # the plain product on data that keeps it in float's range (on around_one it overflows by
    # design, and the program reports that as a failed check); the safe products where it would not
    dist=normal
    [[ $op == product ]] && dist=near_one
    [[ $op == *_product ]] && dist=around_one
    for kernel in $kernels; do
      sizes="33 1025 100003"
      # the ordered kernel's regions of several steps a warp (prefetching the next step), which the
      # smaller sizes never reach (a step or none a warp): a million elements, a few operators
      [[ $kernel == ordered && " affine lse mean_variance argmin any " == *" $op "* ]] && sizes="$sizes 1000003"
      for n in $sizes; do
        for tool in $tools; do
          echo "$tool $custom args --op $op --kernel $kernel --n $n --dist $dist --repeat 1" >>"$jobs_file"
        done
      done
    done
  done
fi
# Harris's steps (03_shared/variants.cuh) and the exercises' solutions run through their test
# binaries' small cases: the special values (up to 100,003 elements) and the sanitizer's sizes.
# SANITIZE_ONLY="solutions" runs these alone.
if [[ -z "${SANITIZE_ONLY:-}" || " $SANITIZE_ONLY " == *" solutions "* ]]; then
  # doctest's -tc: '*' and '?' are wildcards and a comma separates filters, so "NaN, inf" is
  # matched as NaN??inf; no pattern holds a space (the job file splits on them).
  for job in "03_shared/03_shared_test:*sanitizer*" "solutions/solution_03_test:*sanitizer*" \
    "solutions/solution_04_test:*NaN??infinities*" "solutions/solution_05_test:*NaN??infinities*" \
    "solutions/solution_06_test:*NaN??infinities*" "solutions/solution_07_test:*NaN??infinities*" \
    "solutions/solution_07_test:*counter*" "solutions/solution_08_test:*NaN*"; do
    for tool in $tools; do
      echo "$tool $BUILD_DIR/${job%%:*} test-case ${job#*:} 0" >>"$jobs_file"
    done
  done
fi
run_one() {  # tool binary op dtype n [offset]   (or: tool test-binary test-case PATTERN 0; or: tool binary args ARGS...)
  local log
  if [[ $3 == args ]]; then
    log=$(compute-sanitizer --tool "$1" --error-exitcode 99 "$2" "${@:4}" 2>&1)
    local rc=$?
    printf '%-10s %-22s %s rc=%-3s %s\n' "$1" "$(basename "$2")" "${*:4}" "$rc" \
      "$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" <<<"$log" | tail -1)"
    # 13_custom_ops exits 5 for a product it could not check (its bound too loose at that n): no
    # error of the sanitizer's, nor of the program's
    [[ $rc -eq 0 || $rc -eq 5 ]] || { echo "---- $*"; echo "$log" | tail -20; } >>"$LOG_DIR/sanitizer_failures.log"
    return
  fi
  if [[ $3 == test-case ]]; then
    log=$(compute-sanitizer --tool "$1" --error-exitcode 99 "$2" -tc="$4" 2>&1)
  else
    log=$(compute-sanitizer --tool "$1" --error-exitcode 99 "$2" --op "$3" --dtype "$4" --n "$5" --offset "${6:-0}" \
      --repeat 1 2>&1)
  fi
  local rc=$?
  local summary
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" <<<"$log" | tail -1)
  printf '%-10s %-22s %-7s %-5s n=%-8s offset=%-2s rc=%-3s %s\n' "$1" "$(basename "$2")" "$3" "$4" "$5" "${6:-0}" "$rc" \
    "${summary:-no summary}"
  [[ $rc -eq 0 ]] || { echo "---- $*"; echo "$log" | tail -20; } >>"$LOG_DIR/sanitizer_failures.log"
}
export -f run_one
export LOG_DIR
# Each run's line is written as it ends (a run stopped part way keeps the lines of those done),
# then sorted.
xargs -P "${SANITIZER_JOBS:-$(nproc)}" -L 1 bash -c 'run_one "$@"' _ <"$jobs_file" >"$LOG_DIR/sanitizer_runs_unsorted.txt"
sort "$LOG_DIR/sanitizer_runs_unsorted.txt" >"$LOG_DIR/sanitizer_runs.txt" && rm -f "$LOG_DIR/sanitizer_runs_unsorted.txt"
total=$(wc -l <"$LOG_DIR/sanitizer_runs.txt")
bad=$(grep -vcE "rc=(0|5) " "$LOG_DIR/sanitizer_runs.txt" || true)
{
  echo "compute-sanitizer: $total runs (${tools// /, }), $bad with errors"
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  echo
  cat "$LOG_DIR/sanitizer_runs.txt"
} >"$LOG_DIR/sanitizer.txt"
head -2 "$LOG_DIR/sanitizer.txt"
[[ "$bad" -eq 0 ]] || failures+=("compute-sanitizer ($bad runs)")
fi

if wants profile; then
  # Nsight Compute's counters per chapter and the load latency (scripts/profile_kernels.sh), then
  # the tables and the chart made of them (the lessons job reads bench.csv beside them).
  echo "== profile"
  if scripts/profile_kernels.sh "$BUILD_DIR" "$LOG_DIR" >"$LOG_DIR/profile.log" 2>&1; then
    tail -3 "$LOG_DIR/profile.log"
  else
    failures+=("profile"); tail -20 "$LOG_DIR/profile.log"
  fi
fi

echo "== summary"
if ((${#failures[@]})); then
  echo "FAILED: ${failures[*]} (logs in $LOG_DIR)"; exit 1
fi
echo "ALL REQUESTED GPU CHECKS PASSED ($phases; logs in $LOG_DIR)"
