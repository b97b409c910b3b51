#!/usr/bin/env bash
# Chapters 11's and 12's mappings side by side on one GPU, finer than the benchmark's shapes: f32
# sum over B x L = 2^26 elements, every row strategy at L = 8 to 2^20 (B = 2^26 / L), the tiled and
# naive column mappings (11_batched), and segments of mean length 8 to 4096 with uniform and
# heavy-tailed lengths, balanced and naive (12_segmented). Each line is one run of a chapter
# program, which checks every result before it times; the table gives GB/s, and "-" where a mapping was left out as hopeless (a thread per row
# of more than 4096 elements, the naive columns below 1024 columns, the naive heavy tail below a
# mean of 256) or failed. It is where 11's launcher's thresholds (11_batched/reduce.cuh, plan) come
# from.
#
#   scripts/sweep_11.sh [BUILD_DIR] > sweep.md      (default build-sm90)
set -uo pipefail
cd "$(dirname "$0")/.."
program="${1:-build-sm90}/11_batched/11_batched"
segmented="${1:-build-sm90}/12_segmented/12_segmented"
[[ -x "$program" && -x "$segmented" ]] || { echo "sweep_11: no $program or $segmented (build first)" >&2; exit 2; }
total=$((1 << 26))
"$program" --rows 1 --cols 1 >/dev/null 2>&1
[[ $? -eq 3 ]] && { echo "sweep_11: no usable CUDA GPU" >&2; exit 3; }

gbps() {  # program arguments -> GB/s, or "-" (with the reason on stderr)
  local line
  line=$("$program" "$@" --json --repeat 10 2>&1 | tail -1)
  if [[ $line == *'"passed":true'* ]]; then
    sed -n 's/.*"gbps":\([0-9.]*\).*/\1/p' <<<"$line"
  else
    echo "sweep_11: $* -> $line" >&2
    echo "-"
  fi
}
choice() {  # the launcher's own choice for these arguments
  "$program" "$@" --json --repeat 1 2>/dev/null | sed -n 's/.*"strategy":"\([a-z_]*\)","lanes":\([0-9]*\),"split":\([0-9]*\).*/\1 (lanes \2, split \3)/p'
}

echo "# Chapter 11's mappings, f32 sum, B x L = 2^26: GB/s (the input read once plus the results written)"
echo
echo "## Rows"
echo
echo "| L | B | automatic | its choice | thread_per_row | group_per_row | block_per_row | blocks_per_row |"
echo "|---:|---:|---:|---|---:|---:|---:|---:|"
for log2l in 3 4 5 6 7 8 9 10 11 12 13 16 20; do
  l=$((1 << log2l)); b=$((total / l)); shape=(--rows "$b" --cols "$l")
  cells=("$(gbps "${shape[@]}")" "$(choice "${shape[@]}")")
  for s in thread_per_row group_per_row block_per_row blocks_per_row; do
    if [[ $s == thread_per_row && $l -gt 4096 ]]; then cells+=("-"); continue; fi
    cells+=("$(gbps "${shape[@]}" --strategy "$s")")
  done
  echo "| $l | $b | $(IFS='|'; echo "${cells[*]}" | sed 's/|/ | /g') |"
done
echo
echo "## Columns"
echo
echo "| L | B | columns_tiled | its split | columns_naive |"
echo "|---:|---:|---:|---|---:|"
for log2l in 3 5 7 10 13 16 20; do
  l=$((1 << log2l)); b=$((total / l)); shape=(--rows "$b" --cols "$l" --axis 0)
  naive="-"
  [[ $l -ge 1024 ]] && naive=$(gbps "${shape[@]}" --strategy columns_naive)
  echo "| $l | $b | $(gbps "${shape[@]}") | $(choice "${shape[@]}") | $naive |"
done
echo
echo "## Segments"
echo
echo "| mean length | segments | lengths | balanced | naive |"
echo "|---:|---:|---|---:|---:|"
program=$segmented
for mean in 8 32 128 256 1024 4096; do
  count=$((total / mean))
  for dist in uniform heavy; do
    shape=(--segment-dist "$dist" --segment-count "$count" --segment-mean "$mean")
    naive="-"
    [[ $dist == uniform || $mean -ge 256 ]] && naive=$(gbps "${shape[@]}" --strategy naive)
    echo "| $mean | $count | $dist | $(gbps "${shape[@]}") | $naive |"
  done
done
