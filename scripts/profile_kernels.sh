#!/usr/bin/env bash
# The lessons' counted causes, measured: Nsight Compute over one call of each chapter's kernels
# (f32 sum, n = 2^28: 1 GiB, far beyond L2), and the load latency that Little's law needs.
#
#   scripts/profile_kernels.sh BUILD_DIR OUT_DIR
#
# Writes into OUT_DIR:
#   profile/cases.txt      reduction_bench --profile's output: which case each profiled call is
#   profile/kernels.csv    Nsight Compute's raw page (base units), one row per kernel
#   profile/metrics.txt    the metrics asked for, and those this ncu does not know (left out)
#   latency.csv            bench/pointer_chase: the latency of one load from L2 and from DRAM
# then `python3 -m tools lessons tables` turns them into profile.md, bytes_in_flight.md and its chart.
# PROFILE_FILTER (a regular expression over the benchmark's labels) selects other cases.
#
# ncu runs with --clock-control none, so the GPU keeps the clocks the benchmark runs at; its
# replays (every kernel runs once per group of counters) restore the memory the kernel writes.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:?usage: scripts/profile_kernels.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: scripts/profile_kernels.sh BUILD_DIR OUT_DIR}
mkdir -p "$OUT/profile"

NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [[ -z $NCU ]]; then
  echo "profile_kernels.sh: Nsight Compute (ncu) not found on the PATH, in /usr/local/cuda/bin or /opt/nvidia" >&2
  exit 3
fi
BENCH="$BUILD_DIR/bench/reduction_bench"
[[ -x $BENCH && -x $BUILD_DIR/bench/pointer_chase ]] || { echo "profile_kernels.sh: build $BUILD_DIR first" >&2; exit 2; }

"$BUILD_DIR/bench/pointer_chase" >"$OUT/latency.csv" || exit 1
cat "$OUT/latency.csv"

# Every chapter's f32 sum at 2^28, its variants (05's coarsening, 07's unroll depths and loads,
# Harris's steps on 03) and chapter 03's exercise; chapter 08's f32 dot products at 2^28.
# (Google Benchmark appends "/iterations:1/manual_time" to every name: the pattern ends in '/'.)
FILTER=${PROFILE_FILTER:-'^(((0[1-79]|10)_[a-z_]+|solution_03)/[a-z0-9_]+/sum|08_dot_product/[a-z0-9_]+/dot)/f32/268435456/'}

# The metrics tools/profile.py reads, less those this version of ncu does not know.
# (If the query itself fails, every metric is asked for and ncu names any it does not know.)
known=$("$NCU" --query-metrics --chip "${NCU_CHIP:-gh100}" 2>/dev/null | awk '{print $1}')
metrics=()
: >"$OUT/profile/metrics.txt"
while read -r m; do
  base=${m%%.*}
  # launch__* are the launch's own figures, not counters; query-metrics may not list them.
  if [[ -z $known || $base == launch__* ]] || grep -qx -- "$base" <<<"$known"; then metrics+=("$m"); echo "asked: $m" >>"$OUT/profile/metrics.txt"
  else echo "unknown to this ncu, left out: $m" | tee -a "$OUT/profile/metrics.txt"; fi
done < <(python3 -c 'from tools.profile import METRICS; print("\n".join(METRICS))')
list=$(IFS=,; echo "${metrics[*]}")

"$NCU" --profile-from-start off --clock-control none --metrics "$list" -f -o "$OUT/profile/kernels" \
  "$BENCH" --profile --benchmark_filter="$FILTER" >"$OUT/profile/cases.txt" 2>"$OUT/profile/ncu.log"
status=$?
grep -c "profile case" "$OUT/profile/cases.txt" | sed 's/^/profiled cases: /'
if ((status != 0)); then tail -20 "$OUT/profile/ncu.log"; exit 1; fi
"$NCU" --import "$OUT/profile/kernels.ncu-rep" --csv --page raw --print-units base >"$OUT/profile/kernels.csv" || exit 1
rm -f "$OUT/profile/kernels.ncu-rep"
echo "kernels profiled: $(($(wc -l <"$OUT/profile/kernels.csv") - 2))"
