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
               "length", "error", "error_bound", "passed", "result", "true_value"]
# A bench.csv from an older benchmark lacks these; it still reads (every kernel then counts as a
# lesson's, every row as flat, and the times it lacks are unknown), so that `compare` can set a
# new run against it.
OPTIONAL_COLUMNS = ["time_p10_us", "time_p90_us", "latency_us", "b2b_us", "graph_us",
                    "variant_of", "params", "layout", "segments", "length", "error", "error_bound",
                    "passed", "result", "true_value"]
FLAT = "flat"
# The layouts in reading order; a batched row's counter layout_id numbers them from 1 on.
LAYOUTS = [FLAT, "rows", "columns", "segments"]
# Counters common/bench.cpp sets on every benchmark row, and those it sets on some only.
JSON_COUNTERS = ["n", "bytes", "time_us", "time_p10_us", "time_p90_us", "latency_us", "gbps",
                 "pct_peak", "l2_resident"]
OPTIONAL_COUNTERS = ["b2b_us", "graph_us"]
# Chapter 13's rows check their result beside the time: the error against float64, its bound, and
# whether it passed (1; 0 failed, a value here, not "not measured"; -1 not checked: a product whose
# bound at this n is 10^-4 or more, its error_bound then -1; an error of 1e300 or more stands for a
# result that is not finite, inf or NaN, where the answer is finite). Where the check is of one
# number: that number (result) and its float64 value (true_value), +-1e300 standing for +-inf.
# Empty on every other row.
CHECK_COUNTERS = ["error", "error_bound", "passed", "result", "true_value"]
# A row whose call may stop before reading its input (chapter 13's early exit) carries the counter
# reads_unknown and no GB/s; scripts/early_exit_bytes.sh counts the bytes it reads with Nsight
# Compute into this file beside bench.csv, and its GB/s are those bytes over its time.
EARLY_EXIT_BYTES = "early_exit_bytes.csv"
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
EQUAL_BYTES_CHART = "dtypes_equal_bytes.png"
CHARTS = [
    ("bytes_in_flight.png", "Bandwidth against bytes in flight per SM, with Little's law"),
    ("bandwidth_vs_n.png", "f32 sum bandwidth vs. input size, log scale, with the chapters that "
                           "reach CUB's bandwidth as multiples of its GB/s on a linear scale"),
    ("time_vs_n.png", "f32 sum time per call vs. input size: chapters 03, 07 and 10, CUB and an "
                      "empty kernel, back to back and one call from idle"),
    ("launch_cost.png", "f32 sum time per call at small n: one call and back to back, single pass "
                        "against two passes, CUB and an empty kernel"),
    ("chapters.png", "Bandwidth per chapter at a DRAM-resident size"),
    ("dtypes.png", "f32, f16 and bf16 sums at a DRAM-resident size: each chapter's lead kernel "
                   "and CUB, a bar per element type"),
    (EQUAL_BYTES_CHART, "Sums of 1 GiB of every element type: chapters 07 and 10 and CUB, "
                               "a bar per kernel, each marked with its GB/s as a multiple of its f32 GB/s"),
    ("dot.png", "Dot products: chapter 08's steps as multiples of cuBLAS's bandwidth, and its "
                "lead kernel in f32, f16 and bf16 against CUB, the bf16 drop marked"),
    (BATCHED_CHART, "f32 sums of many rows, columns or segments at once: bandwidth vs. length, "
                    "and as a multiple of CUB's segmented reduction"),
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
    if op == "sum" and dtype != "f32":
        # The chapters sum half-precision inputs in f32, integers in int64 and f64 in double;
        # CUB's counterpart that also converts each element before adding is TransformReduce
        # with the chapters' Sum, not a plain Sum over the input type.
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


def read_early_exit_bytes(path):
    """early_exit_bytes.csv -> {(op, true_at, n): bytes read}; {} where there is none."""
    if not os.path.exists(path):
        return {}
    with open_input(path) as f:
        counts = {}
        for line, raw in enumerate(csv.DictReader(f), start=2):
            try:
                counts[raw["op"], float(raw["true_at"]), int(raw["n"])] = float(raw["dram_bytes_read"])
            except (KeyError, TypeError, ValueError):
                raise InputError(f"{path}:{line}: not op,true_at,n,dram_bytes_read") from None
    return counts


def bytes_read_into(row, counts, machine):
    """Sets an early exit's bytes, GB/s and % of peak from the bytes it read; returns why not, or ''."""
    read = counts.get((row["op"], row["params"].get("true_at"), row["n"]))
    if read is None or machine is None:
        return (f"its reads are not counted ({EARLY_EXIT_BYTES} and machine.txt beside bench.csv, "
                "from scripts/early_exit_bytes.sh): no GB/s to give")
    row["bytes"] = read
    row["gbps"] = read / (row["time_us"] * 1e3)
    row["pct_peak"] = 100 * row["gbps"] / machine.dram_gbps
    return ""


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

    folder = os.path.dirname(os.path.abspath(out_csv))
    early_exit_counts = read_early_exit_bytes(os.path.join(folder, EARLY_EXIT_BYTES))
    machine_txt = os.path.join(folder, "machine.txt")
    machine = Machine(machine_txt) if early_exit_counts and os.path.exists(machine_txt) else None
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
        if entry.get("reads_unknown"):
            why = bytes_read_into(row, early_exit_counts, machine)
            if why:
                skipped.append(f"{name}: {why}")
                continue
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
    """{(chapter, kernel, dtype): its rows sorted by n}, in kernel_key order (a chart draws 08's
    steps in the lesson's order)."""
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


# The sums measured at equal bytes in every element type (bench/bench_main.cu): chapters 07 and
# 10 and CUB over 16 MiB to 1 GiB, n = bytes / element size; EQUAL_BYTES_CHART's size is 1 GiB.
EQUAL_BYTES = [2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30]
EQUAL_BYTES_CHAPTERS = ["07_two_pass", "10_single_pass"]
ELEMENT_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "u8": 1}


def equal_bytes_lines(rows):
    """[(label, dtype, {input bytes: row})]: chapters 07's and 10's lead kernels and CUB's sum of
    each element type, at the sizes of EQUAL_BYTES that were measured; [] where a run has none
    beyond f32 (an older benchmark)."""
    sums = [r for r in flat_rows(rows) if r["op"] == "sum" and r["dtype"] in ELEMENT_BYTES
            and not r["variant_of"]]
    at = {(r["chapter"], r["kernel"], r["dtype"], r["n"] * ELEMENT_BYTES[r["dtype"]]): r for r in sums}
    leads = {}
    for chapter, kernel in lesson_kernels(sums):
        leads[chapter] = kernel  # a chapter's last is its lead
    kernels = [(c, leads[c]) for c in EQUAL_BYTES_CHAPTERS if c in leads]
    lines = []
    for dtype in ELEMENT_BYTES:
        for chapter, kernel in kernels + [baseline_for("sum", dtype)]:
            found = {b: at[(chapter, kernel, dtype, b)] for b in EQUAL_BYTES if (chapter, kernel, dtype, b) in at}
            if found:
                lines.append(((chapter, kernel), dtype, found))
    if not any(dtype not in ("f32", "f16", "bf16") for _, dtype, _ in lines):
        return []
    return lines


def equal_bytes_table(rows):
    """tables.md's view by bytes: GB/s of each kernel and element type at equal input bytes, and
    at the largest size its GB/s as a multiple of the same kernel's f32 GB/s."""
    lines = equal_bytes_lines(rows)
    if not lines:
        return []
    f32 = {kernel: found for kernel, dtype, found in lines if dtype == "f32"}
    body = []
    for (chapter, kernel), dtype, found in lines:
        cells = [chapter, f"`{kernel}`", dtype] + [format_cell(found.get(b), "gbps") for b in EQUAL_BYTES]
        base = f32.get((chapter, "cub_sum" if is_baseline(kernel) else kernel), {}).get(EQUAL_BYTES[-1])
        last = found.get(EQUAL_BYTES[-1])
        cells.append(CELL_FORMATS["ratio_to_cub"].format(last["gbps"] / base["gbps"]) if last and base else "—")
        body.append(cells)
    header = (["Chapter", "Kernel", "dtype"] + [binary_size(b) for b in EQUAL_BYTES]
              + [f"× its f32 at {binary_size(EQUAL_BYTES[-1])}"])
    return (["## sum, every element type at equal bytes", "",
             "GB/s of each kernel's sum over the same number of input bytes in every element type "
             "(n = bytes / element size): memory moves bytes, so a kernel bound by it should not "
             "care about the type. CUB: `cub_sum` for f32, TransformReduce with the chapters' Sum "
             "for the others. The last column: GB/s at the largest size divided by the same "
             "kernel's f32 GB/s there (CUB's: by `cub_sum`'s).", ""]
            + markdown_table(header, body, text_columns=3) + [""]
            + ([f"\\* {L2_FOOTNOTE}.", ""] if any(r["l2_resident"] for _, _, found in lines
                                                  for r in found.values()) else []))


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
    lines += equal_bytes_table(rows)
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
    """One colour per chapter, the same in every chart, for its kernels (dot.png, the one chart
    of a chapter's several steps, gives the steps before the lead kernel colours of their own:
    step_colors). The libraries in black (CUB) and grey (cuBLAS), so the yardstick stands apart
    from the kernels."""
    kernels = kernels_of(rows)
    colors = {}
    for position, chapter in enumerate(dict.fromkeys(chapter for chapter, _ in kernels)):
        for k in kernels:
            if k[0] == chapter and not is_baseline(k[1]):
                colors[k] = chapter_color(chapter, position)
    for k in kernels:
        if is_baseline(k[1]):
            colors[k] = next(c for prefix, c in LIBRARY_COLORS.items() if k[1].startswith(prefix))
    return colors


def legend_label(chapter, kernel):
    return f"{chapter}: {kernel}" + (" (baseline)" if is_baseline(kernel) else "")


def _save(fig, path):
    # bbox_inches="tight" keeps the labels placed beside the axes inside the image.
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



# ---- Chart furniture: axes, roofs, direct labels --------------------------------------------

ROOFS = (("dram_gbps", "theoretical DRAM", "firebrick", "--", "bottom"),
         ("copy_gbps", "measured device-to-device copy", "darkgreen", ":", "top"))


def _bandwidth_roofs(ax, machine, label=True):
    """Horizontal lines for the theoretical DRAM bandwidth and the measured copy bandwidth,
    labelled on the line itself so the reader needs no legend lookup (label=False: later, by
    _label_roofs, once the series are drawn)."""
    # The higher line is labelled above itself, the lower below: the two never overlap.
    for field, what, color, style, side in ROOFS:
        gbps = getattr(machine, field)
        ax.axhline(gbps, color=color, linestyle=style, linewidth=1.3)
        if label:
            ax.text(0.01, gbps, f"{what}: {gbps:.0f} GB/s", transform=ax.get_yaxis_transform(),
                    color=color, fontsize=9, ha="left", va=side)


def _label_roofs(ax, machine, ends=None):
    """The roofs' labels, each on its own side of its line (DRAM above, copy below), placed by
    _label_on_line: call it once the series and the axes' limits are drawn. ends: as there."""
    for field, what, color, _, side in ROOFS:
        gbps = getattr(machine, field)
        _label_on_line(ax, gbps, f"{what}: {gbps:.0f} GB/s", color, (side,), ends=ends)


def _label_on_line(ax, y, text, color, sides=("bottom", "top"), fontsize=9, ends=None):
    """A horizontal line's label, at y on the side(s) given ('bottom': above the line), at the
    first of a few places along it, left to right, where it crosses no series' line, marker or
    other text (else where it crosses least). Where every place crosses something and ends (a
    list of _end_labels items) is given, the label goes there instead: at the line's right end,
    beside the axes. Returns the label, None when it went to ends."""
    draws = [lambda x=x, side=side: ax.text(x, y, text, transform=ax.get_yaxis_transform(), color=color,
                                            fontsize=fontsize, ha="left", va=side,
                                            bbox=dict(facecolor="white", edgecolor="none", alpha=0.7,
                                                      pad=0.5))
             for x in (0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8) for side in sides]
    cost, label = _cheapest_label(ax, draws)
    if cost >= 0.5 and ends is not None:
        label.remove()
        ends.append((ax.get_xlim()[1], y, text, color))
        return None
    return label


def _cheapest_label(ax, draws):
    """Draws the candidate labels (each a function that draws one and returns it) in turn until
    one crosses nothing (a cost under 0.5), keeping only the cheapest drawn: (its cost, it)."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes, points = _label_obstacles(ax, renderer, True)
    best = None
    for draw in draws:
        label = draw()
        cost = _cost(label.get_window_extent(renderer).extents, boxes, points, [])
        if best is None or cost < best[0]:
            if best:
                best[1].remove()
            best = (cost, label)
        else:
            label.remove()
        if cost < 0.5:
            break
    return best


def _log2_n_axis(ax, ns, plt, min_gap=0.6):
    """The x axis of n (or a length), log2, a tick at the measured sizes ns (sorted): powers of two
    first, then any other size at least min_gap (in powers of two) from every tick, so that no
    two labels collide (a mean length of 34 beside 2^5 gets none: the tables have it)."""
    ax.set_xscale("log", base=2)
    ticks = list(ns)
    while len(ticks) > 14:  # keep tick labels legible on long sweeps
        ticks = ticks[::2]
    chosen = []
    for n in sorted(ticks, key=lambda n: (n & (n - 1) != 0, n)):
        if all(abs(math.log2(n) - math.log2(c)) >= min_gap for c in chosen):
            chosen.append(n)
    chosen.sort()
    ax.set_xticks(chosen)
    ax.set_xticklabels([pow2_label(n, tex=True) for n in chosen])
    ax.xaxis.set_minor_locator(plt.NullLocator())


def _l2_marks(ax, series, machine, band=True, text=True):
    """Where the input fills L2 exactly: a vertical line per element size (f16 fills it at twice
    the n of f32). Input bytes per element come from the data: bytes counts the input once (both
    vectors of a dot product) plus a few bytes of output. With a single element size, a light
    band also covers the sizes counted L2-resident (input no larger than L2, measured hot)."""
    element_sizes = {}
    for rows in series:
        r = max(rows, key=lambda r: r["n"])
        dtypes = element_sizes.setdefault(round(r["bytes"] / r["n"]), [])
        dtypes += sorted({r["dtype"] for r in rows} - set(dtypes))
    marks = sorted((machine.l2_bytes / size, dtypes) for size, dtypes in element_sizes.items())
    for i, (n_l2, dtypes) in enumerate(marks):
        ax.axvline(n_l2, color="slategray", linestyle="-.", linewidth=1.2)
        if not text:
            continue
        # Labels sit horizontally at the top. With several lines the first label goes left of
        # its line, the next right of its own, and every further pair a row lower: no overlaps.
        suffix = f" ({'/'.join(dtypes)})" if len(marks) > 1 else ""
        left = len(marks) > 1 and i % 2 == 0
        ax.text(n_l2, 0.985 - 0.06 * (i // 2), f" {machine.l2_label}{suffix} ",
                transform=ax.get_xaxis_transform(), ha="right" if left else "left", va="top",
                fontsize=9, color="slategray")
    if band and len(marks) == 1:
        ax.axvspan(ax.get_xlim()[0], marks[0][0], color="gold", alpha=0.10, linewidth=0)
    return marks


def _marker_note(ax, gold=False):
    """What a marker's fill says, written in the chart (it replaces two legend entries), in the
    first corner of the axes where it covers no series, marker or text: call it once the series
    and the axes' limits are drawn."""
    text = "hollow markers: L2-resident, measured hot; filled: larger than L2, measured cold"
    if gold:
        text += "\ngold: inputs no larger than L2"
    draws = [lambda x=x, y=y, ha=ha, va=va: ax.text(x, y, text, transform=ax.transAxes, ha=ha, va=va,
                                                    fontsize=8, color="dimgray",
                                                    bbox=dict(facecolor="white", edgecolor="none",
                                                              alpha=0.85, pad=1.5))
             for x, y, ha, va in ((0.99, 0.03, "right", "bottom"), (0.01, 0.86, "left", "top"),
                                  (0.01, 0.03, "left", "bottom"), (0.99, 0.86, "right", "top"),
                                  (0.5, 0.03, "center", "bottom"), (0.5, 0.86, "center", "top"))]
    return _cheapest_label(ax, draws)[1]


def _plot_series(ax, x, y, rows, color, style="-", marker="o", label=None, linewidth=1.6,
                 markersize=5):
    """One line of a chart, its L2-resident points hollow (the same rows' l2_resident)."""
    ax.plot(x, y, color=color, linestyle=style, marker=marker, markersize=markersize,
            linewidth=linewidth, label=label)
    hollow = [(a, b) for a, b, r in zip(x, y, rows) if r["l2_resident"]]
    if hollow:
        ax.plot(*zip(*hollow), linestyle="none", marker=marker, markersize=markersize,
                color=color, markerfacecolor="white")


def _log_gbps_axis(ax, rows, machine, ylabel=True):
    """A bandwidth panel's y axis: logarithmic, since small sizes and short rows reach a few GB/s,
    which a linear axis would draw as zero; room above for the roofs' labels."""
    ax.set_yscale("log")
    ax.set_ylim(min(r["gbps"] for r in rows) / 1.5,
                max([machine.dram_gbps] + [r["gbps"] for r in rows]) * 2.2)
    if ylabel:
        ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s, log scale)")
    ax.grid(True, which="major", alpha=0.3)


def series_count(ax):
    """The series a panel draws: its labelled lines, bars and bands (what a legend would list).
    Roofs, floors, L2 marks and hollow markers are unlabelled furniture."""
    import matplotlib.container
    artists = (ax.get_lines() + ax.collections
               + [c for c in ax.containers if isinstance(c, matplotlib.container.BarContainer)])
    return len({a.get_label() for a in artists if a.get_label() and not a.get_label().startswith("_")})


# Direct labels: a series is named by text beside it, not by a legend. A line's label sits right
# of its last point (_end_labels: labels that would overlap stack in the order of their points);
# a point's label sits at the first of a list of candidate offsets around it where it covers no
# other label, marker, text or legend, nor a series' line (_place_labels). One moved off its
# anchor gets a thin leader line back to it. DIRECT_LABEL is the gid the tests find them by.
DIRECT_LABEL = "direct_label"
LABEL_BOX = dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none", alpha=0.85)


def ring_candidates(radii=(5, 11, 18, 26, 36, 48, 62, 78, 96, 116, 138),
                    angles=(0, -25, 25, -50, 50, 180, -155, 155, -90, 90, -130, 130)):
    """Around a point: right first, then the other sides, further out ring by ring."""
    out = []
    for r in radii:
        for a in angles:
            dx, dy = r * math.cos(math.radians(a)), r * math.sin(math.radians(a))
            ha = "left" if dx > 0.3 * r else "right" if dx < -0.3 * r else "center"
            out.append((dx, dy, ha))
    return out


def _label_obstacles(ax, renderer, avoid_lines):
    """What a label must not cover, in display pixels: boxes (markers, texts, the legend) and
    points sampled every few pixels along the lines."""
    import numpy as np
    from matplotlib.collections import PathCollection
    px = ax.figure.dpi / 72
    boxes, points = [], []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if line.get_marker() not in (None, "", " ", "None", "none"):
            r = line.get_markersize() * px / 2 + 1
            boxes += [(x - r, y - r, x + r, y + r) for x, y in xy]
        if (avoid_lines and not line.get_label().startswith("_") and len(xy) > 1
                and line.get_linestyle() not in ("None", "", " ", "none")):
            for a, b in zip(xy[:-1], xy[1:]):
                steps = max(1, int(np.hypot(*(b - a)) / 3))
                points.append(a + (b - a) * np.linspace(0, 1, steps + 1)[:, None])
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):  # a scatter's points
            xy = coll.get_offset_transform().transform(coll.get_offsets())
            r = math.sqrt(max(coll.get_sizes())) * px / 2 + 1
            boxes += [(x - r, y - r, x + r, y + r) for x, y in xy]
    boxes += [tuple(t.get_window_extent(renderer).extents) for t in ax.texts]
    if ax.get_legend():
        boxes.append(tuple(ax.get_legend().get_window_extent(renderer).extents))
    return (np.array(boxes, dtype=float).reshape(-1, 4),
            np.concatenate(points) if points else np.zeros((0, 2)))


def _overlap(box, boxes):
    """The area box shares with each of boxes (an (n, 4) array of x0, y0, x1, y1), summed."""
    import numpy as np
    if not len(boxes):
        return 0.0
    w = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    h = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    return float((np.clip(w, 0, None) * np.clip(h, 0, None)).sum())


def _cost(box, boxes, points, taken):
    """How much a label's box (display pixels) covers: labels placed before (taken) weigh most,
    then markers and texts (boxes), then the points sampled along the lines."""
    import numpy as np
    cost = 50 * _overlap(box, np.array(taken, dtype=float).reshape(-1, 4)) + 10 * _overlap(box, boxes)
    if len(points):
        cost += 20 * int(((points[:, 0] > box[0]) & (points[:, 0] < box[2])
                          & (points[:, 1] > box[1]) & (points[:, 1] < box[3])).sum())
    return cost


def _place_labels(ax, items, candidates, inside=True, avoid_lines=True, taken=None,
                  fontsize=8.5, leader=9, arrowstyle="-"):
    """Direct labels, items [(x, y, text, color)] in data coordinates, placed in that order, each
    at the first candidate (dx, dy, ha), offsets in points, that overlaps nothing (else the least
    overlapping); a label off its anchor gets a leader line, which crosses no label or marker
    where a place allows. inside: the labels stay within the axes; avoid_lines: nor do they cross
    a series' line (a labelled one: roofs and floors are labelled on themselves). taken: boxes
    (display pixels) of labels placed before, in this axes or another one of the figure; the
    new ones are appended."""
    import numpy as np
    if not items:
        return []
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72
    boxes, points = _label_obstacles(ax, renderer, avoid_lines)
    taken = [] if taken is None else taken
    frame = ax.get_window_extent(renderer).extents
    pad = 0.15 * fontsize * px
    placed = []
    leaders = np.zeros((0, 2))  # points along the leader lines drawn so far

    def leader_points(box, anchor):
        """Points every 3 pixels along a leader, from the box's center (where matplotlib starts
        it) to the anchor, those outside the box."""
        center = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])
        steps = max(2, int(np.hypot(*(anchor - center)) / 3))
        line = center + (anchor - center) * np.linspace(0, 1, steps)[:, None]
        return line[~((line[:, 0] >= box[0]) & (line[:, 0] <= box[2])
                      & (line[:, 1] >= box[1]) & (line[:, 1] <= box[3]))]

    for x, y, text, color in items:
        probe = fig.text(0, 0, text, fontsize=fontsize)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        w, h = extent.width + 2 * pad, extent.height + 2 * pad
        ax_x, ax_y = ax.transData.transform((x, y))
        best = None
        for dx, dy, ha in candidates:
            cx, cy = ax_x + dx * px, ax_y + dy * px
            x0 = cx - pad if ha == "left" else cx - w + pad if ha == "right" else cx - w / 2
            box = (x0, cy - h / 2, x0 + w, cy + h / 2)
            cost = _cost(box, boxes, np.concatenate([points, leaders]), taken)
            if math.hypot(dx, dy) > leader:  # its leader: across no label or marker
                line = leader_points(box, np.array([ax_x, ax_y]))[:-2]
                for other in taken + [tuple(b) for b in boxes]:
                    cost += 20 * int(((line[:, 0] > other[0]) & (line[:, 0] < other[2])
                                      & (line[:, 1] > other[1]) & (line[:, 1] < other[3])).sum())
            if inside:
                clipped = (max(box[0], frame[0]), max(box[1], frame[1]),
                           min(box[2], frame[2]), min(box[3], frame[3]))
                outside = w * h - max(0, clipped[2] - clipped[0]) * max(0, clipped[3] - clipped[1])
                cost += 50 * outside if outside > 0.5 else 0  # not a rounding error's sliver
            if best is None or cost < best[0]:
                best = (cost, dx, dy, ha, box)
            if cost < 0.5:
                break
        _, dx, dy, ha, box = best
        far = math.hypot(dx, dy) > leader
        label = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha,
                            va="center", fontsize=fontsize, color=color, bbox=LABEL_BOX,
                            annotation_clip=False, zorder=6, gid=DIRECT_LABEL,
                            arrowprops=dict(arrowstyle=arrowstyle, color=color, linewidth=0.7,
                                            shrinkA=0, shrinkB=3) if far else None)
        taken.append(box)
        if far:
            leaders = np.concatenate([leaders, leader_points(box, np.array([ax_x, ax_y]))])
        placed.append(label)
    return placed


def _end_labels(ax, items, fontsize=8.5, gap=1.0):
    """Direct labels at the ends of lines, items [(x, y, text, color)] in data coordinates: each
    right of its line's last point, level with it where it overlaps no other label. Labels that
    would overlap stack in the order of their points, as close to them as they fit, each with a
    leader line back to its point, so that no two leaders cross; a stack stays beside its axes."""
    if not items:
        return []
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72
    pad = 0.15 * fontsize * px
    sizes = []
    for _, _, text, _ in items:
        probe = fig.text(0, 0, text, fontsize=fontsize)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        sizes.append((extent.width + 2 * pad, extent.height + 2 * pad))
    anchors = [ax.transData.transform((x, y)) for x, y, _, _ in items]
    near, far = 6, 16  # points right of the line's end: level, stacked
    # Columns: the labels whose boxes could share some x; each column stacks on its own.
    spans = [(a[0] + near * px - pad, a[0] + far * px + w) for a, (w, _) in zip(anchors, sizes)]
    column = list(range(len(items)))
    for i in range(len(items)):
        for j in range(i):
            if spans[i][0] < spans[j][1] and spans[j][0] < spans[i][1]:
                old, new = column[i], column[j]
                column = [new if c == old else c for c in column]
    frame = ax.get_window_extent(renderer).extents
    centers = [a[1] for a in anchors]
    alone = [True] * len(items)  # in a cluster of its own: not stacked with another label
    cluster_of = list(range(len(items)))

    def stack(cluster):
        """A cluster's label centers, stacked upward in its order, as near their points as fits."""
        rel, top = [], 0.0
        for i in cluster:
            rel.append(top + sizes[i][1] / 2)
            top += sizes[i][1] + gap
        total = top - gap
        bottom = sum(anchors[i][1] - r for i, r in zip(cluster, rel)) / len(cluster)
        bottom = min(max(bottom, frame[1] - 20 * px), frame[3] + 20 * px - total)
        return [bottom + r for r in rel], bottom, bottom + total

    for c in set(column):
        clusters = []
        for i in sorted((i for i in range(len(items)) if column[i] == c), key=lambda i: anchors[i][1]):
            clusters.append([i])
            while len(clusters) > 1 and stack(clusters[-2])[2] + gap > stack(clusters[-1])[1]:
                clusters[-2:] = [clusters[-2] + clusters[-1]]
        for cluster in clusters:
            for i, y in zip(cluster, stack(cluster)[0]):
                centers[i] = y
                alone[i] = len(cluster) == 1
                cluster_of[i] = cluster[0]
    # A label not stacked with another that crosses a series' line or marker where it sits
    # moves up or down, the least it must, with a leader line, clear of the other labels.
    boxes, points = _label_obstacles(ax, renderer, True)

    def box(i, center, dx):
        x0 = anchors[i][0] + dx * px - pad
        return (x0, center - sizes[i][1] / 2, x0 + sizes[i][0], center + sizes[i][1] / 2)
    for i in range(len(items)):
        others = [box(j, centers[j], far) for j in range(len(items)) if j != i]
        if not alone[i] or _cost(box(i, centers[i], near), boxes, points, others) == 0:
            continue
        for step in range(1, 9):
            found = [y for y in (anchors[i][1] - step * sizes[i][1] / 2,
                                 anchors[i][1] + step * sizes[i][1] / 2)
                     if _cost(box(i, y, far), boxes, points, others) == 0]
            if found:
                centers[i] = found[0]
                break
    labels = []
    shifted = [abs(centers[i] - anchors[i][1]) > 1.5 for i in range(len(items))]
    for c in set(cluster_of):
        members = [i for i in range(len(items)) if cluster_of[i] == c]
        moved = any(shifted[i] for i in members)  # a stack's labels line up, all with leaders
        for i in members:
            x, y, text, color = items[i]
            shift = shifted[i]
            labels.append(ax.annotate(
                text, (x, y), xytext=(far if moved else near, (centers[i] - anchors[i][1]) / px),
                textcoords="offset points", ha="left", va="center", fontsize=fontsize,
                color=color, bbox=LABEL_BOX, annotation_clip=False, zorder=6, gid=DIRECT_LABEL,
                arrowprops=dict(arrowstyle="-", color=color, linewidth=0.7, shrinkA=0, shrinkB=3)
                if shift or moved else None))
    return labels


def direct_labels(ax):
    """The direct labels of a panel (the tests read them)."""
    return [t for t in ax.texts if t.get_gid() == DIRECT_LABEL]


def _chapter_numbers(chapters):
    """['05_coarsened', '06_warp_shuffle', '07_two_pass', '10_single_pass'] -> '05–07 and 10':
    the chapters' numbers, three or more in a row as a range."""
    numbers = [c.split("_", 1)[0] for c in chapters]
    runs = []
    for n in numbers:
        if runs and n.isdigit() and runs[-1][-1].isdigit() and int(n) == int(runs[-1][-1]) + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}–{r[-1]}" if len(r) >= 3 else ", ".join(r) for r in runs]
    text = ", ".join(parts)
    if ", " in text:
        head, _, tail = text.rpartition(", ")
        text = f"{head} and {tail}"
    return text


def _group_names(chapters):
    """Chapters as a title names them, in chapter order: the lessons by number
    (_chapter_numbers), the library's chapter as CUB, last."""
    lessons = sorted(c for c in chapters if c != CUB_CHAPTER)
    names = [_chapter_numbers(lessons)] if lessons else []
    names += ["CUB"] if CUB_CHAPTER in chapters else []
    text = " and ".join(names) if len(names) < 2 or " and " not in names[0] else \
        names[0].replace(" and ", ", ") + " and CUB"
    return ("chapter " if len(lessons) == 1 else "chapters " if lessons else "") + text


def short_label(chapter, kernel):
    """A direct label: a lesson by its chapter, a library call by its name."""
    return f"{kernel} (baseline)" if is_baseline(kernel) else chapter


# Line style and marker per element type, where one chart shows several: a kernel keeps its
# colour, the line style and marker tell its element types apart. Where the element type is what
# a chart compares (dtypes.png's bars, dot.png's lower panel), it has a colour of its own.
DTYPE_STYLE = {"f32": ("-", "o"), "f16": ("--", "s"), "bf16": (":", "^")}
DTYPE_COLORS = {"f32": "#3a5f8f", "f16": "#e08214", "bf16": "#1b9e77"}
# A lesson at no less than this fraction of CUB's GB/s at the DRAM size is "at CUB's bandwidth":
# bandwidth_vs_n.png draws those as one band on its log axis and each apart in its × CUB panel.
CLOSE_TO_CUB = 0.9
BAND_COLOR, BAND_TEXT = "#9c8fd0", "#5a4a9e"


def cub_ratios(rows, op="sum", dtype="f32"):
    """{(chapter, kernel): {n: its GB/s ÷ the baseline's GB/s at the same n}} for the lessons in
    rows, computed from the two rows' GB/s; empty where the baseline has no rows."""
    base = baseline_for(op, dtype)
    cub = {r["n"]: r["gbps"] for r in select(rows, op, dtype) if (r["chapter"], r["kernel"]) == base}
    out = {}
    for r in sort_rows(select(rows, op, dtype)):
        if not is_baseline(r["kernel"]) and r["n"] in cub:
            out.setdefault((r["chapter"], r["kernel"]), {})[r["n"]] = r["gbps"] / cub[r["n"]]
    return out


def near_cub(rows, n):
    """The f32 sum lessons at n, (chapter, kernel, × CUB) each, in two lists: those at no less
    than CLOSE_TO_CUB of CUB's GB/s, and the others."""
    at = [(ch, k, ratios[n]) for (ch, k), ratios in cub_ratios(rows).items() if n in ratios]
    return [a for a in at if a[2] >= CLOSE_TO_CUB], [a for a in at if a[2] < CLOSE_TO_CUB]


def _span(values, fmt="{:.2f}"):
    """'0.13–0.40' (one value alone: '0.13')."""
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


def cub_message(rows, n):
    """The f32 sum's story at n in one line: which chapters run at CUB's bandwidth, which below."""
    close, far = near_cub(rows, n)
    parts = [f"{_group_names([c for c, _, _ in group])} {'at' if i else 'run at'} "
             f"{_span([r for _, _, r in group])}× CUB"
             for i, group in enumerate(g for g in (close, far) if g)]
    return f"f32 sum at n = {pow2_label(n)}: " + ", ".join(parts) if parts else "f32 sum"


def _suptitle(fig, text):
    """A figure's title, one message, just above its top panel's own title."""
    fig.subplots_adjust(top=1 - 0.7 / fig.get_figheight())
    fig.suptitle(text, y=1 - 0.12 / fig.get_figheight(), va="top")


def _finish_n_axis(ax, ns, plt, what):
    """An x axis of n: log2, a tick at the measured sizes, half a power of two of room each side."""
    _log2_n_axis(ax, ns, plt)
    ax.set_xlim(ns[0] / 1.5, ns[-1] * 1.5)
    ax.set_xlabel(f"n ({what}, log scale)")


def chart_bandwidth_vs_n(rows, machine, colors, path):
    """GB/s of the f32 sums against n. The upper panel, log-log, draws the chapters below CUB's
    bandwidth and CUB itself, and those at it (CLOSE_TO_CUB at the DRAM size) as one band, where
    a log axis would merge their lines anyway; the lower panel, linear, draws each of those as a
    multiple of CUB's GB/s at the same n, where their differences show."""
    part = select(rows, "sum", "f32")
    if not part:
        return _placeholder(path, f"f32 sum: bandwidth vs. input size ({machine.gpu})",
                            "No f32 sum rows in bench.csv.")
    plt = _pyplot()
    series = {(ch, k): rs for (ch, k, _), rs in series_of(part).items()}
    n_dram, _ = pick_dram_n(part)
    close, _ = near_cub(part, n_dram)
    grouped = [(ch, k) for ch, k, _ in close] if len(close) >= 2 else []
    ratios = cub_ratios(part)
    ns = sorted({r["n"] for r in part})
    if grouped:
        fig, (ax, ratio_ax) = plt.subplots(2, 1, figsize=(11, 10), sharex=True,
                                           gridspec_kw=dict(height_ratios=[3, 2], hspace=0.14))
    else:
        fig, ax = plt.subplots(figsize=(11, 6.5))
    _suptitle(fig, f"{cub_message(part, n_dram)} ({machine.gpu})")  # before the labels: it
    # moves the axes, and the labels are placed in pixels
    ends = []
    for (ch, k), rs in series.items():
        if (ch, k) in grouped:
            continue
        _plot_series(ax, [r["n"] for r in rs], [r["gbps"] for r in rs], rs, colors[ch, k],
                     "--" if is_baseline(k) else "-", label=legend_label(ch, k))
        ends.append((rs[-1]["n"], rs[-1]["gbps"], short_label(ch, k), colors[ch, k]))
    if grouped:
        gbps = {key: {r["n"]: r["gbps"] for r in series[key]} for key in grouped}
        band_ns = [n for n in ns if all(n in gbps[key] for key in grouped)]
        lo = [min(gbps[key][n] for key in grouped) for n in band_ns]
        hi = [max(gbps[key][n] for key in grouped) for n in band_ns]
        numbers = _chapter_numbers([ch for ch, _ in grouped])
        ax.fill_between(band_ns, lo, hi, color=BAND_COLOR, alpha=0.35, linewidth=0,
                        label=f"chapters {numbers}")
        for edge in (lo, hi):
            ax.plot(band_ns, edge, color=BAND_COLOR, linewidth=0.8)
        ends.append((band_ns[-1], math.sqrt(lo[-1] * hi[-1]), f"{numbers}: × CUB below",
                     BAND_TEXT))
    _finish_n_axis(ax, ns, plt, "f32 elements")
    if grouped:
        ax.set_xlabel("")
    _bandwidth_roofs(ax, machine, label=False)
    _log_gbps_axis(ax, part, machine)
    marks = _l2_marks(ax, list(series.values()), machine)
    _marker_note(ax, gold=len(marks) == 1)
    ax.set_title("GB/s against n, log scales", fontsize=10.5)
    _label_roofs(ax, machine, ends)
    _end_labels(ax, ends)
    if grouped:
        ratio_ends = []
        for key in grouped:
            rs = [r for r in series[key] if r["n"] in ratios.get(key, {})]
            ys = [ratios[key][r["n"]] for r in rs]
            _plot_series(ratio_ax, [r["n"] for r in rs], ys, rs, colors[key],
                         label=legend_label(*key))
            ratio_ends.append((rs[-1]["n"], ys[-1], short_label(*key), colors[key]))
        base = baseline_for("sum", "f32")[1]
        ratio_ax.axhline(1.0, color=LIBRARY_COLORS["cub_"], linestyle="--", linewidth=1.3)
        values = [v for key in grouped for v in ratios.get(key, {}).values()] + [1.0]
        span = max(values) - min(values) or 0.1
        ratio_ax.set_ylim(min(values) - 0.08 * span, max(values) + 0.12 * span)
        ratio_ax.set_ylabel(f"× CUB: GB/s ÷ {base}'s at the same n (linear)")
        ratio_ax.grid(True, which="major", alpha=0.3)
        _l2_marks(ratio_ax, [series[key] for key in grouped], machine, text=False)
        ratio_ax.set_xlim(ns[0] / 1.5, ns[-1] * 1.5)
        ratio_ax.set_title(f"chapters {_chapter_numbers([ch for ch, _ in grouped])} against "
                           f"CUB, linear: where the log axis above merges them", fontsize=10.5)
        ratio_ax.set_xlabel("n (f32 elements, log scale)")
        _label_on_line(ratio_ax, 1.0, f"CUB ({base}) = 1", LIBRARY_COLORS["cub_"], ends=ratio_ends)
        _end_labels(ratio_ax, ratio_ends)
    _save(fig, path)


# time_vs_n.png draws these chapters' lead kernels, CUB and the empty kernel: 03's tree in shared
# memory (a launch per pass until one value is left), 07's two passes and 10's single pass.
TIME_CHAPTERS = ("03_shared", TWO_PASS_CHAPTER, SINGLE_PASS_CHAPTER)


def flat_time_limit(series):
    """The largest n up to which every kernel's time per call stays within twice its time at
    its smallest n: where launches, not bytes, set the time. series: {key: rows sorted by n}."""
    limits = []
    for rs in series.values():
        first = rs[0]["time_us"]
        n = rs[0]["n"]
        for r in rs[1:]:
            if r["time_us"] > 2 * first:
                break
            n = r["n"]
        limits.append(n)
    return min(limits)


def chart_time_vs_n(rows, machine, colors, path):
    """Time per call of the f32 sums against n, log-log, for TIME_CHAPTERS, CUB and the empty
    kernel (floor.csv beside bench.csv): back to back (solid) and one call from idle (dotted,
    the host's dispatch included). Where the two part, the host sets the time."""
    part = select(rows, "sum", "f32")
    leads = dict(lesson_kernels(part))
    kernels = [(ch, leads[ch]) for ch in TIME_CHAPTERS if ch in leads] + [baseline_for("sum", "f32")]
    series = {(ch, k): rs for (ch, k, _), rs in series_of(part).items() if (ch, k) in kernels}
    if not series:
        return _placeholder(path, f"f32 sum: time per call vs. input size ({machine.gpu})",
                            "No f32 sum rows in bench.csv.")
    floor = read_floor(os.path.dirname(os.path.abspath(path)))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 6.5))
    ends = []
    for (ch, k), rs in series.items():
        ax.plot([r["n"] for r in rs], [r["time_us"] for r in rs], color=colors[ch, k], marker="o",
                markersize=4, linewidth=1.6, linestyle="--" if is_baseline(k) else "-",
                label=legend_label(ch, k))
        timed = [r for r in rs if r["latency_us"]]
        ax.plot([r["n"] for r in timed], [r["latency_us"] for r in timed], color=colors[ch, k],
                linestyle=":", linewidth=1.2, label="_one call from idle")
        ends.append((rs[-1]["n"], rs[-1]["time_us"], short_label(ch, k), colors[ch, k]))
    if floor:
        for field, style, what, side in (("time_us", "-", "back to back", "top"),
                                         ("latency_us", ":", "one call from idle", "bottom")):
            if floor[field]:
                ax.axhline(floor[field], color="dimgray", linestyle=style, linewidth=1.2,
                           label="empty kernel" if field == "time_us" else "_empty kernel, one call")
                ax.text(0.99, floor[field], f"empty kernel, {what}: {floor[field]:.2f} µs",
                        transform=ax.get_yaxis_transform(), ha="right", va=side, fontsize=8.5,
                        color="dimgray")
    ns = sorted({r["n"] for rs in series.values() for r in rs})
    _finish_n_axis(ax, ns, plt, "f32 elements")
    ax.set_yscale("log")
    n_l2 = machine.l2_bytes / 4
    ax.axvline(n_l2, color="slategray", linestyle="-.", linewidth=1.2)
    ax.text(n_l2, 0.985, f" {machine.l2_label} ", transform=ax.get_xaxis_transform(), ha="left",
            va="top", fontsize=9, color="slategray")
    ax.set_ylabel("time per call (µs, log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend([plt.Line2D([], [], color="gray"), plt.Line2D([], [], color="gray", linestyle=":")],
              ["solid (CUB dashed): back to back, the steady state",
               "dotted: one call from idle, host dispatch included"],
              loc="upper left", fontsize=8.5, frameon=False)
    flat = flat_time_limit(series)
    times = [r["time_us"] for rs in series.values() for r in rs if r["n"] <= flat]
    ax.set_title(f"f32 sum: up to n = {pow2_label(flat)} a call takes {_span(times, '{:.1f}')} µs "
                 f"whatever n; launches, not bytes, set the time ({machine.gpu})")
    _end_labels(ax, ends)
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


def split_at_largest_gap(items):
    """items [(name, value)] sorted by value, high first, cut where neighbouring values lie
    furthest apart: ([high ones], [low ones]); one group if there is a single item."""
    items = sorted(items, key=lambda item: -item[1])
    if len(items) < 2:
        return items, []
    gaps = [a[1] - b[1] for a, b in zip(items, items[1:])]
    cut = gaps.index(max(gaps)) + 1
    return items[:cut], items[cut:]


def dtype_groups(rows):
    """dtypes.png's bars: per chapter with f16 or bf16 sum rows, at one size (pick_dram_n of
    those rows), {dtype: row} of its lead kernel (a library chapter: the baseline of each dtype,
    cub_sum for f32, cub_transform_reduce for f16 and bf16). Returns (n, note, [(chapter,
    {dtype: row})])."""
    sums = [r for r in select(rows, "sum") if r["dtype"] in DTYPE_STYLE]
    halves = [r for r in sums if r["dtype"] != "f32"]
    if not halves:
        return None, None, []
    n, note = pick_dram_n(halves)
    at = {(r["chapter"], r["kernel"], r["dtype"]): r for r in sums if r["n"] == n}
    leads = dict(lesson_kernels(halves))
    groups = []
    for chapter in dict.fromkeys(r["chapter"] for r in sort_rows(halves)):
        def kernel(dtype):
            if chapter in leads:
                return leads[chapter]
            base_chapter, base = baseline_for("sum", dtype)
            return base if base_chapter == chapter else None
        bars = {dt: at.get((chapter, kernel(dt), dt)) for dt in DTYPE_STYLE}
        bars = {dt: r for dt, r in bars.items() if r}
        if bars:
            groups.append((chapter, bars))
    return n, note, groups


def chart_dtypes(rows, machine, colors, path):
    """Sums by element type at one DRAM size: per chapter with f16 or bf16 rows, its lead
    kernel's GB/s (CUB: its baseline call per type), a bar per element type, each 16-bit bar
    marked with its GB/s as a multiple of the same kernel's f32 GB/s."""
    n, note, groups = dtype_groups(rows)
    if not groups:
        return _placeholder(path, f"Sums by element type ({machine.gpu})",
                            "No f16 or bf16 sum rows in bench.csv: nothing to compare across "
                            "element types.")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(8, 1.25 * len(groups) + 3), 6.5))
    dtypes = [dt for dt in DTYPE_STYLE if any(dt in bars for _, bars in groups)]
    width = 0.8 / len(dtypes)
    top = max([machine.dram_gbps] + [r["gbps"] for _, bars in groups for r in bars.values()]) * 1.12
    keeps = []  # (chapter, the smaller 16-bit GB/s ÷ f32's)
    for i, dt in enumerate(dtypes):
        drawn = [(g, bars[dt], bars) for g, (_, bars) in enumerate(groups) if dt in bars]
        xs = [g + (i - (len(dtypes) - 1) / 2) * width for g, _, _ in drawn]
        patches = ax.bar(xs, [r["gbps"] for _, r, _ in drawn], width, color=DTYPE_COLORS[dt],
                         edgecolor="black", linewidth=0.5, label=dt)
        for patch, (_, r, bars) in zip(patches, drawn):
            if is_baseline(r["kernel"]):
                patch.set_hatch("//")
            text = dt
            if dt != "f32" and "f32" in bars:
                text += f"  {r['gbps'] / bars['f32']['gbps']:.2f}× f32"
            inside = r["gbps"] > 0.3 * top
            y = r["gbps"] - 0.015 * top if inside else r["gbps"] + 0.01 * top
            ax.text(patch.get_x() + width / 2, y, text, rotation=90, ha="center",
                    va="top" if inside else "bottom", fontsize=8,
                    color="white" if inside else "black", fontweight="bold" if inside else None,
                    bbox=dict(facecolor=DTYPE_COLORS[dt], edgecolor="none", pad=0.6) if inside else None)
    for chapter, bars in groups:
        ratios = [r["gbps"] / bars["f32"]["gbps"] for dt, r in bars.items()
                  if dt != "f32" and "f32" in bars]
        if ratios:
            keeps.append((chapter, min(ratios)))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{chapter}\n" + " / ".join(dict.fromkeys(r["kernel"] for r in bars.values()))
                        for chapter, bars in groups], rotation=25, ha="right", fontsize=8.5)
    _bandwidth_roofs(ax, machine)
    ax.set_ylim(0, top)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s, linear)")
    ax.grid(True, axis="y", alpha=0.3)
    story = [f"{_group_names([c for c, _ in g])} {'keep' if i == 0 else 'only'} "
             f"{_span([v for _, v in g])}×" + (" their f32 GB/s" if i == 0 else "")
             for i, g in enumerate(g for g in split_at_largest_gap(keeps) if g)]
    ax.set_title(f"Sums at n = {pow2_label(n)} in f16 and bf16: {', '.join(story)} "
                 f"({machine.gpu})" + (f"\n{note}" if note else ""), fontsize=11)
    ax.text(0.99, 0.985, "hatched: the library (CUB)", transform=ax.transAxes, ha="right", va="top",
            fontsize=8.5, color="dimgray")
    _save(fig, path)


def chart_dtypes_equal_bytes(rows, machine, colors, path):
    """Sums of 1 GiB by element type: a group of bars per type, a bar per kernel (07's and 10's
    lead kernels and CUB's sum), each marked with its GB/s as a multiple of its own f32 GB/s.
    False (nothing drawn) where the run has no such rows."""
    size = EQUAL_BYTES[-1]
    lines = [(k, dt, found[size]) for k, dt, found in equal_bytes_lines(rows) if size in found]
    if not lines:
        return False
    plt = _pyplot()
    kernels = list(dict.fromkeys(k if not is_baseline(k[1]) else (CUB_CHAPTER, "CUB") for k, _, _ in lines))
    key = lambda k: k if not is_baseline(k[1]) else (CUB_CHAPTER, "CUB")
    dtypes = [dt for dt in ELEMENT_BYTES if any(d == dt for _, d, _ in lines)]
    at = {(key(k), dt): r for k, dt, r in lines}
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(dtypes) + 3), 6))
    width = 0.8 / len(kernels)
    top = max([machine.dram_gbps] + [r["gbps"] for _, _, r in lines]) * 1.15
    keeps = {}
    for i, k in enumerate(kernels):
        drawn = [(g, at[(k, dt)]) for g, dt in enumerate(dtypes) if (k, dt) in at]
        xs = [g + (i - (len(kernels) - 1) / 2) * width for g, _ in drawn]
        color = "#8c8c8c" if k[1] == "CUB" else colors.get(k, f"C{i}")
        patches = ax.bar(xs, [r["gbps"] for _, r in drawn], width, color=color, edgecolor="black",
                         linewidth=0.5, hatch="//" if k[1] == "CUB" else None,
                         label="CUB (cub_sum; TransformReduce for the other types)" if k[1] == "CUB"
                         else f"{k[0]}: {k[1]}")
        f32 = at.get((k, "f32"))
        for patch, (g, r) in zip(patches, drawn):
            if f32 and dtypes[g] != "f32":
                ratio = r["gbps"] / f32["gbps"]
                keeps.setdefault(k, []).append(ratio)
                # Inside the bar, half way up: clear of the roofs' lines and labels.
                ax.text(patch.get_x() + width / 2, r["gbps"] / 2, f"{ratio:.2f}× f32", rotation=90,
                        ha="center", va="center", fontsize=7.5, color="white", fontweight="bold",
                        bbox=dict(facecolor=color, edgecolor="none", pad=0.6))
    ax.set_xticks(range(len(dtypes)))
    ax.set_xticklabels(dtypes)
    _bandwidth_roofs(ax, machine)
    ax.set_ylim(0, top)
    ax.set_xlim(-0.6, len(dtypes) - 0.4)
    ax.set_xlabel(f"element type ({binary_size(size)} of input each: n = bytes / element size)")
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s, linear)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=len(kernels), fontsize=8.5, frameon=False)
    story = ", ".join(f"{'CUB' if k[1] == 'CUB' else k[0]} {_span(v)}×" for k, v in keeps.items())
    ax.set_title(f"Sums of {binary_size(size)} by element type, as a multiple of their f32 GB/s: {story} "
                 f"({machine.gpu})", fontsize=10.5)
    _save(fig, path)
    return True


# A chapter's steps before its lead kernel (08's first three) each take a colour of their own,
# far from the chapter's (which its lead kernel keeps) and from each other, and a marker of their
# own.
STEP_COLORS = ["#17becf", "#bcbd22", "#ff7f0e", "#d62728", "#1f77b4"]
STEP_MARKERS = ["D", "v", "P", "X", "*"]


def step_markers(rows):
    """{(chapter, kernel): marker} for every lesson kernel before its chapter's lead kernel."""
    return {k: STEP_MARKERS[i % len(STEP_MARKERS)] for k, i in _earlier_steps(rows).items()}


def step_colors(rows, colors):
    """{(chapter, kernel): colour} of every lesson kernel: the lead in its chapter's colour (from
    colors), each step before it in a distinct colour of STEP_COLORS."""
    out = {k: colors[k] for k in lesson_kernels(rows)}
    out.update({k: STEP_COLORS[i % len(STEP_COLORS)] for k, i in _earlier_steps(rows).items()})
    return out


def _earlier_steps(rows):
    """{(chapter, kernel): its index among its chapter's steps} for each step before the lead."""
    lessons = lesson_kernels(rows)
    out = {}
    for chapter in dict.fromkeys(c for c, _ in lessons):
        out.update({k: i for i, k in enumerate([k for k in lessons if k[0] == chapter][:-1])})
    return out


def bf16_drop(lead_rows):
    """Where a lead kernel's bf16 dot product falls furthest below its f16 one (else below its
    baseline), among sizes larger than L2 if any: (bf16 row, × f16 or None, × baseline or None),
    or None without bf16 rows."""
    by = {(r["dtype"], r["n"]): r for r in lead_rows}
    bf16 = [r for r in lead_rows if r["dtype"] == "bf16"]
    if not bf16:
        return None
    candidates = [r for r in bf16 if not r["l2_resident"]] or bf16

    def against_f16(r):
        f16 = by.get(("f16", r["n"]))
        return r["gbps"] / f16["gbps"] if f16 else None
    row = min(candidates, key=lambda r: (against_f16(r) or 0, r["ratio_to_cub"] or 0, r["n"]))
    return row, against_f16(row), row["ratio_to_cub"]


def dot_story(series, lessons, lead):
    """dot.png's message: how far 08's steps climb against the f32 baseline at the DRAM size,
    and where its lead kernel's bf16 dot product drops (bf16_drop), both from the rows."""
    story = []
    base = baseline_for("dot", "f32")
    base_at = {r["n"]: r["gbps"] for r in series.get(base + ("f32",), [])}
    f32 = [r for k in lessons for r in series.get(k + ("f32",), [])]
    if f32 and base_at:
        n, _ = pick_dram_n(f32)
        at = [r["gbps"] / base_at[n] for k in lessons for r in series.get(k + ("f32",), [])
              if r["n"] == n and n in base_at]
        if len(at) >= 2:
            story.append(f"08's steps climb from {at[0]:.2f}× to {max(at):.2f}× {base[1]} at "
                         f"n = {pow2_label(n)}")
    drop = bf16_drop([r for key, rs in series.items() if lead and key[:2] == lead for r in rs])
    if drop and drop[1]:
        story.append(f"with bf16 inputs {lead[1]} falls to {drop[1]:.2f}× its f16 GB/s")
    return "; ".join(story) or "bandwidth vs. input size", drop


def chart_dot(rows, machine, colors, path):
    """Dot products against n, log2. Upper panel, f32: chapter 08's steps, each in a colour of
    its own, as multiples of the f32 baseline's GB/s (cuBLAS) at the same n, linear: on a log
    axis of GB/s the steps merge near the top. Lower panel, GB/s on a log axis: the lead kernel
    in every element type against the library in the 16-bit ones (CUB), the bf16 drop marked."""
    part = select(rows, "dot")
    if not part:
        return _placeholder(path, f"Dot products ({machine.gpu})", "No dot-product rows in bench.csv.")
    plt = _pyplot()
    lessons = lesson_kernels(part)
    lead = lessons[-1] if lessons else None
    own, markers, series = step_colors(part, colors), step_markers(part), series_of(part)
    base32 = baseline_for("dot", "f32")
    base_at = {r["n"]: r for r in series.get(base32 + ("f32",), [])}
    upper = [(key, [r for r in rs if r["n"] in base_at]) for key, rs in series.items()
             if key[2] == "f32" and key[:2] in own]
    upper = [(key, rs) for key, rs in upper if rs]
    halves = [dt for dt in DTYPE_STYLE if dt != "f32" and any(r["dtype"] == dt for r in part)]
    lower = ([(key, rs) for key, rs in series.items() if key[:2] == lead]
             + [(key, rs) for key, rs in series.items()
                if key[2] in halves and key[:2] == baseline_for("dot", key[2])])
    panels = [p for p in (upper, lower if halves else []) if p]
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 5.2 * len(panels) + 0.6), sharex=True,
                             squeeze=False, gridspec_kw=dict(hspace=0.16))
    axes = list(axes[:, 0])
    story, drop = dot_story(series, lessons, lead)
    _suptitle(fig, f"Dot products: {story} ({machine.gpu})")
    ns = sorted({r["n"] for r in part})
    _log2_n_axis(axes[-1], ns, plt)
    for ax, panel in zip(axes, panels):
        ends = []
        for (ch, k, dt), rs in panel:
            if panel is upper:
                color, style, marker, text = own[ch, k], "-", markers.get((ch, k), "o"), k
                ys = [r["gbps"] / base_at[r["n"]]["gbps"] for r in rs]
            else:
                color = DTYPE_COLORS.get(dt, "black")
                style, marker = "--" if is_baseline(k) else "-", DTYPE_STYLE.get(dt, ("-", "o"))[1]
                text = f"{k}, {dt}" + (" (baseline)" if is_baseline(k) else "")
                ys = [r["gbps"] for r in rs]
            _plot_series(ax, [r["n"] for r in rs], ys, rs, color, style, marker,
                         label=f"{legend_label(ch, k)}, {dt}")
            ends.append((rs[-1]["n"], ys[-1], text, color))
        ax.set_xlim(ns[0] / 1.5, ns[-1] * 1.5)
        if panel is upper:
            values = [y for line in ax.get_lines() for y in line.get_ydata()] + [1.0]
            span = max(values) - min(values) or 0.1
            ax.set_ylim(min(values) - 0.08 * span, max(values) + 0.12 * span)
            ax.axhline(1.0, color=LIBRARY_COLORS["cublas_"], linestyle="--", linewidth=1.3)
            ax.set_ylabel(f"× {base32[1]}: GB/s ÷ its GB/s\nat the same n (linear)")
            ax.grid(True, which="major", alpha=0.3)
            marks = _l2_marks(ax, [rs for _, rs in panel], machine)
            ax.set_title(f"f32: chapter 08's steps against {base32[1]}, linear", fontsize=10.5)
            _label_on_line(ax, 1.0, f"{base32[1]} (baseline) = 1", LIBRARY_COLORS["cublas_"], ends=ends)
        else:
            _bandwidth_roofs(ax, machine, label=False)
            _log_gbps_axis(ax, [r for _, rs in panel for r in rs], machine)
            marks = _l2_marks(ax, [rs for _, rs in panel], machine)
            ax.set_title(f"{lead[1] if lead else 'the lead kernel'} by element type against the "
                         f"library: GB/s, log scale", fontsize=10.5)
            _label_roofs(ax, machine, ends)
        _marker_note(ax, gold=len(marks) == 1)
        _end_labels(ax, ends)
        if panel is not upper and drop:
            row, f16, cub = drop
            against = [f"{v:.2f}× {what}" for v, what in ((f16, "f16"), (cub, "CUB")) if v]
            what = "bf16 drop" if min(v for v in (f16, cub, 1.0) if v) < 0.95 else "bf16"
            text = (f"{what}: {row['gbps']:.0f} GB/s at n = {pow2_label(row['n'])}"
                    + (f"\n{', '.join(against)}" if against else ""))
            label, = _place_labels(ax, [(row["n"], row["gbps"], text, DTYPE_COLORS["bf16"])],
                                   ring_candidates(radii=(40, 55, 70, 90),
                                                   angles=(-120, -150, -90, -60, 180, 150)),
                                   fontsize=9, arrowstyle="->")
            label.set_fontweight("bold")
    axes[-1].set_xlabel("n (elements per vector, log scale; bytes count both vectors)")
    _save(fig, path)


def chapters_message(rows, n):
    """chapters.png's story: the share of the DRAM peak the chapters at CUB's bandwidth reach
    (near_cub), against CUB's own."""
    close, _ = near_cub(rows, n)
    at = {(r["chapter"], r["kernel"]): r for r in rows if r["n"] == n}
    cub = at.get(baseline_for("sum", "f32"))
    if not close:
        return f"f32 sum per chapter at n = {pow2_label(n)}"
    pct = [at[ch, k]["pct_peak"] for ch, k, _ in close]
    return (f"f32 sum at n = {pow2_label(n)}: {_group_names([ch for ch, _, _ in close])} reach "
            f"{_span(pct, '{:.1f}')}% of the DRAM peak" + (f", CUB {cub['pct_peak']:.1f}%" if cub else ""))


def chart_chapters(rows, machine, colors, path):
    """Bars of the f32 sums at the DRAM size, chapter by chapter and CUB, each marked with its %
    of the DRAM peak and its ratio to CUB: inside a tall bar, above a short one."""
    part = select(rows, "sum", "f32")
    if not part:
        return _placeholder(path, f"Chapters ({machine.gpu})", "No f32 sum rows in bench.csv.")
    n, note = pick_dram_n(part)
    bars = [r for r in sort_rows(part) if r["n"] == n]

    fig, ax = _pyplot().subplots(figsize=(max(8, 1.3 * len(bars) + 3), 6))
    xs = range(len(bars))
    drawn = ax.bar(xs, [r["gbps"] for r in bars], edgecolor="black", linewidth=0.6,
                   color=[colors[r["chapter"], r["kernel"]] for r in bars])
    top = max([machine.dram_gbps] + [r["gbps"] for r in bars]) * 1.12
    for bar, r in zip(drawn, bars):
        if is_baseline(r["kernel"]):
            bar.set_hatch("//")
            bar.set_facecolor("lightgray")
        ratio = f"{r['ratio_to_cub']:.2f}× CUB" if r["ratio_to_cub"] is not None else "no CUB row"
        text = f"{r['pct_peak']:.1f}% of peak\n{ratio}" + ("\nL2-resident" if r["l2_resident"] else "")
        # Halfway up a tall bar, clear of the roof lines, on the bar's own colour; above a
        # short one.
        inside = r["gbps"] > 0.4 * top
        face = bar.get_facecolor()
        dark = sum(face[:3]) < 1.8
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height() / (2 if inside else 1)),
                    xytext=(0, 0 if inside else 3), textcoords="offset points", ha="center",
                    va="center" if inside else "bottom", fontsize=8.5,
                    color="white" if inside and dark else "black",
                    bbox=dict(facecolor=face if inside else "white", edgecolor="none", pad=1))
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{r['chapter']}\n{r['kernel']}" for r in bars], rotation=30,
                       ha="right", fontsize=8.5)
    _bandwidth_roofs(ax, machine)
    ax.set_ylim(0, top)
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s)")
    ax.set_title(f"{chapters_message(part, n)} ({binary_size(n * 4)} of f32, {machine.gpu})"
                 + (f"\n{note}" if note else ""))
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, path)


# The batched chart: a colour per layout, a marker per layout (heavy-tailed segments their own),
# the heavy-tailed segments dash-dotted; CUB is the line at 1 of the lower panel.
LAYOUT_COLORS = {"rows": "#1f77b4", "columns": "#ff7f0e", "segments": "#2ca02c"}
LAYOUT_MARKERS = {"rows": "o", "columns": "s", "segments": "^"}


def batched_lines(rows):
    """The batched chart's lines: {(layout index, heavy, kernel): rows sorted by length} of the
    lessons' f32 sums (chapters 11 and 12; no variant, no library), one point per length, the
    largest n where several shapes share it."""
    lines = {}
    for r in sorted(select(rows, "sum", "f32"), key=lambda r: (r["length"], -r["n"])):
        if not r["variant_of"] and not is_baseline(r["kernel"]):
            line = lines.setdefault((LAYOUTS.index(r["layout"]), bool(r["params"].get("heavy")),
                                     r["kernel"]), [])
            if not line or line[-1]["length"] != r["length"]:
                line.append(r)
    return dict(sorted(lines.items()))


def batched_cub_ratios(line, rows):
    """[(row, its GB/s ÷ CUB's segmented reduction's at the same shape)] for the points of line
    that CUB measured (none for columns: CUB has no column reduction)."""
    cub = {batched_key(r): r["gbps"] for r in rows if r["kernel"] == BATCHED_BASELINE}
    return [(r, r["gbps"] / cub[batched_key(r)]) for r in line if batched_key(r) in cub]


def batched_label(line):
    r = line[0]
    shape = f", {distribution(r)}" if r["layout"] == "segments" else ""
    return f"{r['kernel']}{shape}"


def _ratio_span(values):
    """'1.01–139': ratios with three significant digits."""
    return _span(values, "{:.3g}")


def chart_batched(rows, machine, path):
    """The batched f32 sums (chapters 11 and 12) against L, the length of a row or column or the
    segments' mean length, log2. Upper panel: the lessons' GB/s on a linear axis (they all run
    near the DRAM bandwidth, which a log axis would squash into one band), with the roofs. Lower
    panel: each as a multiple of CUB's segmented reduction at the same shape, log (rows and
    segments; CUB has no column reduction). The variants are in the tables."""
    lines = batched_lines(rows)
    if not lines:
        return _placeholder(path, f"Batched f32 sums ({machine.gpu})",
                            "No batched f32 sum rows in bench.csv.")
    plt = _pyplot()
    ratios = {key: batched_cub_ratios(line, rows) for key, line in lines.items()}
    ratios = {key: pairs for key, pairs in ratios.items() if pairs}
    shown = [r for line in lines.values() for r in line]
    values = [v for pairs in ratios.values() for _, v in pairs]
    story = f"the lessons run at {_span([r['gbps'] for r in shown], '{:,.0f}')} GB/s at every length"
    if values:
        story += f", {_ratio_span(values)}× CUB's segmented reduction"
    fig, axes = plt.subplots(2 if ratios else 1, 1, figsize=(11, 4.6 * (2 if ratios else 1) + 0.8),
                             sharex=True, squeeze=False, gridspec_kw=dict(hspace=0.16))
    axes = list(axes[:, 0])
    _suptitle(fig, f"Batched f32 sums: {story} ({machine.gpu})")
    lengths = sorted({r["length"] for r in shown})
    for a in axes:
        a.set_xlim(lengths[0] / 1.5, lengths[-1] * 1.5)
    _log2_n_axis(axes[-1], lengths, plt)
    axes[-1].set_xlabel("L: elements per row or column, or the segments' mean length (log scale)")

    def draw(ax, points):
        """points: {key: [(row, y)]} -> the lines, and their labels at their ends."""
        ends = []
        for key, pairs in points.items():
            line = lines[key]
            color = LAYOUT_COLORS[line[0]["layout"]]
            marker = "v" if key[1] else LAYOUT_MARKERS[line[0]["layout"]]
            _plot_series(ax, [r["length"] for r, _ in pairs], [y for _, y in pairs],
                         [r for r, _ in pairs], color, "-." if key[1] else "-", marker,
                         label=batched_label(line))
            ends.append((pairs[-1][0]["length"], pairs[-1][1], batched_label(line), color))
        return ends

    ax = axes[0]
    ends = draw(ax, {key: [(r, r["gbps"]) for r in line] for key, line in lines.items()})
    bottom = 500 * math.floor(0.9 * min(r["gbps"] for r in shown) / 500)
    ax.set_ylim(bottom, max([machine.dram_gbps] + [r["gbps"] for r in shown]) * 1.05)
    ax.set_ylabel("GB/s (linear" + (f", from {bottom:.0f})" if bottom else ")"))
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title("the lessons' GB/s, linear", fontsize=10.5)
    _bandwidth_roofs(ax, machine, label=False)
    if any(r["l2_resident"] for r in shown):
        _marker_note(ax)
    _label_roofs(ax, machine, ends)
    _end_labels(ax, ends)
    if ratios:
        ax = axes[1]
        ends = draw(ax, ratios)
        low, high = min(values + [1.0]) / 1.6, max(values + [1.0]) * 2
        ax.set_yscale("log")
        ax.set_ylim(low, high)
        ticks = [t for t in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if low <= t <= high]
        ax.set_yticks(ticks)
        ax.set_yticklabels([f"{t:g}×" for t in ticks])
        ax.yaxis.set_minor_locator(plt.NullLocator())
        ax.axhline(1.0, color=LIBRARY_COLORS["cub_"], linestyle="--", linewidth=1.3)
        ax.set_ylabel(f"× CUB: GB/s ÷ {BATCHED_BASELINE}'s\nat the same shape (log scale)")
        ax.grid(True, which="major", alpha=0.3)
        without = sorted({line[0]["layout"] for key, line in lines.items() if key not in ratios},
                         key=LAYOUTS.index)
        ax.set_title("against CUB's segmented reduction"
                     + (f" ({', '.join(without)}: CUB has none)" if without else ""), fontsize=10.5)
        _label_on_line(ax, 1.0, f"CUB ({BATCHED_BASELINE}) = 1", LIBRARY_COLORS["cub_"], ends=ends)
        _end_labels(ax, ends)
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
    # The sums at equal bytes in every element type, likewise where the run has them.
    equal_bytes_chart = os.path.join(results_dir, EQUAL_BYTES_CHART)
    if chart_dtypes_equal_bytes(shown, machine, colors, equal_bytes_chart):
        drawn.append(EQUAL_BYTES_CHART)
    elif os.path.exists(equal_bytes_chart):
        os.remove(equal_bytes_chart)
        print(f"removed {equal_bytes_chart}: bench.csv has no sums at equal bytes beyond f32")
    variants = [f"{chapter}/{kernel}" for chapter, kernel in
                kernels_of([r for r in every if r["variant_of"]])]
    if variants:
        print(f"charts leave out the variants (tables.md has them): {', '.join(variants)}")
    print(f"wrote {', '.join(drawn)} in {results_dir}")
    write_tables(results_dir, every, machine)


# ---- Comparing two runs ---------------------------------------------------------------------

def peak_lines(rows, other_rows, name, other_name):
    """Each chapter's lead kernel and the libraries at the DRAM size (f32 sum; 08: f32 dot): the
    % of its own run's DRAM peak in both runs, a line each. Empty where neither op was measured
    there."""
    other = {flat_key(r): r for r in other_rows}
    body = []
    for op in ("sum", "dot"):
        part = [r for r in rows if r["op"] == op and r["dtype"] == "f32" and r["n"] == DRAM_N]
        leads = {}
        for chapter, kernel in lesson_kernels(part):
            leads[chapter] = kernel  # kernel_key order: a chapter's last lesson kernel leads
        kernels = sorted(leads.items()) + [(r["chapter"], r["kernel"]) for r in kernel_rows(part)
                                           if is_baseline(r["kernel"]) and not r["variant_of"]]
        for chapter, kernel in kernels:
            row = next(r for r in part if (r["chapter"], r["kernel"]) == (chapter, kernel))
            theirs = other.get(flat_key(row))
            body.append([chapter, f"`{kernel}`", op, f"{row['pct_peak']:.1f}",
                         f"{theirs['pct_peak']:.1f}" if theirs else "—"])
    if not body:
        return []
    return [f"## Each chapter at {pow2_label(DRAM_N)}, % of its own GPU's DRAM peak", "",
            f"Each chapter's lead kernel and the libraries, f32 sum (chapter 08: f32 dot product), "
            f"as a share of the theoretical DRAM bandwidth of the GPU it ran on.", ""] + \
        markdown_table(["chapter", "kernel", "op", name, other_name], body, text_columns=3) + [""]


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
    lines += peak_lines(rows, other_rows, name, other_name)
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
