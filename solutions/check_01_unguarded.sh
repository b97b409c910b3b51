#!/usr/bin/env bash
# Chapter 01's exercise under compute-sanitizer: solution_01_unguarded (01's kernel without its
# tail guard, n = 1000) run alone, then under memcheck and under initcheck. solutions/01_naive.md
# predicts what each tool reports, from 01's scratch layout:
#   initcheck: uninitialised reads in pass 1, by the last block (block 1): its short tile's
#              missing elements are the 96 bytes of padding between the copy and the partials,
#              inside the scratch allocation, which nothing ever writes;
#   memcheck:  out-of-bounds reads in pass 2, whose one block reads up to 510 elements past
#              the 2 partials, which end the scratch allocation.
# Pass 1's reads stay inside the allocation, so memcheck cannot see them; pass 2's leave every
# allocation, where initcheck has nothing to check. Each tool must report its kind of error.
#
#   solutions/check_01_unguarded.sh [PROGRAM]      (default: build/solutions/solution_01_unguarded)
#
# Exit codes: 0 when both tools report what is predicted, 1 when not, 77 (ctest: skipped) without
# compute-sanitizer or without a GPU.
set -uo pipefail
program=${1:-build/solutions/solution_01_unguarded}
if [[ ! -x "$program" ]]; then
  echo "FAILED: $program is not built (cmake --build BUILD_DIR --target solution_01_unguarded)"
  exit 1
fi

sanitizer=$(command -v compute-sanitizer || true)
if [[ -z "$sanitizer" && -x /usr/local/cuda/bin/compute-sanitizer ]]; then
  sanitizer=/usr/local/cuda/bin/compute-sanitizer
fi
if [[ -z "$sanitizer" ]]; then
  echo "SKIPPED: compute-sanitizer is neither on the PATH nor in /usr/local/cuda/bin"
  exit 77
fi

echo "== $(basename "$program") alone"
alone=$("$program" 2>&1)
rc=$?
echo "$alone"
if [[ $rc -eq 77 ]]; then
  echo "SKIPPED: no GPU"
  exit 77
fi

# What one tool said, in short: its summary, how many reports of each kind, from which blocks and
# threads, and the first full report.
summarise() {
  local log=$1
  grep -E "ERROR SUMMARY" <<<"$log" | sed 's/^========= //'
  grep -oE "(Invalid|Uninitialized) __global__ [a-z ]+ of size [0-9]+ bytes" <<<"$log" | sort | uniq -c
  grep -oE "by thread \([0-9]+,0,0\) in block \([0-9]+,0,0\)" <<<"$log" |
    sed -E 's/by thread \(([0-9]+),0,0\) in block \(([0-9]+),0,0\)/\2 \1/' | sort -n -k1,1 -k2,2 |
    awk '{ if (!($1 in lo)) { lo[$1] = $2; order[++blocks] = $1 } hi[$1] = $2; count[$1]++ }
         END { for (b = 1; b <= blocks; ++b) printf "  block %d: %d reports, threads %d to %d\n", order[b], count[order[b]], lo[order[b]], hi[order[b]] }'
  echo "  the first report:"
  awk '/^========= (Invalid|Uninitialized)/ { on = 1 } on && /Saved host backtrace|^=========[[:space:]]*$/ { exit } on { print }' \
    <<<"$log" |
    sed 's/^/  /'
}

echo
echo "== compute-sanitizer --tool memcheck"
memcheck=$("$sanitizer" --tool memcheck --print-limit 100000 "$program" 2>&1)
summarise "$memcheck"
echo "  the program printed: $(grep -vE '^=========' <<<"$memcheck" | tail -1)"

echo
echo "== compute-sanitizer --tool initcheck"
initcheck=$("$sanitizer" --tool initcheck --print-limit 100000 "$program" 2>&1)
summarise "$initcheck"
echo "  the program printed: $(grep -vE '^=========' <<<"$initcheck" | tail -1)"

echo
failed=0
# Pass 1 has blocks 0 and 1, pass 2 block 0 only; block 0 of pass 1 has a full tile and reads
# nothing past it. So a report from block 1 is pass 1's, and one from block 0 is pass 2's.
reports_from_block() { grep -cE "in block \($1,0,0\)" <<<"$2"; }
if grep -qE "Invalid __global__ (read|write)" <<<"$memcheck" && (($(reports_from_block 1 "$memcheck") == 0)); then
  echo "as predicted: memcheck reports accesses outside the scratch allocation, all in pass 2"
else
  echo "NOT as predicted: memcheck should report accesses outside the allocation in pass 2 (block 0) only"
  failed=1
fi
if grep -qE "Uninitialized __global__ memory read" <<<"$initcheck" && (($(reports_from_block 0 "$initcheck") == 0)); then
  echo "as predicted: initcheck reports reads of scratch bytes nothing wrote, all in pass 1 (block 1)"
else
  echo "NOT as predicted: initcheck should report uninitialised reads in pass 1 (block 1) only"
  failed=1
fi
if ((failed)); then
  echo "FAILED"
  exit 1
fi
echo "PASSED"
