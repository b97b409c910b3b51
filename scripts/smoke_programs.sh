#!/usr/bin/env bash
# Runs every chapter program the way a reader would, on a GPU machine, and records what each
# printed and its exit code: the JSON check at n = 1000003, a 2^28 run, a raw input file, a
# misaligned start, results that are NaN or infinite, and the refusals (unsupported op, n too
# large for the device, a bad file). Every --json line is parsed with a strict JSON parser
# (Python's, with NaN and Infinity refused): one that does not parse is a surprise too.
#
#   scripts/smoke_programs.sh [BUILD_DIR]     (default build-sm90; prints a report, exits 1 on a surprise)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-sm90}
tmp=$(mktemp -d)
python3 -c "import struct; open('$tmp/ramp.bin','wb').write(struct.pack('<1000f', *[float(i % 7 - 3) for i in range(1000)]))"
python3 -c "import struct; open('$tmp/nan.bin','wb').write(struct.pack('<1000f', *[float('nan') if i == 500 else 1.0 for i in range(1000)]))"
python3 -c "import struct; open('$tmp/inf.bin','wb').write(struct.pack('<1000f', *[float('inf') if i == 7 else 1.0 for i in range(1000)]))"
printf 'abc' >"$tmp/odd.bin"
surprises=0
# A --json program's stdout: one line, one object, strict JSON (no NaN or Infinity tokens).
strict_json() {
  python3 -c '
import json, sys
def refuse(token): raise ValueError("not JSON: " + token)
lines = sys.stdin.read().splitlines()
if len(lines) != 1: raise SystemExit("expected one JSON line, got %d" % len(lines))
if not isinstance(json.loads(lines[0], parse_constant=refuse), dict): raise SystemExit("not an object")
'
}
expect() {  # expected-exit-code command...
  local want=$1; shift
  local out err rc json_ok=0
  out=$("$@" 2>"$tmp/stderr"); rc=$?
  err=$(cat "$tmp/stderr")
  printf '$ %s\n%s\n%s\n[exit %d, expected %d]\n' "${*#$BUILD_DIR/}" "$out" "$err" "$rc" "$want"
  if [[ " $* " == *" --json "* && ( $rc -eq 0 || $rc -eq 1 || $rc -eq 5 ) ]]; then
    if ! printf '%s\n' "$out" | strict_json; then json_ok=1; printf '[the --json output is not strict JSON]\n'; fi
  fi
  printf '\n'
  [[ $rc -eq $want && $json_ok -eq 0 ]] || surprises=$((surprises + 1))
}
for bin in "$BUILD_DIR"/[0-9][0-9]_*/[0-9][0-9]_*; do
  [[ -x "$bin" && "$bin" != *_test* ]] || continue
  pairs=$("$bin" --help | sed -n 's/^Supported op\/dtype pairs: //p')
  [[ -n "$pairs" ]] || continue  # a program that takes shapes, not n (11_batched, below)
  expect 0 "$bin" --n 1000003 --json
  [[ "$pairs" == *max/f32* ]] && expect 0 "$bin" --n 1000003 --op max --offset 3 --json
  expect 0 "$bin" --n 268435456
  if [[ "$pairs" == *dot/f32* ]]; then  # two vectors: two files, and 16-bit inputs from a misaligned start
    expect 0 "$bin" --input "$tmp/ramp.bin" --input2 "$tmp/ramp.bin" --json
    expect 0 "$bin" --n 1000003 --dtype bf16 --offset 5 --json
  else
    expect 0 "$bin" --input "$tmp/ramp.bin" --json
  fi
  # the generic chapters: an argmax of 16-bit floats from a misaligned start, an integer sum
  [[ "$pairs" == *argmax/bf16* ]] && expect 0 "$bin" --n 1000003 --op argmax --dtype bf16 --offset 5 --json
  [[ "$pairs" == *sum/u8* ]] && expect 0 "$bin" --n 1000003 --op sum --dtype u8 --json
  # NaN and infinite results, in JSON as the strings "nan" and "inf"
  if [[ "$pairs" != *dot/f32* ]]; then
    expect 0 "$bin" --input "$tmp/nan.bin" --json
    expect 0 "$bin" --input "$tmp/inf.bin" --json
  fi
done
# Chapter 11: rows and columns, then its refusals.
bin="$BUILD_DIR/11_batched/11_batched"
if [[ -x "$bin" ]]; then
  expect 0 "$bin" --rows 8388608 --cols 8 --json
  expect 0 "$bin" --rows 8388608 --cols 8 --axis 0 --kernels teaching --json
  expect 0 "$bin" --rows 1000 --cols 100 --kernels teaching --json
  expect 2 "$bin" --kernels bogus
  expect 0 "$bin" --rows 64 --cols 1048576 --axis 0 --json
  expect 0 "$bin" --rows 1000 --cols 100 --stride 128 --op argmax --dtype bf16 --json
  expect 2 "$bin" --rows 10 --cols 100 --stride 50
  expect 2 "$bin" --rows 4294967296 --cols 4294967296
  expect 2 "$bin" --op min
  expect 2 "$bin" --rows 1000 --cols 1000 --input "$tmp/ramp.bin"
  expect 2 "$bin" --strategy columns_naive --rows 10 --cols 10
  expect 2 "$bin" --strategy bogus
  expect 2 "$bin" --rows 2 --cols 1 --stride 4611686018427387904
  expect 2 "$bin" --input /nonexistent
  expect 2 "$bin" --input "$tmp/odd.bin"
  expect 2 "$bin" --rows 10 --cols 10 --output /nonexistent-folder/out.bin
  expect 0 "$bin" --rows 10 --cols 0 --strategy block_per_row --json
  expect 0 "$bin" --rows 10 --cols 0 --strategy blocks_per_row --json
  expect 0 "$bin" --rows 10 --cols 100 --input "$tmp/inf.bin" --output "$tmp/rows.bin" --json
  python3 -c "import struct,sys; v=struct.unpack('<10f', open('$tmp/rows.bin','rb').read()); sys.exit(0 if v[0]==float('inf') and v[1]==100.0 else 1)" ||
    { echo "11_batched --output: the file does not hold the row sums"; surprises=$((surprises + 1)); }
fi
# Chapter 12: segments generated (uniform and heavy-tailed, both mappings) and from a file, then
# its refusals.
bin="$BUILD_DIR/12_segmented/12_segmented"
if [[ -x "$bin" ]]; then
  python3 -c "import struct; open('$tmp/offsets.bin','wb').write(struct.pack('<5q', 0, 0, 300, 301, 1000))"
  python3 -c "import struct; open('$tmp/decreasing.bin','wb').write(struct.pack('<3q', 0, 500, 400))"
  expect 0 "$bin" --json
  expect 0 "$bin" --segment-dist heavy --segment-count 2097152 --segment-mean 32 --json
  expect 0 "$bin" --segment-dist heavy --segment-count 2097152 --segment-mean 32 --kernels teaching --json
  expect 2 "$bin" --kernels bogus
  expect 0 "$bin" --segment-dist heavy --segment-mean 256 --strategy naive --dtype f16 --json
  expect 0 "$bin" --segments "$tmp/offsets.bin" --input "$tmp/ramp.bin" --op max --json
  expect 0 "$bin" --segments "$tmp/offsets.bin" --input "$tmp/nan.bin" --op max --json
  expect 0 "$bin" --segments "$tmp/offsets.bin" --input "$tmp/inf.bin" --output "$tmp/segments.bin" --json
  python3 -c "import struct,sys; v=struct.unpack('<4f', open('$tmp/segments.bin','rb').read()); sys.exit(0 if v[0]==0.0 and v[1]==float('inf') else 1)" ||
    { echo "12_segmented --output: the file does not hold the segment sums"; surprises=$((surprises + 1)); }
  expect 2 "$bin" --segments "$tmp/decreasing.bin"
  expect 2 "$bin" --segments "$tmp/odd.bin"
  expect 2 "$bin" --segments /nonexistent
  expect 2 "$bin" --segments "$tmp/offsets.bin" --segment-dist heavy
  expect 2 "$bin" --strategy segments_naive
  expect 2 "$bin" --op min
  expect 2 "$bin" --dtype f64
  expect 2 "$bin" --segment-count 0
  expect 2 "$bin" --input "$tmp/odd.bin"
  expect 2 "$bin" --output /nonexistent-folder/out.bin
fi
# Chapter 13: every operator at 2^28 (bytes and pairs alike), the traps (a plain product, log-sum-exp
# and mean/variance that fail their check where the fixes pass; a reordered affine composition),
# the early exit, a raw input, and the refusals. A product whose bound at its n is 10^-4 or more
# (the float product past 1678 factors, the sum of logs past a few hundred) is not checked: exit 5.
bin="$BUILD_DIR/13_custom_ops/13_custom_ops"
if [[ -x "$bin" ]]; then
  for op in argmin minmax scaled_product lse mean_variance sum_of_squares any all affine; do
    expect 0 "$bin" --op "$op" --n 268435456 --json
  done
  expect 5 "$bin" --op log_product --n 268435456 --json
  expect 1 "$bin" --op product --dist around_one --n 1000003 --json
  expect 5 "$bin" --op product --dist near_one --json
  expect 0 "$bin" --op product --dist near_one --n 1000 --json
  expect 0 "$bin" --op scaled_product --dist near_one --n 17000000 --json
  expect 5 "$bin" --op log_product --dist around_one --n 1000003 --json
  expect 0 "$bin" --op log_product --dist near_one --n 200 --json
  expect 1 "$bin" --op lse_naive --dist near100 --json
  expect 0 "$bin" --op lse --dist near100 --json
  expect 1 "$bin" --op mean_variance_naive --dist shifted --json
  expect 0 "$bin" --op mean_variance --dist shifted --json
  expect 1 "$bin" --op affine --kernel reordering --json
  expect 0 "$bin" --op any --kernel early_exit --true-at start --json
  expect 0 "$bin" --op all --kernel early_exit --true-at none --json
  expect 0 "$bin" --op minmax --input "$tmp/ramp.bin" --json
  expect 1 "$bin" --op lse_naive --dist near100 --n 1000 --json  # an infinite result: "inf"
  expect 5 "$bin" --op product --dist near_one --n 16777259 --json  # no useful bound: not checked
  expect 0 "$bin" --op minmax --input "$tmp/nan.bin" --output "$tmp/minmax.bin" --json
  python3 -c "import struct,math,sys; lo,hi=struct.unpack('<2f', open('$tmp/minmax.bin','rb').read()); sys.exit(0 if math.isnan(lo) and math.isnan(hi) else 1)" ||
    { echo "13_custom_ops --output: the file does not hold the NaN range"; surprises=$((surprises + 1)); }
  expect 2 "$bin" --op lse --kernel votes
  expect 2 "$bin" --op lse --input "$tmp/odd.bin"
  expect 2 "$bin" --op lse --input /nonexistent
  expect 2 "$bin" --op lse --output /nonexistent-folder/out.bin
  expect 2 "$bin" --op lse --n 68719476736
  expect 2 "$bin" --op minmax --input "$tmp/ramp.bin" --n 1000
  expect 2 "$bin" --op nope
  expect 2 "$BUILD_DIR/07_two_pass/07_two_pass" --op lse
fi
bin="$BUILD_DIR/01_naive/01_naive"
expect 2 "$bin" --op dot
expect 2 "$bin" --n 2^45
expect 2 "$bin" --input "$tmp/odd.bin"
expect 2 "$bin" --input "$tmp/ramp.bin" --n 1001
expect 2 "$bin" --n -5
rm -rf "$tmp"
echo "smoke_programs: $surprises unexpected exit codes"
[[ $surprises -eq 0 ]]
