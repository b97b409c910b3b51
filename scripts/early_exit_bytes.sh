#!/usr/bin/env bash
# How many bytes chapter 13's early exit reads before it stops: Nsight Compute's count of the bytes
# read from DRAM (dram__bytes_read.sum) over one cold call of the any/all vote kernel with its
# early exit, on the benchmark's inputs (1 GiB of bytes; the deciding byte first or at the middle).
# A kernel that stops early reads less than its input, so its GB/s is these bytes over its time,
# never the whole input's. `python3 -m tools csv` takes the counts into bench.csv.
#
#   scripts/early_exit_bytes.sh BUILD_DIR OUT_DIR     (writes OUT_DIR/early_exit_bytes.csv)
#
# ncu flushes the caches before the profiled kernel (its default --cache-control all), so the
# call reads cold, as the benchmark times it.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:?usage: scripts/early_exit_bytes.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: scripts/early_exit_bytes.sh BUILD_DIR OUT_DIR}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ -n $NCU ]] || { echo "early_exit_bytes.sh: Nsight Compute (ncu) not found" >&2; exit 3; }
program="$BUILD_DIR/13_custom_ops/13_custom_ops"
[[ -x $program ]] || { echo "early_exit_bytes.sh: build $BUILD_DIR first" >&2; exit 2; }
mkdir -p "$OUT"
n=$((1 << 30))
csv="$OUT/early_exit_bytes.csv"
work=$(mktemp -d)
echo "op,true_at,n,dram_bytes_read" >"$csv.tmp"
at=0  # the benchmark's param_true_at: 0 the deciding byte first, 1 at the middle
for where in start middle; do
  for op in any all; do
    # The report is written, then read back as CSV (the raw page: a header of metric names, a
    # row of units, a row per kernel), as scripts/profile_kernels.sh reads its own.
    if ! "$NCU" --metrics dram__bytes_read.sum -k regex:any_all_votes -c 1 -f -o "$work/report" \
      "$program" --op "$op" --kernel early_exit --true-at "$where" --n "$n" --repeat 1 >"$work/log" 2>&1 ||
      ! "$NCU" --import "$work/report.ncu-rep" --csv --page raw --print-units base >"$work/raw.csv" 2>>"$work/log"; then
      echo "early_exit_bytes.sh: ncu failed on --op $op --true-at $where:" >&2
      tail -20 "$work/log" >&2
      exit 1
    fi
    bytes=$(python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
column = rows[0].index("dram__bytes_read.sum")
print(rows[2][column].replace(",", ""))' "$work/raw.csv" 2>>"$work/log")
    [[ $bytes =~ ^[0-9.]+$ ]] || { echo "early_exit_bytes.sh: no byte count for --op $op --true-at $where" >&2; tail -20 "$work/log" >&2; exit 1; }
    echo "$op,$at,$n,$bytes" >>"$csv.tmp"
    echo "$op, deciding byte $where: $bytes bytes read of $n"
  done
  at=$((at + 1))
done
mv "$csv.tmp" "$csv"
rm -rf "$work"
