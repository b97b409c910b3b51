#!/usr/bin/env bash
# The main job: set up, build, benchmark every chapter and the CUB baseline, then write
# results/<gpu>/ (bench.json, bench.csv, machine.txt) and draw the charts and tables; where
# Nsight Compute is installed, also profile the chapters' kernels and measure the load latency
# (scripts/profile_kernels.sh) for the bytes-in-flight chart and the profiler tables.
#
#   scripts/run_benchmarks.sh [--no-setup] [--no-build] [--filter REGEX] [--out DIR]
#
# --no-build benchmarks the binary already in $BUILD_DIR (default build/), e.g. one built elsewhere.
#
# Without a GPU it builds, then exits with code 3 and says where the published results are.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
setup=1 build=1 filter="" out=""
while (($#)); do
  case $1 in
    --no-setup) setup=0 ;;
    --no-build) build=0 ;;
    --filter) filter=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "run_benchmarks.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

started=$(date +%s)
((setup)) && scripts/setup.sh
if ((build)); then
  source scripts/cuda_archs.sh
  echo "== build (${BUILD_DIR:-build}, sm_$CUDA_ARCHS: $CUDA_ARCHS_WHY)"
  scripts/build.sh >"${TMPDIR:-/tmp}/reduction_bench_build.log" 2>&1 ||
    { tail -40 "${TMPDIR:-/tmp}/reduction_bench_build.log"; exit 1; }
  echo "== built in $(($(date +%s) - started)) s since the start"
fi
bench="${BUILD_DIR:-build}/bench/reduction_bench"

set +e
machine=$("$bench" --machine-info 2>&1)
rc=$?
set -e
if ((rc != 0)); then
  echo "$machine" >&2
  echo "run_benchmarks.sh: built everything, but there is no usable CUDA GPU to benchmark on." >&2
  echo "The published reference run is in results/h200/ (bench.csv, tables.md and the charts)." >&2
  exit 3
fi
folder=$(sed -n 's/^results_folder: //p' <<<"$machine")
out=${out:-results/$folder}
mkdir -p "$out"
grep -v '^results_folder:' <<<"$machine" >"$out/machine.txt"
echo "== benchmark on $(sed -n 's/^gpu: //p' "$out/machine.txt") -> $out"
args=(--benchmark_out="$out/bench.json" --benchmark_out_format=json)
[[ -n "$filter" ]] && args+=(--benchmark_filter="$filter")
bench_started=$(date +%s)
"$bench" "${args[@]}"
seconds=$(( $(date +%s) - bench_started ))
# The suite's own length (the benchmark binary, not the build), recorded with the results.
echo "benchmark_seconds: $seconds" >>"$out/machine.txt"
echo "== the benchmark took $seconds s"
# Chapter 13's early exit stops before the end of its input: Nsight Compute counts what it reads
# (without ncu its rows are left out of bench.csv, for want of a GB/s).
rm -f "$out/early_exit_bytes.csv"
if grep -q '"reads_unknown"' "$out/bench.json"; then
  echo "== the early exit's reads (scripts/early_exit_bytes.sh)"
  scripts/early_exit_bytes.sh "${BUILD_DIR:-build}" "$out" || rm -f "$out/early_exit_bytes.csv"
fi
echo "== tables and charts"
python3 -m tools csv "$out/bench.json" "$out/bench.csv"
python3 -m tools charts "$out"
# The headline chart and the lessons' tables need Nsight Compute's counters and the load latency.
echo "== profile and load latency (scripts/profile_kernels.sh)"
if scripts/profile_kernels.sh "${BUILD_DIR:-build}" "$out" >"$out/profile_run.log" 2>&1; then
  tail -2 "$out/profile_run.log"
  python3 -m tools lessons tables "$out"
else
  tail -5 "$out/profile_run.log"
  echo "run_benchmarks.sh: no profile (see $out/profile_run.log): the bytes-in-flight chart and the" \
    "profiler tables are not drawn; everything else is."
fi
echo "done: $out (run_benchmarks.sh took $(($(date +%s) - started)) s: set-up, build, benchmark and charts)"
