#!/usr/bin/env bash
# What a misaligned start costs: chapter 07's sum, 08's dot product and CUB's sum at 2^28
# elements, with the input placed 0 to 4 elements past a 16-byte boundary (f32); and the sums of
# 07, 10 and CUB (where chapter 09 takes the type) of 2^28 f16, bf16 and u8 placed 0 to 3
# elements past it. 07 and 10 give the same bits at every offset (their tests check it); this
# prints their steady-state GB/s and result at each offset.
#
#   scripts/alignment_cost.sh [BUILD_DIR]     (default build-sm90)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-sm90}
run() {  # chapter op dtype offset
  "$BUILD_DIR/$1/$1" --n 268435456 --op "$2" --dtype "$3" --offset "$4" --repeat 50 --json
}
{
  for offset in 0 1 2 3 4; do
    run 07_two_pass sum f32 $offset
    run 08_dot_product dot f32 $offset
    run 09_cub_comparison sum f32 $offset
  done
  for dtype in f16 bf16 u8; do
    for offset in 0 1 2 3; do
      for chapter in 07_two_pass 10_single_pass 09_cub_comparison; do
        [[ $chapter == 09_cub_comparison && $dtype == u8 ]] || run $chapter sum $dtype $offset
      done
    done
  done
} | python3 -c "$(cat <<'PY'
import json, sys
rows = [json.loads(line) for line in sys.stdin if line.startswith("{")]
print("| chapter | op | dtype | offset (elements) | GB/s, back to back | % of peak | result |")
print("|---|---|---|---:|---:|---:|---|")
for r in rows:
    print(f"| {r['chapter']} | {r['op']} | {r['dtype']} | {r['offset']} | {r['gbps']:.1f} | "
          f"{r['pct_peak']:.1f} | {r['result']!r} |")
PY
)"
