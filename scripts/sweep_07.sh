#!/usr/bin/env bash
# Chapter 07's design sweep on one GPU: every pass-1 variant (vectors in flight per thread, L2
# prefetch hint) against cub::DeviceReduce::Sum, f32 sum at 2^26, 2^28 and 2^30, plus chapter 08's
# dot product against cublasSdot and CUB at 2^26 and 2^28. Each size is its own benchmark run with
# REPS repetitions (default 5) in random interleaving, so slow drifts of the machine hit every
# kernel alike; the summary gives each kernel's median of the repetitions' medians, its spread,
# and the ratio to the library in the same run.
#
#   scripts/sweep_07.sh OUT_DIR        (after scripts/build.sh; BUILD_DIR as there)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/sweep_07.sh OUT_DIR}
mkdir -p "$out"
bench="${BUILD_DIR:-build}/bench/reduction_bench"
reps=${REPS:-5}
run() {  # name filter
  "$bench" --benchmark_filter="$2" --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
    --benchmark_out="$out/$1.json" --benchmark_out_format=json >"$out/$1.log" 2>&1
}
for log2n in 26 28 30; do
  n=$((1 << log2n))
  run "sum_2^$log2n" "^(07_two_pass/reduce_two_pass[a-z0-9_]*|09_cub_comparison/cub_sum)/sum/f32/$n/"
done
for log2n in 26 28; do
  n=$((1 << log2n))
  run "dot_2^$log2n" "^08_dot_product/[a-z0-9_]*/dot/f32/$n/"
done
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, pathlib, statistics, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    runs = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") == "iteration" and "gbps" in b:
            runs.setdefault(b["run_name"].split("/")[1], []).append(b["gbps"])
    base = next((k for k in ("cub_sum", "cublas_sdot") if k in runs), None)
    ref = statistics.median(runs[base]) if base else None
    print(f"== {path.stem} (ratio to {base}; GB/s: median of the repetitions, min-max)")
    for k, v in sorted(runs.items(), key=lambda kv: -statistics.median(kv[1])):
        m = statistics.median(v)
        print(f"  {k:36s} {m:8.1f}  {min(v):8.1f}-{max(v):8.1f}  x{m / ref:.3f}" if ref else f"  {k:36s} {m:8.1f}")
PY
