#!/usr/bin/env bash
# Bad arguments and files are refused with exit code 2 before the GPU is looked for: this runs the
# same on a machine without a GPU (where a check made after the GPU's would exit 3) as on one.
#
#   tests/program_refusals.sh 11_BATCHED 12_SEGMENTED 13_CUSTOM_OPS CHAPTER_PROGRAM
set -uo pipefail
batched=$1 segmented=$2 custom=$3 chapter=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'abc' >"$tmp/odd.bin"
failures=0 checks=0
refused() {  # command...: must exit 2 and say why on stderr
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  checks=$((checks + 1))
  if [[ $rc -ne 2 || -z "$err" ]]; then
    failures=$((failures + 1))
    printf 'FAILED: %s exited %d (expected 2): %s\n' "$*" "$rc" "$err"
  fi
}
refused "$batched" --strategy bogus
refused "$batched" --kernels bogus
refused "$batched" --rows 10 --cols 10 --strategy naive
refused "$batched" --rows 2 --cols 1 --stride 4611686018427387904
refused "$batched" --rows 4294967296 --cols 4294967296
refused "$batched" --input /nonexistent
refused "$batched" --input "$tmp/odd.bin"
refused "$batched" --input "$tmp"
refused "$segmented" --segments /nonexistent
refused "$segmented" --kernels bogus
refused "$segmented" --segments "$tmp/odd.bin"
refused "$segmented" --segments "$tmp"
refused "$segmented" --strategy bogus
refused "$segmented" --input "$tmp/odd.bin"
refused "$segmented" --output /nonexistent-folder/out.bin
refused "$batched" --rows 10 --cols 10 --output /nonexistent-folder/out.bin
refused "$batched" --rows 10 --cols 10 --output "$tmp"
refused "$custom" --op lse --input /nonexistent
refused "$custom" --op lse --input "$tmp/odd.bin"
refused "$custom" --op lse --kernel votes
refused "$custom" --op lse --output /nonexistent-folder/out.bin
refused "$custom" --op nope
refused "$chapter" --input /nonexistent
refused "$chapter" --input "$tmp/odd.bin"
refused "$chapter" --n -5
echo "$((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
