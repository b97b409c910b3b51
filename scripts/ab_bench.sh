#!/usr/bin/env bash
# Two builds of the benchmark on one GPU, their rows run in turn: whether a change of the sources
# changed a kernel's speed, or two runs on two machines merely differ. Builds reduction_bench from
# this tree (A) and from OTHER_SRC (B: another tree's sources, e.g. `git archive COMMIT | tar -x -C
# DIR`), both for sm_90 with Ninja unless BUILD_A / BUILD_B name builds already made, then runs A,
# B, A, B, ... ROUNDS times each (default 3) over the rows FILTER selects (a Google Benchmark
# regular expression), and writes OUT/a_K.json, OUT/b_K.json and OUT/ab.md: each row's median
# GB/s over the rounds for A and for B, and B / A.
#
#   scripts/ab_bench.sh OTHER_SRC FILTER OUT [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
OTHER=${1:?usage: scripts/ab_bench.sh OTHER_SRC FILTER OUT [ROUNDS]}
FILTER=${2:?usage: scripts/ab_bench.sh OTHER_SRC FILTER OUT [ROUNDS]}
OUT=${3:?usage: scripts/ab_bench.sh OTHER_SRC FILTER OUT [ROUNDS]}
ROUNDS=${4:-3}
mkdir -p "$OUT"
build() {  # source build_dir
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" >/dev/null
  cmake --build "$2" -j "$(nproc)" --target reduction_bench >"$OUT/build_$(basename "$2").log" 2>&1 ||
    { tail -20 "$OUT/build_$(basename "$2").log"; exit 1; }
}
A=${BUILD_A:-build-ab-a}
B=${BUILD_B:-$(realpath -m "$OTHER")/build-ab-b}
[[ -n ${BUILD_A:-} ]] || build . "$A"
[[ -n ${BUILD_B:-} ]] || build "$OTHER" "$B"
for ((k = 1; k <= ROUNDS; ++k)); do
  for side in a b; do
    bench=$([[ $side == a ]] && echo "$A" || echo "$B")/bench/reduction_bench
    "$bench" --benchmark_filter="$FILTER" --benchmark_out="$OUT/${side}_$k.json" --benchmark_out_format=json >/dev/null
  done
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def runs(side):
    table = {}
    for k in range(1, rounds + 1):
        with open(f"{out}/{side}_{k}.json", encoding="utf-8") as f:
            for b in json.load(f)["benchmarks"]:
                if b.get("gbps"):
                    # The row without its chapter: a kernel that moved to another chapter keeps its row.
                    row = b["name"].split("/iterations")[0].split("/", 1)[1]
                    table.setdefault(row, []).append(b["gbps"])
    return {name: statistics.median(v) for name, v in table.items()}
a, b = runs("a"), runs("b")
lines = [f"# A (this tree) and B (the other) on one GPU, {rounds} rounds each in turn", "",
         "| row | A GB/s | B GB/s | B / A |", "|---|---:|---:|---:|"]
for name in sorted(set(a) & set(b)):
    lines.append(f"| `{name}` | {a[name]:.1f} | {b[name]:.1f} | {b[name] / a[name]:.3f} |")
lines.append("")
lines.append(f"Rows only in A: {len(set(a) - set(b))}; only in B: {len(set(b) - set(a))}.")
with open(f"{out}/ab.md", "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
