#!/usr/bin/env bash
# What the exercises' solutions print, kept as evidence beside the published results:
#   01_unguarded_sanitizer.txt  chapter 01 without its tail guard, under compute-sanitizer
#                               (solutions/check_01_unguarded.sh)
#   06_lock_count.txt           how many blocks take chapter 04's argmax lock, by n
#
#   scripts/solution_outputs.sh BUILD_DIR OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:?usage: scripts/solution_outputs.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: scripts/solution_outputs.sh BUILD_DIR OUT_DIR}
mkdir -p "$OUT"
rc=0
solutions/check_01_unguarded.sh "$BUILD_DIR/solutions/solution_01_unguarded" >"$OUT/01_unguarded_sanitizer.txt" 2>&1 || rc=1
"$BUILD_DIR/solutions/solution_06_lock_count" >"$OUT/06_lock_count.txt" 2>&1 || rc=1
tail -n 3 "$OUT"/*.txt
exit $rc
