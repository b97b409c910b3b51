#!/usr/bin/env bash
# Bad arguments and files are refused with exit code 2 before the GPU is looked for: this runs the
# same on a machine without a GPU (where a check made after the GPU's would exit 3) as on one.
# A refusal is also cheap: each row must end within a second and a peak resident set of 100 MB, so
# that no program generates, reads or allocates anything large before it checks its arguments.
# Every row prints its time, peak memory and message; a row fails on its exit code, on either
# figure, or when the message does not name what it refuses.
#
#   tests/program_refusals.sh 11_BATCHED 12_SEGMENTED 13_CUSTOM_OPS CHAPTER_PROGRAM
set -uo pipefail
batched=$1 segmented=$2 custom=$3 chapter=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'abc' >"$tmp/odd.bin"
head -c 40 /dev/zero >"$tmp/ten.f32"
# Offsets files: little-endian int64.
python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<3q", 0, 10, -5))' >"$tmp/negative_last.i64"
python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<3q", 0, 3, 5))' >"$tmp/good.i64"

# Runs a command with its output discarded; prints its exit code, wall seconds and peak resident
# set in KiB (the children's getrusage: the command alone, not this Python) on one line, and
# writes its stderr to the file named first.
cat >"$tmp/measure.py" <<'EOF'
import resource, subprocess, sys, time
with open(sys.argv[1], "wb") as err:
    start = time.monotonic()
    rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err).returncode
    seconds = time.monotonic() - start
print(rc, f"{seconds:.3f}", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOF

max_seconds=1 max_kib=$((100 * 1000 * 1000 / 1024))  # 1 s, 100 MB
failures=0 checks=0
# NAMED command...: must exit 2, saying why on stderr in a message that holds NAMED (the flag, or
# the file it names), within the time and memory above.
refused() {
  local named=$1 rc seconds kib err shown
  local -a wrong=()
  shift
  shown="${1##*/} ${*:2}"
  read -r rc seconds kib < <(python3 "$tmp/measure.py" "$tmp/err" "$@")
  err=$(tr '\n' ' ' <"$tmp/err")
  checks=$((checks + 1))
  [[ $rc -eq 2 && -n "$err" ]] || wrong+=("exit $rc, expected 2 with a message")
  [[ "$err" == *"$named"* ]] || wrong+=("the message does not name '$named'")
  awk -v s="$seconds" -v m="$max_seconds" 'BEGIN { exit !(s < m) }' || wrong+=("$seconds s, less than $max_seconds s wanted")
  ((kib < max_kib)) || wrong+=("peak resident set $kib KiB, less than $max_kib KiB wanted")
  printf '%-6s %6.3f s %6.1f MB  %s\n       -> %s\n' "$( ((${#wrong[@]})) && echo FAILED || echo ok)" "$seconds" \
    "$(awk -v k="$kib" 'BEGIN { print k * 1024 / 1e6 }')" "${shown//$tmp/\$tmp}" "${err//$tmp/\$tmp}"
  if ((${#wrong[@]})); then
    failures=$((failures + 1))
    printf '       FAILED: %s\n' "${wrong[@]}"
  fi
}
refused --strategy "$batched" --strategy bogus
refused --kernels "$batched" --kernels bogus
refused --strategy "$batched" --rows 10 --cols 10 --strategy naive
refused stride "$batched" --rows 2 --cols 1 --stride 4611686018427387904
refused "rows x cols" "$batched" --rows 4294967296 --cols 4294967296
refused "--rows: -1 must be positive" "$batched" --rows -1 --cols 4
refused "--cols: -4 must be positive" "$batched" --rows 4 --cols -4
refused "--stride: -1 must be positive" "$batched" --rows 4 --cols 4 --stride -1
refused "'/nonexistent'" "$batched" --input /nonexistent
refused "$tmp/odd.bin" "$batched" --input "$tmp/odd.bin"
refused "'$tmp'" "$batched" --input "$tmp"
refused "'/nonexistent'" "$segmented" --segments /nonexistent
refused --kernels "$segmented" --kernels bogus
refused "$tmp/odd.bin" "$segmented" --segments "$tmp/odd.bin"
refused "'$tmp'" "$segmented" --segments "$tmp"
refused "offset 2 (-5) is negative" "$segmented" --segments "$tmp/negative_last.i64"
refused "--segments excludes --segment-count" "$segmented" --segments "$tmp/good.i64" --segment-count 5
refused "--segments excludes --segment-mean" "$segmented" --segments "$tmp/good.i64" --segment-mean 5
refused "--segments excludes --segment-dist" "$segmented" --segments "$tmp/good.i64" --segment-dist heavy
refused "--segment-count: -1 must be positive" "$segmented" --segment-count -1
refused "--segment-mean: 0 is out of range" "$segmented" --segment-mean 0
refused "--segment-mean 4096 --segment-dist heavy" "$segmented" --segment-dist heavy --segment-mean 4096
refused "--segment-count 268435456 --segment-mean 1024" "$segmented" --segment-dist heavy --segment-count 268435456 \
  --segment-mean 1024
refused "--segment-mean 1073741824" "$segmented" --segment-mean 1073741824
refused --strategy "$segmented" --strategy bogus
refused "$tmp/odd.bin" "$segmented" --input "$tmp/odd.bin"
refused /nonexistent-folder/out.bin "$segmented" --output /nonexistent-folder/out.bin
refused /nonexistent-folder/out.bin "$batched" --rows 10 --cols 10 --output /nonexistent-folder/out.bin
refused "'$tmp'" "$batched" --rows 10 --cols 10 --output "$tmp"
refused "'/nonexistent'" "$custom" --op lse --input /nonexistent
refused "$tmp/odd.bin" "$custom" --op lse --input "$tmp/odd.bin"
refused --kernel "$custom" --op lse --kernel votes
refused /nonexistent-folder/out.bin "$custom" --op lse --output /nonexistent-folder/out.bin
refused --op "$custom" --op nope
refused --n "$custom" --op product --n 5 --input "$tmp/ten.f32"
refused "--n: -1 must be positive" "$custom" --op lse --n -1
refused "--repeat: 0" "$custom" --op lse --repeat 0
refused "'/nonexistent'" "$chapter" --input /nonexistent
refused "$tmp/odd.bin" "$chapter" --input "$tmp/odd.bin"
refused "--n: -5 must be positive" "$chapter" --n -5
echo "$((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
