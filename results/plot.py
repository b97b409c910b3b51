#!/usr/bin/env python3
"""Turns the benchmark's Google Benchmark output into the tutorial's CSV, charts and tables.

    plot.py csv BENCH_JSON OUT_CSV       reduction_bench's JSON (--benchmark_out_format=json) ->
                                         bench.csv, one row per (chapter, kernel, op, dtype, n,
                                         shape, params), and floor.csv beside it (the empty
                                         kernel's times)
    plot.py charts RESULTS_DIR           RESULTS_DIR/bench.csv and machine.txt -> the charts of
                                         CHART_DRAWERS (batched.png too, where bench.csv has
                                         batched rows) and tables.md, written into RESULTS_DIR
    plot.py tables RESULTS_DIR           tables.md only, without matplotlib
    plot.py compare RESULTS_DIR OTHER    this run's GB/s divided by OTHER's, printed and written
                                         to RESULTS_DIR/compare.md

Every number shown is computed from bench.csv, never typed by hand. Bad input (a missing file or
column, no rows, a non-number) is reported in one line on stderr with exit status 2.
"""

import argparse
import csv
import json
import math
import os
import sys

# time_us, gbps, pct_peak: the steady state, the median call among calls queued back to back;
# time_p10_us, time_p90_us: the spread of those calls; latency_us: one call from an idle GPU,
# the host's dispatch included; b2b_us: per call of 200 calls made in a loop, whichever is slower
# setting it, the host's dispatch or the GPU's work; graph_us: per call of the same 200 calls
# captured into one CUDA graph (common/timing.hpp). The last two are measured on L2-resident
# inputs only, where launches matter; graph_us is empty where a call cannot be captured.
# variant_of: K of the benchmark's label "variant of K", empty for the lessons' and the
# libraries' kernels; params: "key=value;..." from its counters param_<key>, keys sorted.
# layout, segments, length: the shape, last so that the columns before keep their places. A
# chapter's reduction of n elements into one value is "flat", 1 segment of length n; chapter 11
# reduces many at once: "rows" and "columns" of a [B, L] matrix (segments B, length L), or
# "segments" of varying length (their number, and their mean length n / segments).
CSV_COLUMNS = ["chapter", "kernel", "dtype", "op", "n", "bytes", "time_us", "time_p10_us",
               "time_p90_us", "latency_us", "b2b_us", "graph_us", "gbps", "pct_peak",
               "l2_resident", "ratio_to_cub", "variant_of", "params", "layout", "segments",
               "length", "error", "error_bound", "passed"]
# A bench.csv from an older benchmark lacks these; it still reads (every kernel then counts as a
# lesson's, every row as flat, and the times it lacks are unknown), so that `compare` can set a
# new run against it.
OPTIONAL_COLUMNS = ["time_p10_us", "time_p90_us", "latency_us", "b2b_us", "graph_us",
                    "variant_of", "params", "layout", "segments", "length", "error", "error_bound",
                    "passed"]
FLAT = "flat"
# The layouts in reading order; a batched row's counter layout_id numbers them from 1 on.
LAYOUTS = [FLAT, "rows", "columns", "segments"]
# Counters common/bench.cpp sets on every benchmark row, and those it sets on some only.
JSON_COUNTERS = ["n", "bytes", "time_us", "time_p10_us", "time_p90_us", "latency_us", "gbps",
                 "pct_peak", "l2_resident"]
OPTIONAL_COUNTERS = ["b2b_us", "graph_us"]
# Chapter 13's rows check their result beside the time: the error against float64, its bound, and
# whether it passed (0 is a value here, not "not measured"; an error of 1e300 or more stands for a
# result that is not finite, inf or NaN, where the answer is finite). Empty on every other row.
CHECK_COUNTERS = ["error", "error_bound", "passed"]
# Chapter 13's operators (common/dtype.hpp, kCustomOpNames), set against CUB's TransformReduce
# with the same functors, which chapter 13 runs itself.
CUSTOM_OPS_CHAPTER = "13_custom_ops"
# A batched row's counters besides those: layout_id (an index into LAYOUTS), and its shape.
BATCHED_COUNTERS = ["segments", "length"]
# Beside the chapters the benchmark times an empty kernel the same ways, named
# floor/<kernel>/none/none/0: the floor under every call. It is no chapter's kernel, so it goes
# to floor.csv next to bench.csv, never into bench.csv's tables, charts or comparisons.
FLOOR_PREFIX = "floor"
FLOOR_CSV = "floor.csv"
FLOOR_COLUMNS = ["kernel", "time_us", "time_p10_us", "time_p90_us", "latency_us", "b2b_us",
                 "graph_us"]
FLOOR_KERNEL = "empty_kernel"

CUB_CHAPTER = "09_cub_comparison"
# The batched rows' yardstick (chapters 11 and 12): CUB's segmented reduction, measured on rows
# and segments (CUB has no column reduction). Columns and segments are also set against their
# naive mapping.
BATCHED_BASELINE = "cub_segmented_reduce"
NAIVE_MAPPING = {"reduce_columns": "reduce_columns_naive", "reduce_segments": "reduce_segments_naive"}
# The automatic choice of reduce_rows, its counter param_strategy_id, by name.
ROW_STRATEGIES = {1: "thread_per_row", 2: "group_per_row", 3: "block_per_row", 4: "blocks_per_row"}
# The launch-cost chart sets the one-launch chapter against the two-launch one and the library.
TWO_PASS_CHAPTER = "07_two_pass"
SINGLE_PASS_CHAPTER = "10_single_pass"
DRAM_N = 2 ** 28            # 1 GiB of f32: far beyond any L2, so a DRAM figure
L2_N = 2 ** 20              # 4 MiB of f32: sits in L2, quoted next to it in the README
TIME_TABLE_MAX_N = 2 ** 22  # below this a call is latency-bound: time per call is the useful figure
L2_FOOTNOTE = "L2-resident: input no larger than L2, measured hot (larger inputs are measured cold)"

# The charts of a results folder, in the order the README shows them, with the alt text it gives
# them. `charts` draws those CHART_DRAWERS names, and BATCHED_CHART where bench.csv has batched
# rows; a chart drawn by a script of its own is listed here too, so that the README links it: the
# headline chart, achieved bandwidth against bytes in flight per SM, comes from results/lessons.py
# (it needs the profiler's and the latency's files). The README links those that exist.
BATCHED_CHART = "batched.png"
CHARTS = [
    ("bytes_in_flight.png", "Bandwidth against bytes in flight per SM, with Little's law"),
    ("bandwidth_vs_n.png", "f32 sum bandwidth vs. input size"),
    ("time_vs_n.png", "f32 sum time per call vs. input size"),
    ("launch_cost.png", "f32 sum time per call at small n: one call and back to back, single pass "
                        "against two passes, CUB and an empty kernel"),
    ("chapters.png", "Bandwidth per chapter at a DRAM-resident size"),
    ("dtypes.png", "f16, bf16 and f32 sums"),
    ("dot.png", "Dot products"),
    (BATCHED_CHART, "f32 sums of many rows, columns or segments at once: bandwidth vs. length"),
]

# Sections of tables.md and the READMEs come in this order; anything else follows alphabetically.
DTYPE_ORDER = ["f32", "f16", "bf16", "f64"]
OP_ORDER = ["sum", "max", "min", "argmax", "dot"]


class InputError(Exception):
    """Missing or malformed input: main() prints it as one line and exits with status 2."""


def open_input(path):
    try:
        return open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None


def baseline_for(op, dtype):
    """The (chapter, kernel) a row is compared with in ratio_to_cub."""
    if op not in OP_ORDER:  # chapter 13's operators
        return CUSTOM_OPS_CHAPTER, "cub_transform_reduce"
    if op == "dot":
        # The library answer to an f32 dot product is cuBLAS; for 16-bit inputs with an f32
        # result, which cuBLAS's Sdot does not take, CUB's TransformReduce of the products.
        return "08_dot_product", "cublas_sdot" if dtype == "f32" else "cub_transform_reduce"
    if op == "sum" and dtype in ("f16", "bf16"):
        # The chapters sum half-precision inputs in f32; CUB's counterpart that also converts
        # each element before adding is TransformReduce, not a plain Sum over half values.
        return CUB_CHAPTER, "cub_transform_reduce"
    if op in ("max", "min", "argmax"):
        # CUB's own Max/Min/ArgMax as shipped. They answer differently for -inf and NaN
        # (09_cub_comparison/README.md); 09's calls with this project's semantics can be slower
        # (argmax), and comparing with those would flatter the chapters: the yardstick is the
        # faster library call.
        return CUB_CHAPTER, "cub_" + op + "_builtin"
    return CUB_CHAPTER, "cub_" + op


def is_baseline(kernel):
    """Library rows (CUB, cuBLAS) are the yardstick, drawn apart from the chapters' kernels."""
    return kernel.startswith(("cub_", "cublas_"))


def row_key(row):
    """What one measurement is; repetitions of it share the key. Batched shapes can read the same
    n (1024 rows of 65536, 65536 of 1024; segments of uniform or heavy-tailed lengths, told
    apart by param_heavy), so the shape and the params count too."""
    return (row["chapter"], row["kernel"], row["op"], row["dtype"], row["n"], row["layout"],
            row["segments"], row["length"], tuple(sorted(row["params"].items())))


def flat_key(row):
    """A flat row's (chapter, kernel, op, dtype, n): what ratio_to_cub and `compare` match on."""
    return row["chapter"], row["kernel"], row["op"], row["dtype"], row["n"]


def batched_key(row):
    """Where a batched row is compared with another kernel's: the same op, dtype and shape."""
    return (row["op"], row["dtype"], row["n"], row["layout"], row["segments"], row["length"],
            row["params"].get("heavy"))


def kernel_key(row):
    """Where a row's kernel sorts: by chapter, the chapter's own kernels before the libraries',
    then by step (a chapter of several lessons, as 08, numbers them with param_step), then by
    the other params (05's coarsening factors from small to large), then by name."""
    params = row["params"]
    return (row["chapter"], is_baseline(row["kernel"]), params.get("step", 0),
            sorted(params.items()), row["kernel"])


def sort_rows(rows):
    """Flat rows by kernel_key, op, dtype and n; after them the batched rows, kernel by kernel
    (its params vary with the shape: reduce_rows's automatic choice), then by shape."""
    def key(r):
        if r["layout"] == FLAT:
            return 0, kernel_key(r), r["op"], r["dtype"], r["n"]
        return (1, r["chapter"], is_baseline(r["kernel"]), r["variant_of"] != "", r["kernel"],
                LAYOUTS.index(r["layout"]), r["op"], r["dtype"], r["params"].get("heavy", 0),
                r["length"], r["segments"], r["n"], sorted(r["params"].items()))
    return sorted(rows, key=key)


# ---- Google Benchmark JSON -> bench.csv -----------------------------------------------------

def format_number(x):
    """'' for None, integers without a decimal point, other values with 9 significant digits
    (enough that reading the CSV back loses nothing that any chart or table shows)."""
    if x is None:
        return ""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.9g}"


def write_csv(rows, path, columns=CSV_COLUMNS):
    def cell(value):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, dict):  # params {'unroll': 8.0, 'coarsening': 4.0}: 'coarsening=4;unroll=8'
            return ";".join(f"{key}={format_number(v)}" for key, v in sorted(value.items()))
        return value if isinstance(value, str) else format_number(value)

    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(columns)
        out.writerows([cell(r[column]) for column in columns] for r in rows)


def command_csv(bench_json, out_csv):
    with open_input(bench_json) as f:
        try:
            doc = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InputError(f"{bench_json} is not valid JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError(f"{bench_json} has no 'benchmarks' list: not a Google Benchmark JSON file")

    def counter(entry, key):
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{bench_json}: benchmark {entry['name']!r} has no numeric counter {key!r}")
        return float(value)

    def optional_counter(entry, key):
        """None where the benchmark did not measure it (common/bench.cpp leaves it out, or sets 0)."""
        if key not in entry:
            return None
        value = counter(entry, key)
        return value if math.isfinite(value) and value > 0 else None

    runs, floors, skipped = {}, {}, []  # skipped: 'name: why' for every benchmark left out
    for entry in doc["benchmarks"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise InputError(f"{bench_json}: a benchmark entry has no name")
        name = entry["name"]
        # With --benchmark_repetitions Google Benchmark adds mean/median/stddev rows; the
        # individual runs are kept instead (see the median below).
        if entry.get("run_type") == "aggregate":
            continue
        if entry.get("error_occurred") or entry.get("skipped"):
            why = entry.get("error_message") or entry.get("skip_message") or "error"
            skipped.append(f"{name}: {why}")
            continue
        # Google Benchmark appends '/iterations:1', '/manual_time' and the like to our fields.
        fields = name.split("/")
        is_floor = fields[0] == FLOOR_PREFIX
        if is_floor and (len(fields) < 2 or not fields[1]):
            raise InputError(f"benchmark name {name!r} is not {FLOOR_PREFIX}/<kernel>/...")
        if not is_floor and (len(fields) < 5 or not fields[4].isdigit()):
            raise InputError(f"benchmark name {name!r} is not <chapter>/<kernel>/<op>/<dtype>/<n>")
        row = {key: counter(entry, key) for key in JSON_COUNTERS}
        bad = [key for key, value in row.items() if not math.isfinite(value)]
        if bad or row["time_us"] <= 0:
            skipped.append(f"{name}: non-finite or non-positive {', '.join(bad) or 'time_us'}")
            continue
        row.update({key: optional_counter(entry, key) for key in OPTIONAL_COUNTERS})
        row.update({key: counter(entry, key) if key in entry else None for key in CHECK_COUNTERS})
        if is_floor:
            floors.setdefault(fields[1], []).append(dict(row, kernel=fields[1]))
            continue
        # What the kernel is, as common/bench.cpp says it: the label "variant of <kernel>" and
        # a counter param_<key> per setting.
        label = entry.get("label") or ""
        variant_of = label[len("variant of "):] if label.startswith("variant of ") else ""
        row.update(chapter=fields[0], kernel=fields[1], op=fields[2], dtype=fields[3],
                   n=int(fields[4]), l2_resident=row["l2_resident"] != 0, variant_of=variant_of,
                   params={key[len("param_"):]: counter(entry, key)
                           for key in entry if key.startswith("param_")},
                   layout=FLAT, segments=1, length=int(fields[4]))
        # A batched row says its shape in counters (its name's last field only labels it).
        if "layout_id" in entry:
            layout_id = counter(entry, "layout_id")
            if layout_id not in range(1, len(LAYOUTS)):
                raise InputError(f"{bench_json}: benchmark {name!r} has layout_id {layout_id:g}, "
                                 f"not 1 to {len(LAYOUTS) - 1} ({', '.join(LAYOUTS[1:])})")
            row.update(layout=LAYOUTS[int(layout_id)],
                       **{key: int(counter(entry, key)) for key in BATCHED_COUNTERS})
        runs.setdefault(row_key(row), []).append(row)
    if skipped:
        print(f"plot.py: warning: {len(skipped)} benchmark(s) failed or were skipped and are left "
              f"out:\n  " + "\n  ".join(skipped), file=sys.stderr)
    if not runs:
        raise InputError(f"{bench_json} holds no successful benchmark rows")

    def median_run(rs):
        """One row per key: with repetitions, the run with the median time (as timing.hpp does)."""
        return sorted(rs, key=lambda r: r["time_us"])[len(rs) // 2]

    rows = [median_run(rs) for rs in runs.values()]
    # ratio_to_cub: GB/s over the GB/s of the baseline row with the same op, dtype and n (empty
    # when that row was not measured); a batched row's, over CUB's segmented reduction's at the
    # same shape (empty for columns). The baseline's own rows get 1.
    gbps = {flat_key(r): r["gbps"] for r in rows if r["layout"] == FLAT}
    batched_gbps = {batched_key(r): r["gbps"] for r in rows if r["layout"] != FLAT
                    and r["kernel"] == BATCHED_BASELINE}
    for r in rows:
        if r["layout"] == FLAT:
            base = gbps.get(baseline_for(r["op"], r["dtype"]) + (r["op"], r["dtype"], r["n"]))
        else:
            base = batched_gbps.get(batched_key(r))
        r["ratio_to_cub"] = r["gbps"] / base if base else None
    write_csv(sort_rows(rows), out_csv)
    print(f"wrote {len(rows)} rows to {out_csv}")
    # The floor beside bench.csv. A run without one leaves none: a floor.csv of an earlier run,
    # set against this run's times, would give wrong differences.
    floor_csv = os.path.join(os.path.dirname(out_csv), FLOOR_CSV)
    if floors:
        write_csv([median_run(rs) for _, rs in sorted(floors.items())], floor_csv, FLOOR_COLUMNS)
        print(f"wrote the floor ({', '.join(sorted(floors))}) to {floor_csv}")
    elif os.path.exists(floor_csv):
        os.remove(floor_csv)
        print(f"removed {floor_csv}: this run measured no floor")


# ---- bench.csv and machine.txt --------------------------------------------------------------

# The chapters' numbers changed when segmented reductions became a chapter of their own; a
# bench.csv written under the old numbers names custom operators 12_custom_ops and its segments
# rows 11_batched. Such rows read under today's names, so that tables, charts and `compare` set
# them beside a newer run's.
RENAMED_CHAPTERS = {"12_custom_ops": "13_custom_ops"}
SEGMENTED_CHAPTER = "12_segmented"


def chapter_of(chapter, layout):
    """The chapter a bench.csv row belongs to under today's numbering."""
    if chapter == "11_batched" and layout == "segments":
        return SEGMENTED_CHAPTER
    return RENAMED_CHAPTERS.get(chapter, chapter)


def parse_row(raw, where):
    """A bench.csv line -> a row: n an int, l2_resident a bool, ratio_to_cub a float or None,
    params {key: float}."""
    def number(column):
        try:
            return float(raw[column])
        except (TypeError, ValueError):
            raise InputError(f"{where}: {column} {raw[column]!r} is not a number") from None

    row = {column: raw[column] for column in ("chapter", "kernel", "dtype", "op")}
    row["chapter"] = chapter_of(row["chapter"], raw.get("layout") or FLAT)
    row.update({column: number(column) for column in ("bytes", "time_us", "gbps", "pct_peak")})
    row.update({column: number(column) if raw.get(column) else None
                for column in ("time_p10_us", "time_p90_us", "latency_us", "b2b_us", "graph_us")})
    row.update(n=int(number("n")), l2_resident=raw["l2_resident"] == "true",
               ratio_to_cub=number("ratio_to_cub") if raw["ratio_to_cub"] else None,
               variant_of=raw.get("variant_of") or "", params={}, layout=raw.get("layout") or FLAT)
    if row["layout"] not in LAYOUTS:
        raise InputError(f"{where}: layout {row['layout']!r} is not one of {', '.join(LAYOUTS)}")
    # A flat row, or one from before the shape columns: one segment of n elements.
    row.update(segments=int(number("segments")) if raw.get("segments") else 1,
               length=int(number("length")) if raw.get("length") else row["n"])
    row.update({column: number(column) if raw.get(column) else None for column in CHECK_COUNTERS})
    for item in filter(None, (raw.get("params") or "").split(";")):  # 'coarsening=4;unroll=8'
        key, _, value = item.partition("=")
        try:
            row["params"][key] = float(value)
        except ValueError:
            raise InputError(f"{where}: params {raw['params']!r} is not 'key=number;...'") from None
    return row


def read_csv(path):
    with open_input(path) as f:
        try:
            reader = csv.DictReader(f)
            if not reader.fieldnames:
                raise InputError(f"{path} is empty")
            missing = [c for c in CSV_COLUMNS if c not in reader.fieldnames + OPTIONAL_COLUMNS]
            if missing:
                raise InputError(f"{path} lacks column(s): {', '.join(missing)}")
            rows = {}
            for raw in reader:
                where = f"{path}:{reader.line_num}"
                row = parse_row(raw, where)
                if row_key(row) in rows:
                    raise InputError(f"{where}: duplicate row {row_key(row)}")
                rows[row_key(row)] = row
        except (csv.Error, UnicodeDecodeError) as e:
            raise InputError(f"{path} is not a readable CSV: {e}") from None
    if not rows:
        raise InputError(f"{path} has no data rows")
    return list(rows.values())


class Machine:
    """machine.txt as the benchmark writes it, 'key: value' lines: the GPU's name, its
    bandwidths (theoretical DRAM, measured device-to-device copy) and its L2 size; the charts and
    tables read nothing else of it."""

    def __init__(self, path):
        with open_input(path) as f:
            raw = dict(line.split(":", 1) for line in f if ":" in line)
        raw = {key.strip(): value.strip() for key, value in raw.items()}
        self.gpu = raw.get("gpu") or "unknown GPU"
        for key in ("dram_gbps", "l2_bytes", "copy_gbps"):
            if key not in raw:
                raise InputError(f"{path} lacks '{key}:'")
            try:
                setattr(self, key, float(raw[key]))
            except ValueError:
                raise InputError(f"{path}: {key} {raw[key]!r} is not a number") from None
        self.l2_label = f"L2 = {binary_size(self.l2_bytes)}"


def read_floor(results_dir):
    """RESULTS_DIR/floor.csv's empty kernel as {column: value}, its times floats (None where not
    measured); None when there is no floor.csv (a results folder from before the benchmark timed
    the floor)."""
    path = os.path.join(results_dir, FLOOR_CSV)
    if not os.path.exists(path):
        return None
    with open_input(path) as f:
        try:
            reader = csv.DictReader(f)
            missing = [c for c in FLOOR_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"{path} lacks column(s): {', '.join(missing)}")
            raws = {raw["kernel"]: (raw, f"{path}:{reader.line_num}") for raw in reader}
        except (csv.Error, UnicodeDecodeError) as e:
            raise InputError(f"{path} is not a readable CSV: {e}") from None
    if FLOOR_KERNEL not in raws:
        raise InputError(f"{path} has no {FLOOR_KERNEL} row")
    raw, where = raws[FLOOR_KERNEL]
    floor = {"kernel": FLOOR_KERNEL}
    for column in FLOOR_COLUMNS[1:]:
        try:
            floor[column] = float(raw[column]) if raw[column] else None
        except ValueError:
            raise InputError(f"{where}: {column} {raw[column]!r} is not a number") from None
    if floor["time_us"] is None:
        raise InputError(f"{where}: time_us is empty")
    return floor


def read_results(results_dir):
    """Every row of RESULTS_DIR/bench.csv, flat and batched, and its machine.txt."""
    return (read_csv(os.path.join(results_dir, "bench.csv")),
            Machine(os.path.join(results_dir, "machine.txt")))


def load_results(results_dir):
    """bench.csv's flat rows and machine.txt: what every table and chart of one reduction reads
    (batched_rows has the others)."""
    rows, machine = read_results(results_dir)
    return flat_rows(rows), machine


def flat_rows(rows):
    return [r for r in rows if r["layout"] == FLAT]


def batched_rows(rows):
    """The rows of many reductions at once (chapter 11), sorted by layout, shape, then kernel:
    the lesson's, its variants (in kernel_key order), the library's."""
    kernel_order = {(r["chapter"], r["kernel"]): i for i, r in enumerate(kernel_rows(rows))}
    return sorted((r for r in rows if r["layout"] != FLAT), key=lambda r: (
        LAYOUTS.index(r["layout"]), r["length"], r["segments"], r["params"].get("heavy", 0),
        r["n"], is_baseline(r["kernel"]), r["variant_of"] != "",
        kernel_order[r["chapter"], r["kernel"]]))


# ---- Selections and Markdown tables (scripts/update_readme.py uses these too) ---------------

def select(rows, op, dtype=None):
    return [r for r in rows if r["op"] == op and (dtype is None or r["dtype"] == dtype)]


def kernel_rows(rows):
    """One row per (chapter, kernel) in rows, in kernel_key order: what a table needs to know
    of each kernel (its variant_of and params)."""
    first = {}
    for r in rows:
        first.setdefault((r["chapter"], r["kernel"]), r)
    return sorted(first.values(), key=kernel_key)


def lesson_kernels(rows):
    """The (chapter, kernel) pairs of the lessons' own kernels in rows (no library, no variant),
    in kernel_key order: a chapter's last one is its lead kernel."""
    return [(r["chapter"], r["kernel"]) for r in kernel_rows(rows)
            if not r["variant_of"] and not is_baseline(r["kernel"])]


def kernels_of(rows):
    """The (chapter, kernel) pairs in rows, in kernel_key order (chapter by chapter, CUB's 09
    among them)."""
    return [(r["chapter"], r["kernel"]) for r in kernel_rows(rows)]


def series_of(rows):
    """{(chapter, kernel, dtype): its rows sorted by n}, in kernel_key order (a chart's legend
    lists 08's steps in the lesson's order)."""
    out = {}
    for r in sorted(rows, key=lambda r: r["n"]):
        out.setdefault((r["chapter"], r["kernel"], r["dtype"]), []).append(r)
    return dict(sorted(out.items(), key=lambda item: (kernel_key(item[1][0]), item[0])))


def pick_dram_n(rows):
    """The size the bar chart and README quote: 2^28 when measured, else the largest n (and a
    note saying so, so that a smaller run is never passed off as the 2^28 figure)."""
    ns = {r["n"] for r in rows}
    if DRAM_N in ns:
        return DRAM_N, None
    return max(ns), f"largest measured; {pow2_label(DRAM_N)} not in bench.csv"


def pow2_label(n, tex=False):
    """1048576 -> '2^20' ('$2^{20}$' for a chart); other sizes stay plain numbers."""
    k = n.bit_length() - 1
    if n != 1 << k:
        return str(n)
    return f"$2^{{{k}}}$" if tex else f"2^{k}"


def binary_size(nbytes):
    """4194304 -> '4 MiB': sizes of inputs and caches, in powers of two."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:g} B"


# How each measured field reads in a table.
CELL_FORMATS = {"gbps": "{:.1f}", "pct_peak": "{:.1f}", "ratio_to_cub": "{:.3f}",
                "time_us": "{:.2f}", "latency_us": "{:.2f}", "b2b_us": "{:.2f}", "graph_us": "{:.2f}"}


def format_cell(row, field):
    """A table cell: the field formatted, a trailing '*' when the input sat in L2, '—' when
    there is no value (not measured, or no baseline to compare with)."""
    if row is None or row[field] is None:
        return "—"
    return CELL_FORMATS[field].format(row[field]) + ("*" if row["l2_resident"] else "")


def markdown_table(header, body, text_columns=2):
    """Header and body rows -> Markdown lines; numeric columns (after the first `text_columns`)
    are right-aligned so digits line up in the rendered table."""
    align = ["---"] * text_columns + ["---:"] * (len(header) - text_columns)
    return (["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
            + ["| " + " | ".join(cells) + " |" for cells in body])


def kernel_table(rows, columns, kernels=None):
    """One line per kernel in rows (already one op and dtype), one column per (header, n, field):
    the building block of tables.md, compare.md and the top-level README. kernels: the
    (chapter, kernel) lines in the order wanted, kernels_of(rows) if None."""
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in rows}
    body = [[chapter, f"`{kernel}`"] +
            [format_cell(at.get((chapter, kernel, n)), field) for _, n, field in columns]
            for chapter, kernel in (kernels_of(rows) if kernels is None else kernels)]
    return markdown_table(["Chapter", "Kernel"] + [header for header, _, _ in columns], body)


def sections(rows):
    """The (op, dtype) pairs present, in a reading order: f32 first, sum first."""
    def rank(value, order):
        return (order.index(value), "") if value in order else (len(order), value)
    pairs = {(r["op"], r["dtype"]) for r in rows}
    return sorted(pairs, key=lambda p: (rank(p[1], DTYPE_ORDER), rank(p[0], OP_ORDER)))


def small_ns(part, ns, field):
    """The sizes of ns up to TIME_TABLE_MAX_N at which some row of part has `field` (a bench.csv
    from an older benchmark has no b2b_us, say): the columns of a time table."""
    return [n for n in ns if n <= TIME_TABLE_MAX_N and any(r[field] for r in part if r["n"] == n)]


def distribution(row):
    """Segments' lengths, uniform or heavy-tailed (param_heavy); '' for layouts of one length."""
    if row["layout"] != "segments":
        return ""
    return "heavy-tailed" if row["params"].get("heavy") else "uniform"


def naive_ratio(row, rows):
    """A kernel's GB/s over its naive mapping's (NAIVE_MAPPING) at the same op, dtype and shape,
    found in rows; None for other kernels, or where the naive one was not measured."""
    naive = NAIVE_MAPPING.get(row["kernel"])
    base = next((r for r in rows if (r["chapter"], r["kernel"]) == (row["chapter"], naive)
                 and batched_key(r) == batched_key(row)), None)
    return row["gbps"] / base["gbps"] if base else None


def count_label(count):
    """Rows, segments or a length: 2^k from 2^10 on, where powers of two are the rule; a plain
    number below (2, not 2^1) and for any other count."""
    return pow2_label(count) if count >= 1024 else str(count)


def batched_tables(rows):
    """tables.md's section of the batched rows: per op and dtype, every kernel at every shape."""
    lines = ["## Batched reductions", "",
             "Many reductions in one call: the rows or the columns of a [B, L] matrix, or segments "
             "of varying length (their number, their mean length, and whether the lengths are "
             "uniform or heavy-tailed). GB/s counts the input read once (segments: the elements and "
             "the int64 offsets) and the results written. "
             f"× `{BATCHED_BASELINE}`: GB/s divided by CUB's segmented reduction's at the same "
             "shape (CUB has no column reduction); × naive mapping: "
             + ", ".join(f"`{k}` divided by `{naive}`" for k, naive in NAIVE_MAPPING.items())
             + ", at the same shape.", ""]
    header = ["Layout", "B or segments", "L or mean length", "Lengths", "Kernel", "GB/s",
              "% of DRAM peak", f"× `{BATCHED_BASELINE}`", "× naive mapping"]
    for op, dtype in sections(rows):
        part = select(rows, op, dtype)
        body = [[r["layout"], count_label(r["segments"]), count_label(r["length"]), distribution(r),
                 f"`{r['kernel']}`"] + [format_cell(r, field) for field in ("gbps", "pct_peak")]
                + [format_cell(r, "ratio_to_cub"),
                   format_cell(dict(r, ratio_to_cub=naive_ratio(r, part)), "ratio_to_cub")]
                for r in part]
        lines += [f"### {op}, {dtype}", ""] + markdown_table(header, body, text_columns=5) + [""]
        if any(r["l2_resident"] for r in part):
            lines += [f"\\* {L2_FOOTNOTE}.", ""]
    return lines


def write_tables(results_dir, rows, machine):
    """tables.md of every row: the flat rows' sections, then the batched rows' (if any)."""
    rows, batched = flat_rows(rows), batched_rows(rows)
    lines = [f"# Benchmark tables: {machine.gpu}", "",
             "Generated by `results/plot.py charts` from `bench.csv`; do not edit by hand.",
             f"GB/s counts 10^9 bytes per second; % of peak is relative to the theoretical DRAM "
             f"bandwidth, {machine.dram_gbps:.0f} GB/s.",
             "Bandwidth, % of peak, ratios and the back-to-back time are the steady state: the "
             "median call among calls queued back to back, with no host work between them. The "
             "one-call latency is a single call from an idle GPU, the host's dispatch included. "
             "Where launches matter (L2-resident inputs) two more: 200 calls made in a loop, per "
             "call, the host's dispatch included where it is slower than the GPU; and the same "
             "200 calls captured into one CUDA graph, per call.",
             f"Cells marked `*` are L2-resident: input no larger than L2 ({machine.l2_label}), "
             f"measured hot, so they measure L2, not DRAM, bandwidth; larger inputs are measured "
             f"cold, L2 cleared before every call. `—`: not measured, or no baseline to compare with.",
             ""]
    for op, dtype in sections(rows):
        part = select(rows, op, dtype)
        ns = sorted({r["n"] for r in part})
        lines += [f"## {op}, {dtype}", ""]
        for title, field, columns in (
                ("Bandwidth (GB/s)", "gbps", ns),
                ("% of theoretical DRAM peak", "pct_peak", ns),
                (f"Ratio to `{baseline_for(op, dtype)[1]}` (same op, dtype and n)", "ratio_to_cub", ns),
                (f"Time per call, back to back (µs), n ≤ {pow2_label(TIME_TABLE_MAX_N)}", "time_us",
                 [n for n in ns if n <= TIME_TABLE_MAX_N]),
                (f"Latency of one call from idle, host dispatch included (µs), "
                 f"n ≤ {pow2_label(TIME_TABLE_MAX_N)}", "latency_us",
                 small_ns(part, ns, "latency_us")),
                (f"Time per call, 200 calls in a loop, host dispatch included (µs), "
                 f"n ≤ {pow2_label(TIME_TABLE_MAX_N)}", "b2b_us", small_ns(part, ns, "b2b_us")),
                (f"Time per call, 200 calls in one CUDA graph (µs), "
                 f"n ≤ {pow2_label(TIME_TABLE_MAX_N)}", "graph_us", small_ns(part, ns, "graph_us"))):
            if columns:
                lines += [f"### {title}", ""]
                lines += kernel_table(part, [(pow2_label(n), n, field) for n in columns]) + [""]
                if any(r["l2_resident"] for r in part if r["n"] in columns):
                    lines += [f"\\* {L2_FOOTNOTE}.", ""]
    if batched:
        lines += batched_tables(batched)
    with open(os.path.join(results_dir, "tables.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote tables.md in {results_dir}")


# ---- Charts ---------------------------------------------------------------------------------

def _pyplot():
    # matplotlib is imported here, not at the top, so that `plot.py csv`, `compare` and
    # scripts/update_readme.py run without it; Agg renders without a display (CI, a GPU node).
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


# tab10 reordered so that neighbouring chapters never share a hue family: chapter NN takes entry
# NN - 1 (blue, orange, green, pink, brown, cyan, red, purple, olive), whichever chapters a run
# measured. tab10's grey is left out: greys and black belong to the libraries. Chapter 10, past
# tab10, takes magenta: a saturated colour far from every one of those and from the libraries'.
CHAPTER_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#e377c2", "#8c564b", "#17becf", "#d62728",
                   "#9467bd", "#bcbd22", "#ff00ff"]
LIBRARY_COLORS = {"cub_": "black", "cublas_": "dimgray"}


def chapter_color(chapter, position):
    """The colour of a chapter 'NN_name' (or, without a number, of its position among the chapters)."""
    prefix = chapter.split("_", 1)[0]
    index = int(prefix) - 1 if prefix.isdigit() and int(prefix) > 0 else position
    return CHAPTER_PALETTE[index % len(CHAPTER_PALETTE)]


def _mix(color, white):
    """color moved a fraction `white` of the way to white."""
    from matplotlib.colors import to_rgb
    return tuple(c + (1 - c) * white for c in to_rgb(color))


def kernel_colors(rows):
    """One colour per chapter, the same in every chart; a chapter of several lessons (08's steps)
    shows its earlier kernels in lighter shades of it, its lead kernel in the colour itself. The
    libraries in black (CUB) and grey (cuBLAS), so the yardstick stands apart from the kernels."""
    kernels, lessons = kernels_of(rows), lesson_kernels(rows)
    colors = {}
    for position, chapter in enumerate(dict.fromkeys(chapter for chapter, _ in kernels)):
        base = chapter_color(chapter, position)
        own = [k for k in lessons if k[0] == chapter]
        for k in kernels:  # a variant (the charts leave them out) takes the chapter's colour
            if k[0] == chapter and not is_baseline(k[1]):
                colors[k] = base
        for i, k in enumerate(own):  # the last lesson, the lead kernel, in the colour itself
            colors[k] = _mix(base, 0.65 * (len(own) - 1 - i) / max(1, len(own) - 1))
    for k in kernels:
        if is_baseline(k[1]):
            colors[k] = next(c for prefix, c in LIBRARY_COLORS.items() if k[1].startswith(prefix))
    return colors


def legend_label(chapter, kernel):
    return f"{chapter}: {kernel}" + (" (baseline)" if is_baseline(kernel) else "")


def _save(fig, path):
    # bbox_inches="tight" keeps legends placed outside the axes inside the image.
    fig.savefig(path, dpi=130, bbox_inches="tight")
    _pyplot().close(fig)


def _placeholder(path, title, message):
    """A chart with nothing to show still gets written, saying why, so that the README's image
    links never break."""
    fig, ax = _pyplot().subplots(figsize=(8, 3))
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="dimgray",
            transform=ax.transAxes, wrap=True)
    _save(fig, path)



def _log_bandwidth_axis(ax, rows, machine, title, extra_legend=()):
    """A bandwidth chart's y axis, title, grid and legend. The axis is logarithmic: small sizes
    and short rows reach a few GB/s, which a linear axis would draw as zero. The legend explains
    the marker fill after the series (and any extra (handle, label) pairs)."""
    plt = _pyplot()
    ax.set_yscale("log")
    ax.set_ylim(min(r["gbps"] for r in rows) / 1.5,
                max([machine.dram_gbps] + [r["gbps"] for r in rows]) * 2.2)
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s, log scale)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    handles += [plt.Line2D([], [], color="gray", marker="o", linestyle="none"),
                plt.Line2D([], [], color="gray", marker="o", markerfacecolor="white",
                           linestyle="none")]
    labels += ["filled marker: measured cold (input larger than L2)",
               "hollow marker: L2-resident, measured hot"]
    for handle, label in extra_legend:
        handles.append(handle)
        labels.append(label)
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8.5,
              frameon=False)


def _bandwidth_roofs(ax, machine):
    """Horizontal lines for the theoretical DRAM bandwidth and the measured copy bandwidth,
    labelled on the line itself so the reader needs no legend lookup."""
    # The higher line is labelled above itself, the lower below: the two never overlap.
    for gbps, what, color, style, side in (
            (machine.dram_gbps, "theoretical DRAM", "firebrick", "--", "bottom"),
            (machine.copy_gbps, "measured device-to-device copy", "darkgreen", ":", "top")):
        ax.axhline(gbps, color=color, linestyle=style, linewidth=1.3)
        ax.text(0.01, gbps, f"{what}: {gbps:.0f} GB/s", transform=ax.get_yaxis_transform(),
                color=color, fontsize=9, ha="left", va=side)


def _log2_n_axis(ax, ns, plt):
    """The x axis of n, log2, a tick at every measured size ns (sorted)."""
    ax.set_xscale("log", base=2)
    ticks = ns
    while len(ticks) > 14:  # keep tick labels legible on long sweeps
        ticks = ticks[::2]
    ax.set_xticks(ticks)
    ax.set_xticklabels([pow2_label(n, tex=True) for n in ticks])
    ax.xaxis.set_minor_locator(plt.NullLocator())


def _bandwidth_chart(path, title, series, machine, what, empty, note=""):
    """GB/s vs n on a log2 axis. series: [(label, rows sorted by n, color, linestyle, marker)];
    without any, a placeholder saying `empty`."""
    if not series:
        return _placeholder(path, title, empty)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 6))
    for label, rows, color, style, marker in series:
        ax.plot([r["n"] for r in rows], [r["gbps"] for r in rows], color=color, linestyle=style,
                marker=marker, markersize=5, linewidth=1.6, label=label)
        l2 = [r for r in rows if r["l2_resident"]]  # L2-resident points: hollow markers
        if l2:
            ax.plot([r["n"] for r in l2], [r["gbps"] for r in l2], linestyle="none",
                    marker=marker, markersize=5, color=color, markerfacecolor="white")
    all_rows = [r for s in series for r in s[1]]
    ns = sorted({r["n"] for r in all_rows})
    _log2_n_axis(ax, ns, plt)
    ax.set_xlim(ns[0] / 1.5, ns[-1] * 1.5)
    ax.set_xlabel(f"n ({what}, log scale)")
    _bandwidth_roofs(ax, machine)

    # Where the input fills L2 exactly: a vertical line per element size (f16 fills it at twice
    # the n of f32). Input bytes per element come from the data: bytes counts the input once
    # (both vectors of a dot product) plus a few bytes of output.
    element_sizes = {}
    for _, rows, *_ in series:
        r = max(rows, key=lambda r: r["n"])
        dtypes = element_sizes.setdefault(round(r["bytes"] / r["n"]), [])
        dtypes += sorted({r["dtype"] for r in rows} - set(dtypes))
    marks = sorted((machine.l2_bytes / size, dtypes) for size, dtypes in element_sizes.items())
    for i, (n_l2, dtypes) in enumerate(marks):
        ax.axvline(n_l2, color="slategray", linestyle="-.", linewidth=1.2)
        # Labels sit horizontally at the top. With several lines the first label goes left of
        # its line, the next right of its own, and every further pair a row lower: no overlaps.
        suffix = f" ({'/'.join(dtypes)})" if len(marks) > 1 else ""
        left = len(marks) > 1 and i % 2 == 0
        ax.text(n_l2, 0.985 - 0.045 * (i // 2), f" {machine.l2_label}{suffix} ",
                transform=ax.get_xaxis_transform(), ha="right" if left else "left", va="top",
                fontsize=9, color="slategray")
    # With a single element size, a light band also covers the sizes counted L2-resident
    # (input no larger than L2, measured hot): points there measure L2, not DRAM.
    if len(marks) == 1:
        ax.axvspan(ax.get_xlim()[0], marks[0][0], color="gold", alpha=0.10, linewidth=0)

    extra = ([(plt.Rectangle((0, 0), 1, 1, color="gold", alpha=0.25), "inputs no larger than L2")]
             if len(marks) == 1 else [])
    _log_bandwidth_axis(ax, all_rows, machine, title + note, extra)
    _save(fig, path)


# Line style and marker per element type, where one chart shows several: a kernel keeps its
# colour, the line style and marker tell its element types apart.
DTYPE_STYLE = {"f32": ("-", "o"), "f16": ("--", "s"), "bf16": (":", "^")}


def chart_bandwidth_vs_n(rows, machine, colors, path):
    series = [(legend_label(ch, k), rs, colors[ch, k], "--" if is_baseline(k) else "-", "o")
              for (ch, k, _), rs in series_of(select(rows, "sum", "f32")).items()]
    _bandwidth_chart(path, f"f32 sum: bandwidth vs. input size ({machine.gpu})", series, machine,
                     "f32 elements", "No f32 sum rows in bench.csv.")


def chart_time_vs_n(rows, machine, colors, path):
    """Time per call of the f32 sums against n, log-log: back to back (solid) and one call from
    idle (dotted, the host's dispatch included). Where the two part, the host sets the time."""
    title = f"f32 sum: time per call vs. input size ({machine.gpu})"
    series = series_of(select(rows, "sum", "f32"))
    if not series:
        return _placeholder(path, title, "No f32 sum rows in bench.csv.")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 6))
    for (ch, k, _), rs in series.items():
        ax.plot([r["n"] for r in rs], [r["time_us"] for r in rs], color=colors[ch, k], marker="o",
                markersize=4, linewidth=1.6, label=legend_label(ch, k))
        timed = [r for r in rs if r["latency_us"]]
        ax.plot([r["n"] for r in timed], [r["latency_us"] for r in timed], color=colors[ch, k],
                linestyle=":", linewidth=1.2)
    _log2_n_axis(ax, sorted({r["n"] for rs in series.values() for r in rs}), plt)
    ax.set_yscale("log")
    n_l2 = machine.l2_bytes / 4
    ax.axvline(n_l2, color="slategray", linestyle="-.", linewidth=1.2)
    ax.text(n_l2, 0.985, f" {machine.l2_label} ", transform=ax.get_xaxis_transform(), ha="left",
            va="top", fontsize=9, color="slategray")
    ax.set_xlabel("n (f32 elements, log scale)")
    ax.set_ylabel("time per call (µs, log scale)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    handles += [plt.Line2D([], [], color="gray"), plt.Line2D([], [], color="gray", linestyle=":")]
    labels += ["solid: back to back (steady state)", "dotted: one call from idle, host dispatch included"]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8.5,
              frameon=False)
    _save(fig, path)


def chart_launch_cost(rows, machine, colors, path):
    """Where launches, not bytes, set the time (f32 sums, L2-resident, n ≤ TIME_TABLE_MAX_N): time
    per call of the single-pass chapter, the two-pass one and CUB, one call from idle (left) and
    back to back in a loop (right, the same calls in a CUDA graph dashed), over the floor an empty
    kernel sets, timed the same ways (floor.csv beside bench.csv, where the run measured it)."""
    title = f"f32 sum at small n: time per call, one launch against two and CUB ({machine.gpu})"
    sums = [r for r in select(rows, "sum", "f32") if r["n"] <= TIME_TABLE_MAX_N and r["l2_resident"]]
    if not any(r["chapter"] == SINGLE_PASS_CHAPTER for r in sums):
        return _placeholder(path, title, f"No f32 sum rows of {SINGLE_PASS_CHAPTER} at "
                                         f"n ≤ {pow2_label(TIME_TABLE_MAX_N)} (L2-resident) in "
                                         f"bench.csv.")
    leads = dict(lesson_kernels(sums))  # chapter -> its lead kernel, the last of its lessons
    kernels = [(chapter, leads[chapter]) for chapter in (TWO_PASS_CHAPTER, SINGLE_PASS_CHAPTER)
               if chapter in leads] + [baseline_for("sum", "f32")]
    series = {(ch, k): rs for (ch, k, _), rs in series_of(sums).items() if (ch, k) in kernels}
    # The chart lies in its results folder, next to the floor.csv of the same run.
    floor = read_floor(os.path.dirname(os.path.abspath(path)))
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(14, 6), sharey=True)
    # Per panel: its lines (field, line style, legend suffix) and its floors (field, how much
    # lighter than the floor's grey, label). Graph lines for 10 and CUB only, so that the panel
    # stays legible.
    panels = [(axes[0], "one call from an idle GPU, host dispatch included",
               [("latency_us", "-", "")], [("latency_us", 0.0, "empty kernel")]),
              (axes[1], "back to back: 200 calls in a loop (dashed: in one CUDA graph)",
               [("b2b_us", "-", ""), ("graph_us", "--", ", in a CUDA graph")],
               [("b2b_us", 0.0, "empty kernel"), ("graph_us", 0.5, "empty kernel, in a CUDA graph")])]
    values = []
    for ax, panel_title, lines, floors in panels:
        for field, style, suffix in lines:
            for (ch, k), rs in series.items():
                timed = [r for r in rs if r[field]]
                if timed and not (field == "graph_us" and ch == TWO_PASS_CHAPTER):
                    ax.plot([r["n"] for r in timed], [r[field] for r in timed], color=colors[ch, k],
                            linestyle=style, marker="o", markersize=4, linewidth=1.6,
                            label=legend_label(ch, k) + suffix)
                    values += [r[field] for r in timed]
        # The floors, labelled on the line as the bandwidth roofs are; a white box keeps the
        # label legible where a kernel's line crosses it.
        for field, lighter, label in floors:
            if floor and floor[field]:
                color = _mix("dimgray", lighter)
                ax.axhline(floor[field], color=color, linestyle=":", linewidth=1.4)
                ax.annotate(f"{label}: {floor[field]:.2f} µs", (0.99, floor[field]),
                            xycoords=ax.get_yaxis_transform(), xytext=(0, -3),
                            textcoords="offset points", color=color, fontsize=8.5, ha="right",
                            va="top", bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1))
                values.append(floor[field])
        _log2_n_axis(ax, sorted({r["n"] for r in sums}), plt)
        ax.set_xlabel("n (f32 elements, log scale; every input L2-resident)")
        ax.set_title(panel_title, fontsize=10.5)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8.5, frameon=False)
    axes[0].set_yscale("log")  # the panels share it
    if values:  # room above the lines for the legends
        axes[0].set_ylim(min(values) / 1.5, max(values) * 4)
    axes[0].set_ylabel("time per call (µs, log scale)")
    fig.suptitle(title)
    _save(fig, path)


def chart_dtypes(rows, machine, colors, path):
    """f16/bf16/f32 sums of the chapters that have half-precision rows."""
    sums = [r for r in select(rows, "sum") if r["dtype"] in DTYPE_STYLE]
    chapters = {r["chapter"] for r in sums if r["dtype"] != "f32"}
    part = [r for r in sums if r["chapter"] in chapters]
    series = [(f"{ch}: {k}, {dt}", rs, colors[ch, k], *DTYPE_STYLE[dt])
              for (ch, k, dt), rs in series_of(part).items()]
    _bandwidth_chart(path, f"Sums by element type: bandwidth vs. input size ({machine.gpu})",
                     series, machine, "elements",
                     "No f16 or bf16 sum rows in bench.csv: nothing to compare across element types.")


# A chapter's steps before its lead kernel (08's first three) come in lighter shades of its
# colour; a marker of their own tells them apart. The line style still says the element type.
STEP_MARKERS = ["D", "v", "P", "X", "*"]


def step_markers(rows):
    """{(chapter, kernel): marker} for every lesson kernel before its chapter's lead kernel."""
    lessons = lesson_kernels(rows)
    markers = {}
    for chapter in dict.fromkeys(c for c, _ in lessons):
        earlier = [k for k in lessons if k[0] == chapter][:-1]
        markers.update({k: STEP_MARKERS[i % len(STEP_MARKERS)] for i, k in enumerate(earlier)})
    return markers


def chart_dot(rows, machine, colors, path):
    part = select(rows, "dot")
    several = len({r["dtype"] for r in part}) > 1
    markers = step_markers(part)
    series = []
    for (ch, k, dt), rs in series_of(part).items():
        style, marker = DTYPE_STYLE.get(dt, ("-", "o"))
        series.append((legend_label(ch, k) + (f", {dt}" if several else ""), rs, colors[ch, k],
                       style, markers.get((ch, k), marker)))
    _bandwidth_chart(path, f"Dot products: bandwidth vs. input size ({machine.gpu})", series,
                     machine, "elements per vector", "No dot-product rows in bench.csv.",
                     note="; bytes count both input vectors")


def chart_chapters(rows, machine, colors, path):
    part = select(rows, "sum", "f32")
    if not part:
        return _placeholder(path, f"Chapters ({machine.gpu})", "No f32 sum rows in bench.csv.")
    n, note = pick_dram_n(part)
    bars = [r for r in sort_rows(part) if r["n"] == n]

    fig, ax = _pyplot().subplots(figsize=(max(8, 1.3 * len(bars) + 3), 6))
    xs = range(len(bars))
    drawn = ax.bar(xs, [r["gbps"] for r in bars], edgecolor="black", linewidth=0.6,
                   color=[colors[r["chapter"], r["kernel"]] for r in bars])
    for bar, r in zip(drawn, bars):
        if is_baseline(r["kernel"]):
            bar.set_hatch("//")
            bar.set_facecolor("lightgray")
        ratio = f"{r['ratio_to_cub']:.2f}x CUB" if r["ratio_to_cub"] is not None else "no CUB row"
        text = f"{r['pct_peak']:.1f}% of peak\n{ratio}" + ("\nL2-resident" if r["l2_resident"] else "")
        # A white box keeps the label legible where it crosses the roof lines.
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                    fontsize=8.5, bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1))
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{r['chapter']}\n{r['kernel']}" for r in bars], rotation=30,
                       ha="right", fontsize=8.5)
    _bandwidth_roofs(ax, machine)
    ax.set_ylim(0, max([machine.dram_gbps] + [r["gbps"] for r in bars]) * 1.22)
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s)")
    ax.set_title(f"f32 sum per chapter at n = {pow2_label(n)} ({binary_size(n * 4)} of f32) "
                 f"({machine.gpu})" + (f"\n{note}" if note else ""))
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, path)


# The batched chart: a colour per layout, CUB in its black; a marker per layout (heavy-tailed
# segments their own), and a line style per kind: the lessons solid, CUB dashed, heavy-tailed
# segments dash-dotted.
LAYOUT_COLORS = {"rows": "#1f77b4", "columns": "#ff7f0e", "segments": "#2ca02c"}
LAYOUT_MARKERS = {"rows": "o", "columns": "s", "segments": "^"}


def chart_batched(rows, machine, path):
    """GB/s of the batched f32 sums against L, the length of a row or column or the segments'
    mean length, log2: the lessons' kernels (segments of uniform and heavy-tailed lengths apart)
    and CUB's segmented reduction, under the DRAM and copy bandwidths. The variants are in the
    tables. A kernel measured at several shapes of one length is drawn at the largest n."""
    title = f"Batched f32 sums: bandwidth vs. length ({machine.gpu})"
    series = {}
    for r in sorted(select(rows, "sum", "f32"), key=lambda r: (r["length"], -r["n"])):
        if not r["variant_of"]:
            heavy = bool(r["params"].get("heavy"))
            line = series.setdefault((is_baseline(r["kernel"]), LAYOUTS.index(r["layout"]), heavy,
                                      r["kernel"]), [])
            if not line or line[-1]["length"] != r["length"]:
                line.append(r)
    if not series:
        return _placeholder(path, title, "No batched f32 sum rows in bench.csv.")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 6))
    for (baseline, _, heavy, kernel), line in sorted(series.items()):
        layout = line[0]["layout"]
        color = LIBRARY_COLORS["cub_"] if baseline else LAYOUT_COLORS[layout]
        style = "-." if heavy else "--" if baseline else "-"
        marker = "v" if heavy else LAYOUT_MARKERS[layout]
        shape = f"segments of {distribution(line[0])} lengths" if layout == "segments" else layout
        label = f"{kernel}, {shape}" + (" (baseline)" if baseline else "")
        ax.plot([r["length"] for r in line], [r["gbps"] for r in line], color=color,
                linestyle=style, marker=marker, markersize=5, linewidth=1.6, label=label)
        l2 = [r for r in line if r["l2_resident"]]  # L2-resident points: hollow markers
        if l2:
            ax.plot([r["length"] for r in l2], [r["gbps"] for r in l2], linestyle="none",
                    marker=marker, markersize=5, color=color, markerfacecolor="white")
    shown = [r for line in series.values() for r in line]
    lengths = sorted({r["length"] for r in shown})
    _log2_n_axis(ax, lengths, plt)
    ax.set_xlim(lengths[0] / 1.5, lengths[-1] * 1.5)
    ax.set_xlabel("L: elements per row or column, or the segments' mean length (log scale)")
    _bandwidth_roofs(ax, machine)
    _log_bandwidth_axis(ax, shown, machine, title)
    _save(fig, path)


CHART_DRAWERS = {
    "bandwidth_vs_n.png": chart_bandwidth_vs_n,
    "time_vs_n.png": chart_time_vs_n,
    "launch_cost.png": chart_launch_cost,
    "chapters.png": chart_chapters,
    "dtypes.png": chart_dtypes,
    "dot.png": chart_dot,
}


def charts(results_dir):
    every, machine = read_results(results_dir)
    rows, batched = flat_rows(every), batched_rows(every)
    # The charts draw the lessons' kernels and the libraries'. A variant is measured at a few
    # sizes for a comparison with its lesson kernel, which the tables make better than a line
    # of two points would.
    shown = [r for r in rows if not r["variant_of"]]
    colors = kernel_colors(shown)
    drawn = [name for name, _ in CHARTS if name in CHART_DRAWERS]
    for name in drawn:
        CHART_DRAWERS[name](shown, machine, colors, os.path.join(results_dir, name))
    # The batched chart where the run has batched rows. A run without leaves none: the README
    # links the charts that exist, and one of an earlier run would show other numbers.
    batched_chart = os.path.join(results_dir, BATCHED_CHART)
    if batched:
        chart_batched(batched, machine, batched_chart)
        drawn.append(BATCHED_CHART)
    elif os.path.exists(batched_chart):
        os.remove(batched_chart)
        print(f"removed {batched_chart}: bench.csv has no batched rows")
    variants = [f"{chapter}/{kernel}" for chapter, kernel in
                kernels_of([r for r in every if r["variant_of"]])]
    if variants:
        print(f"charts leave out the variants (tables.md has them): {', '.join(variants)}")
    print(f"wrote {', '.join(drawn)} in {results_dir}")
    write_tables(results_dir, every, machine)


# ---- Comparing two runs ---------------------------------------------------------------------

def compare(results_dir, other_dir):
    # Flat rows, matched on (chapter, kernel, op, dtype, n), so that a run from before the
    # shape and params columns still matches.
    rows = flat_rows(read_csv(os.path.join(results_dir, "bench.csv")))
    other_rows = flat_rows(read_csv(os.path.join(other_dir, "bench.csv")))
    name, other_name = os.path.normpath(results_dir), os.path.normpath(other_dir)
    if os.path.basename(name) != os.path.basename(other_name):  # else the whole paths
        name, other_name = os.path.basename(name), os.path.basename(other_name)
    other = {flat_key(r): r for r in other_rows}
    # Row-shaped records, the ratio in ratio_to_cub, so that kernel_table lays them out; the L2
    # mark follows this run.
    matched = [dict(r, ratio_to_cub=r["gbps"] / other[flat_key(r)]["gbps"])
               for r in rows if flat_key(r) in other]
    if not matched:
        raise InputError(f"no (chapter, kernel, op, dtype, n) in common between {name} and "
                         f"{other_name}")
    lines = [f"# {name} vs. {other_name}", "",
             f"GB/s of {name} divided by GB/s of {other_name}, for the rows both runs measured "
             f"(> 1: {name} is faster). The last column is the geometric mean over sizes.",
             f"Cells marked `*` are {L2_FOOTNOTE} in {name}.", ""]
    for op, dtype in sections(matched):
        part = select(matched, op, dtype)
        table = kernel_table(part, [(pow2_label(n), n, "ratio_to_cub")
                                    for n in sorted({r["n"] for r in part})])
        # The geometric mean, the fair average of ratios, ends each kernel's line.
        table[0] += " geomean |"
        table[1] += "---:|"
        for i, kernel in enumerate(kernels_of(part), 2):
            logs = [math.log(r["ratio_to_cub"]) for r in part if (r["chapter"], r["kernel"]) == kernel]
            table[i] += f" {math.exp(sum(logs) / len(logs)):.2f} |"
        lines += [f"## {op}, {dtype}", ""] + table + [""]
    lines.append(f"Rows only in {name}: {len(rows) - len(matched)}; "
                 f"only in {other_name}: {len(other_rows) - len(matched)}.")
    with open(os.path.join(results_dir, "compare.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---- Command line ---------------------------------------------------------------------------

COMMANDS = {  # name: (function, help, its arguments)
    "csv": (command_csv, "Google Benchmark JSON -> tidy CSV", ["bench_json", "out_csv"]),
    "charts": (charts, "bench.csv + machine.txt -> PNG charts and tables.md", ["results_dir"]),
    "tables": (lambda results_dir: write_tables(results_dir, *read_results(results_dir)),
               "bench.csv + machine.txt -> tables.md (no matplotlib needed)", ["results_dir"]),
    "compare": (compare, "GB/s ratios between two result folders", ["results_dir", "other_dir"]),
}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text, arguments) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        for argument in arguments:
            command.add_argument(argument)
    args = vars(parser.parse_args(argv))
    try:
        COMMANDS[args.pop("command")][0](**args)
    except InputError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # an output file that cannot be written
        print(f"plot.py: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
