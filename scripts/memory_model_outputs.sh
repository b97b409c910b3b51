#!/usr/bin/env bash
# The memory-model evidence of chapters 10 and 06, kept beside the published results (run on a
# GPU machine):
#   litmus_message_passing.txt      10_single_pass_litmus: how often a reader on one SM that has
#                                   seen a flag still reads older data, with a relaxed flag and
#                                   with release and acquire (10_single_pass/litmus.cuh)
#   warp_synchronous_racecheck.txt  compute-sanitizer's racecheck over the two last-warp trees of
#                                   06_warp_shuffle/warp_synchronous.cuh, through their test cases
#                                   in 06_warp_shuffle_test_warp_synchronous: the volatile tree without
#                                   synchronisation (hazards expected) and the shuffle tree (none)
#
#   scripts/memory_model_outputs.sh BUILD_DIR OUT_DIR
#
# Exits 1 when a program fails (a stale read with release and acquire among them), when a test case
# fails or its name no longer matches, when racecheck finds a hazard in the shuffle tree, or finds
# none in the volatile tree (its hazards are the expected outcome, and the demonstration's check).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:?usage: scripts/memory_model_outputs.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: scripts/memory_model_outputs.sh BUILD_DIR OUT_DIR}
mkdir -p "$OUT"
rc=0
litmus="$BUILD_DIR/10_single_pass/experiments/10_single_pass_litmus"
tests="$BUILD_DIR/06_warp_shuffle/06_warp_shuffle_test_warp_synchronous"

{
  echo "# The message-passing litmus test between two SMs (10_single_pass/litmus.cuh): stale reads are"
  echo "# allowed with a relaxed flag (counted, whatever the count) and forbidden with release and acquire."
  echo "# device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  "$litmus"
} >"$OUT/litmus_message_passing.txt" 2>&1 || rc=1

# One test case under racecheck. Prints what it found; returns 0 when the case ran and passed, and
# racecheck found no hazard (no-hazards) or at least one (hazards-expected).
racecheck_case() {  # title doctest-pattern hazards-expected|no-hazards
  local log status summary lines
  log=$(compute-sanitizer --tool racecheck --error-exitcode 99 "$tests" -tc="$2" 2>&1)
  status=$?
  summary=$(grep -E "RACECHECK SUMMARY" <<<"$log" | tail -1)
  lines=$(wc -l <<<"$log")
  echo "## $1"
  echo "\$ compute-sanitizer --tool racecheck --error-exitcode 99 06_warp_shuffle_test_warp_synchronous -tc=\"$2\""
  if ((lines > 80)); then
    head -n 60 <<<"$log"
    echo "[... $((lines - 75)) lines left out ...]"
    tail -n 15 <<<"$log"
  else
    echo "$log"
  fi
  echo "[exit $status]"
  # Exactly one test case ran, and it passed: a pattern that matches nothing would pass vacuously.
  if ! grep -qE "test cases: +1 \| +1 passed \| +0 failed" <<<"$log"; then
    echo "UNEXPECTED: the pattern did not select one passing test case"
    return 1
  fi
  if [[ -z "$summary" ]]; then
    echo "UNEXPECTED: racecheck printed no summary"
    return 1
  fi
  if [[ $3 == no-hazards ]]; then
    [[ $status -eq 0 && "$summary" == *"SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"* ]] &&
      { echo "as expected: no hazard"; return 0; }
    echo "UNEXPECTED: hazards in a tree that should have none"
    return 1
  fi
  [[ $status -eq 0 || $status -eq 99 ]] || { echo "UNEXPECTED: exit status $status"; return 1; }
  # racecheck tracks every shared-memory access, whatever the lanes' timing: a tree whose lanes touch
  # one slot with nothing between them is reported on every run. None reported means the
  # demonstration no longer shows what it is for (the kernel or the tool changed).
  if [[ "$summary" == *"SUMMARY: 0 hazards displayed"* ]]; then
    echo "UNEXPECTED: no hazard reported in the tree whose lanes race"
    return 1
  fi
  echo "as expected: racecheck reports the race between the lanes of one warp"
  return 0
}

if ! command -v compute-sanitizer >/dev/null; then
  echo "compute-sanitizer not found: the racecheck runs need it" | tee "$OUT/warp_synchronous_racecheck.txt"
  rc=1
else
  {
    echo "# compute-sanitizer racecheck over the last warp of a tree (06_warp_shuffle/warp_synchronous.cuh)."
    echo "# 1. The volatile tree without synchronisation (Harris 2007): lanes read and write one shared-memory"
    echo "#    slot with nothing between them, a race since Volta: racecheck is expected to report hazards."
    echo "# 2. The shuffle tree (__shfl_down_sync): the values move between registers: no hazard may be reported."
    echo "# device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
    echo
    racecheck_case "1. volatile tree, no synchronisation (hazards expected)" "*warp-synchronous?volatile*" \
      hazards-expected || rc=1
    echo
    racecheck_case "2. shuffle tree (no hazard allowed)" "*warp-synchronous?shuffle*" no-hazards || rc=1
  } >"$OUT/warp_synchronous_racecheck.txt" 2>&1
fi
tail -n 3 "$OUT"/litmus_message_passing.txt "$OUT"/warp_synchronous_racecheck.txt
exit $rc
