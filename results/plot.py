#!/usr/bin/env python3
"""Turns the benchmark's Google Benchmark output into the tutorial's CSV, charts and tables.

    plot.py csv BENCH_JSON OUT_CSV
        BENCH_JSON: written by reduction_bench --benchmark_out=... --benchmark_out_format=json.
        OUT_CSV: one tidy row per (chapter, kernel, op, dtype, n), with the ratio to CUB and what
        the benchmark says the kernel is: variant_of (K of the label "variant of K", empty for
        the lessons' and the libraries' kernels) and params ("key=value;..." from the counters
        param_<key>, keys sorted).

    plot.py charts RESULTS_DIR
        Reads RESULTS_DIR/bench.csv and RESULTS_DIR/machine.txt; writes bandwidth_vs_n.png,
        roofline.png, chapters.png, dtypes.png, dot.png and tables.md into RESULTS_DIR.

    plot.py tables RESULTS_DIR
        Writes tables.md only (every op, dtype, kernel and size), without matplotlib.

    plot.py compare RESULTS_DIR OTHER_DIR
        Prints, and writes to RESULTS_DIR/compare.md, this run's GB/s divided by OTHER_DIR's.

Every number shown is computed from bench.csv, never typed by hand. Bad input (a missing file or
column, no rows, a non-number) is reported in one line on stderr with exit status 2.
"""

import argparse
import csv
import json
import math
import os
import sys

CSV_COLUMNS = ["chapter", "kernel", "dtype", "op", "n", "bytes", "time_us", "gbps", "pct_peak",
               "l2_resident", "ratio_to_cub", "variant_of", "params"]
# A bench.csv from before the benchmark said what each kernel is lacks these two; it still reads
# (every kernel then counts as a lesson's), so that `compare` can set a new run against it.
OPTIONAL_COLUMNS = ["variant_of", "params"]
# Counters every benchmark row must carry (common/bench.cpp sets them; "reps" is informational).
JSON_COUNTERS = ["n", "bytes", "time_us", "gbps", "pct_peak", "l2_resident"]
VARIANT_LABEL = "variant of "  # the benchmark's label of a variant: "variant of <kernel>"
PARAM_PREFIX = "param_"       # and its counter per setting: param_<key>

CUB_CHAPTER = "09_cub_comparison"
DOT_CHAPTER = "08_dot_product"
DRAM_N = 2 ** 28            # 1 GiB of f32: far beyond any L2, so a DRAM figure
L2_N = 2 ** 20              # 4 MiB of f32: sits in L2, quoted next to it in the README
TIME_TABLE_MAX_N = 2 ** 22  # below this a call is latency-bound: time per call is the useful figure
L2_FOOTNOTE = "L2-resident: input < 4x L2"

# The charts `charts` writes, with the alt text the README uses for them.
CHARTS = [
    ("bandwidth_vs_n.png", "f32 sum bandwidth vs. input size"),
    ("roofline.png", "Roofline of the f32 reductions"),
    ("chapters.png", "Bandwidth per chapter at a DRAM-resident size"),
    ("dtypes.png", "f16, bf16 and f32 sums"),
    ("dot.png", "Dot products"),
]

# Sections of tables.md and the READMEs come in this order; anything else follows alphabetically.
DTYPE_ORDER = ["f32", "f16", "bf16", "f64"]
OP_ORDER = ["sum", "max", "min", "argmax", "dot"]


class InputError(Exception):
    """Missing or malformed input: main() prints it as one line and exits with status 2."""


def warn(message):
    print(f"plot.py: warning: {message}", file=sys.stderr)


def open_input(path):
    try:
        return open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None


# --------------------------------------------------------------------------------------------
# Google Benchmark JSON -> rows
# --------------------------------------------------------------------------------------------

def parse_benchmark_name(name):
    """'01_naive/reduce_naive/sum/f32/1048576/iterations:1/manual_time' -> (chapter, kernel, op,
    dtype, n). Google Benchmark appends '/iterations:1', '/manual_time' and the like; only the
    first five fields are ours."""
    parts = name.split("/")
    if len(parts) < 5 or not parts[4].isdigit():
        raise InputError(f"benchmark name {name!r} is not <chapter>/<kernel>/<op>/<dtype>/<n>")
    chapter, kernel, op, dtype, n = parts[:5]
    return chapter, kernel, op, dtype, int(n)


def baseline_for(op, dtype):
    """The (chapter, kernel) a row is compared with in ratio_to_cub."""
    if op == "dot":
        # The library answer to an f32 dot product is cuBLAS; for 16-bit inputs with an f32
        # result, which cuBLAS's Sdot does not take, CUB's TransformReduce of the products.
        return DOT_CHAPTER, "cublas_sdot" if dtype == "f32" else "cub_transform_reduce"
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


def _counter(entry, key, path):
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{path}: benchmark {entry['name']!r} has no numeric counter {key!r}")
    return float(value)


def load_benchmark_json(path):
    """Returns (rows, skipped): typed rows without ratio_to_cub, and 'name: why' for every entry
    left out (errors, skips, non-finite counters)."""
    with open_input(path) as f:
        try:
            doc = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InputError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError(f"{path} has no 'benchmarks' list: not a Google Benchmark JSON file")

    by_key, skipped = {}, []
    for entry in doc["benchmarks"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise InputError(f"{path}: a benchmark entry has no name")
        name = entry["name"]
        # With --benchmark_repetitions Google Benchmark adds mean/median/stddev rows; the
        # individual runs are kept instead (see the median below).
        if entry.get("run_type") == "aggregate":
            continue
        if entry.get("error_occurred") or entry.get("skipped"):
            why = entry.get("error_message") or entry.get("skip_message") or "error"
            skipped.append(f"{name}: {why}")
            continue
        chapter, kernel, op, dtype, n = parse_benchmark_name(name)
        values = {key: _counter(entry, key, path) for key in JSON_COUNTERS}
        bad = [k for k, v in values.items() if not math.isfinite(v)]
        if bad or values["time_us"] <= 0:
            skipped.append(f"{name}: non-finite or non-positive {', '.join(bad) or 'time_us'}")
            continue
        label = entry.get("label") or ""
        row = dict(values, chapter=chapter, kernel=kernel, dtype=dtype, op=op, n=n,
                   l2_resident=values["l2_resident"] != 0, ratio_to_cub=None,
                   variant_of=label[len(VARIANT_LABEL):] if label.startswith(VARIANT_LABEL) else "",
                   params={key[len(PARAM_PREFIX):]: _counter(entry, key, path)
                           for key in entry if key.startswith(PARAM_PREFIX)})
        by_key.setdefault(row_key(row), []).append(row)

    # One row per key: with repetitions, the run with the median time (as timing.hpp does).
    rows = []
    for runs in by_key.values():
        runs.sort(key=lambda r: r["time_us"])
        rows.append(runs[len(runs) // 2])
    return rows, skipped


def row_key(row):
    return row["chapter"], row["kernel"], row["op"], row["dtype"], row["n"]


def add_ratio_to_cub(rows):
    """ratio_to_cub = gbps / gbps of the baseline row with the same op, dtype and n (None when
    that row was not measured). The baseline's own rows get 1."""
    gbps = {row_key(r): r["gbps"] for r in rows}
    for r in rows:
        chapter, kernel = baseline_for(r["op"], r["dtype"])
        base = gbps.get((chapter, kernel, r["op"], r["dtype"], r["n"]))
        r["ratio_to_cub"] = r["gbps"] / base if base else None


def kernel_key(row):
    """Where a row's kernel sorts: by chapter, the chapter's own kernels before the libraries',
    then by step (a chapter of several lessons, as 08, numbers them with param_step), then by
    the other params (05's coarsening factors from small to large), then by name."""
    params = row["params"]
    return (row["chapter"], is_baseline(row["kernel"]), params.get("step", 0), sorted(params.items()),
            row["kernel"])


def sort_rows(rows):
    rows.sort(key=lambda r: (kernel_key(r), r["op"], r["dtype"], r["n"]))
    return rows


def format_number(x):
    """Integers without a decimal point; other values with 9 significant digits (enough that
    reading the CSV back loses nothing that any chart or table shows)."""
    if x is None:
        return ""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.9g}"


def format_params(params):
    """{'unroll': 8.0, 'coarsening': 4.0} -> 'coarsening=4;unroll=8'."""
    return ";".join(f"{key}={format_number(value)}" for key, value in sorted(params.items()))


def write_csv(rows, path):
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(CSV_COLUMNS)
        for r in rows:
            out.writerow([r["chapter"], r["kernel"], r["dtype"], r["op"], r["n"],
                          format_number(r["bytes"]), format_number(r["time_us"]),
                          format_number(r["gbps"]), format_number(r["pct_peak"]),
                          "true" if r["l2_resident"] else "false",
                          format_number(r["ratio_to_cub"]), r["variant_of"],
                          format_params(r["params"])])


# --------------------------------------------------------------------------------------------
# bench.csv and machine.txt -> rows and a dict
# --------------------------------------------------------------------------------------------

def parse_params(text, where):
    """'coarsening=4;unroll=8' -> {'coarsening': 4.0, 'unroll': 8.0}."""
    params = {}
    for item in filter(None, text.split(";")):
        key, _, value = item.partition("=")
        try:
            params[key] = float(value)
        except ValueError:
            raise InputError(f"{where}: params {text!r} is not 'key=number;...'") from None
    return params


def _parse_csv_row(raw, where):
    def number(column):
        try:
            value = float(raw[column])
        except (TypeError, ValueError):
            raise InputError(f"{where}: {column} {raw[column]!r} is not a number") from None
        if not math.isfinite(value):
            raise InputError(f"{where}: {column} {raw[column]!r} is not finite")
        return value

    for column in ("chapter", "kernel", "dtype", "op"):
        if not raw[column]:
            raise InputError(f"{where}: empty {column}")
    l2 = (raw["l2_resident"] or "").strip().lower()
    if l2 not in ("true", "false", "1", "0"):
        raise InputError(f"{where}: l2_resident {raw['l2_resident']!r} is not true/false")
    n = number("n")
    if not n.is_integer() or n < 1:
        raise InputError(f"{where}: n {raw['n']!r} is not a positive integer")
    row = {"chapter": raw["chapter"], "kernel": raw["kernel"], "dtype": raw["dtype"],
           "op": raw["op"], "n": int(n), "bytes": number("bytes"),
           "time_us": number("time_us"), "gbps": number("gbps"), "pct_peak": number("pct_peak"),
           "l2_resident": l2 in ("true", "1"),
           "ratio_to_cub": number("ratio_to_cub") if (raw["ratio_to_cub"] or "").strip() else None,
           "variant_of": raw.get("variant_of") or "",
           "params": parse_params(raw.get("params") or "", where)}
    if row["time_us"] <= 0 or row["bytes"] <= 0:
        raise InputError(f"{where}: time_us and bytes must be positive")
    return row


def read_csv(path):
    """bench.csv -> rows with typed values (n int, l2_resident bool, ratio_to_cub float|None,
    variant_of str, params {key: float})."""
    with open_input(path) as f:
        try:
            reader = csv.DictReader(f)
            if not reader.fieldnames:
                raise InputError(f"{path} is empty")
            missing = [c for c in CSV_COLUMNS
                       if c not in reader.fieldnames and c not in OPTIONAL_COLUMNS]
            if missing:
                raise InputError(f"{path} lacks column(s): {', '.join(missing)}")
            rows, seen = [], set()
            for raw in reader:
                row = _parse_csv_row(raw, f"{path}:{reader.line_num}")
                if row_key(row) in seen:
                    raise InputError(f"{path}:{reader.line_num}: duplicate row {row_key(row)}")
                seen.add(row_key(row))
                rows.append(row)
        except (csv.Error, UnicodeDecodeError) as e:
            raise InputError(f"{path} is not a readable CSV: {e}") from None
    if not rows:
        raise InputError(f"{path} has no data rows")
    return rows


def read_machine(path):
    """machine.txt ('key: value' lines, '#' comments) -> {key: value string}."""
    machine = {}
    with open_input(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition(":")
            if not sep:
                raise InputError(f"{path}:{number}: expected 'key: value', got {line!r}")
            machine[key.strip()] = value.strip()
    return machine


def machine_number(machine, key, path, if_missing=None):
    """A numeric machine.txt value. A missing key is an error, unless if_missing says what the
    charts do without it: then a warning saying so, and None."""
    if key not in machine:
        if if_missing is None:
            raise InputError(f"{path} lacks '{key}:'")
        warn(f"{path} lacks '{key}:'; {if_missing}")
        return None
    try:
        value = float(machine[key])
    except ValueError:
        raise InputError(f"{path}: {key} {machine[key]!r} is not a number") from None
    if not value > 0:
        raise InputError(f"{path}: {key} must be positive")
    return value


class Machine:
    """The machine.txt figures the charts draw: peaks, the L2 size, the GPU's name."""

    def __init__(self, path):
        raw = read_machine(path)
        self.gpu = raw.get("gpu") or "unknown GPU"
        self.dram_gbps = machine_number(raw, "dram_gbps", path)
        self.l2_bytes = machine_number(raw, "l2_bytes", path)
        self.copy_gbps = machine_number(
            raw, "copy_gbps", path, "the memory roof uses the theoretical DRAM bandwidth")
        self.fp32_gflops = machine_number(raw, "fp32_gflops", path, "the roofline has no compute roof")

    def l2_label(self):
        return f"L2 = {binary_size(self.l2_bytes)}"


# --------------------------------------------------------------------------------------------
# Selections and Markdown tables (scripts/update_readme.py uses these too)
# --------------------------------------------------------------------------------------------

def select(rows, op, dtype=None):
    return [r for r in rows if r["op"] == op and (dtype is None or r["dtype"] == dtype)]


def kernel_rows(rows):
    """One row per (chapter, kernel) in rows, in kernel_key order: what a table needs to know
    of each kernel (its variant_of and params)."""
    first = {}
    for r in rows:
        first.setdefault((r["chapter"], r["kernel"]), r)
    return sorted(first.values(), key=kernel_key)


def kernels_of(rows):
    """The (chapter, kernel) pairs in rows, in kernel_key order (the CUB chapter comes last)."""
    return [(r["chapter"], r["kernel"]) for r in kernel_rows(rows)]


def series_of(rows, by=("chapter", "kernel")):
    """{key: rows sorted by n} with key = the values of the `by` columns, in kernel_key order
    (a chart's legend lists 08's steps in the lesson's order)."""
    out = {}
    for r in sorted(rows, key=lambda r: r["n"]):
        out.setdefault(tuple(r[c] for c in by), []).append(r)
    return dict(sorted(out.items(), key=lambda item: (kernel_key(item[1][0]), item[0])))


def pick_dram_n(rows):
    """The size the bar chart and README quote: 2^28 when measured, else the largest n (and a
    note saying so, so that a smaller run is never passed off as the 2^28 figure)."""
    ns = {r["n"] for r in rows}
    if DRAM_N in ns:
        return DRAM_N, None
    largest = max(ns)
    return largest, f"largest measured; {pow2_label(DRAM_N)} not in bench.csv"


def pow2_label(n):
    """1048576 -> '2^20'; sizes that are not powers of two stay plain numbers."""
    k = n.bit_length() - 1
    return f"2^{k}" if n == 1 << k else str(n)


def binary_size(nbytes):
    """4194304 -> '4 MiB': sizes of inputs and caches, in powers of two."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:g} B"


def pow2_tex(n):
    k = n.bit_length() - 1
    return f"$2^{{{k}}}$" if n == 1 << k else str(n)


# How each measured field reads in a table.
CELL_FORMATS = {"gbps": "{:.1f}", "pct_peak": "{:.1f}", "ratio_to_cub": "{:.3f}",
                "time_us": "{:.2f}"}


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
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return lines


def kernel_table(rows, columns):
    """One line per chapter kernel in rows (already one op and dtype), one column per
    (header, n, field): the building block of tables.md and the README section."""
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in rows}
    body = [[chapter, f"`{kernel}`"] +
            [format_cell(at.get((chapter, kernel, n)), field) for _, n, field in columns]
            for chapter, kernel in kernels_of(rows)]
    return markdown_table(["Chapter", "Kernel"] + [header for header, _, _ in columns], body)


def sections(rows):
    """The (op, dtype) pairs present, in a reading order: f32 first, sum first."""
    def rank(value, order):
        return (order.index(value), "") if value in order else (len(order), value)
    pairs = {(r["op"], r["dtype"]) for r in rows}
    return sorted(pairs, key=lambda p: (rank(p[1], DTYPE_ORDER), rank(p[0], OP_ORDER)))


def tables_markdown(rows, machine):
    lines = [f"# Benchmark tables: {machine.gpu}", "",
             "Generated by `results/plot.py charts` from `bench.csv`; do not edit by hand.",
             f"GB/s counts 10^9 bytes per second; % of peak is relative to the theoretical DRAM "
             f"bandwidth, {machine.dram_gbps:.0f} GB/s.",
             f"Cells marked `*` are L2-resident: input < 4x L2 ({machine.l2_label()}), so they "
             f"measure L2, not DRAM, bandwidth. `—`: not measured, or no baseline to compare with.",
             ""]
    for op, dtype in sections(rows):
        part = select(rows, op, dtype)
        ns = sorted({r["n"] for r in part})
        _, base_kernel = baseline_for(op, dtype)
        lines += [f"## {op}, {dtype}", ""]
        tables = [("Bandwidth (GB/s)", "gbps", ns),
                  ("% of theoretical DRAM peak", "pct_peak", ns),
                  (f"Ratio to `{base_kernel}` (same op, dtype and n)", "ratio_to_cub", ns),
                  (f"Time per call (µs), n ≤ {pow2_label(TIME_TABLE_MAX_N)}", "time_us",
                   [n for n in ns if n <= TIME_TABLE_MAX_N])]
        for title, field, columns in tables:
            if not columns:
                continue
            lines += [f"### {title}", ""]
            table = kernel_table(part, [(pow2_label(n), n, field) for n in columns])
            lines += table + [""]
            if any(r["l2_resident"] for r in part if r["n"] in columns):
                lines += [f"\\* {L2_FOOTNOTE}.", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Charts
# --------------------------------------------------------------------------------------------

def _pyplot():
    # matplotlib is imported here, not at the top, so that `plot.py csv`, `compare` and
    # scripts/update_readme.py run without it; Agg renders without a display (CI, a GPU node).
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


class Styles:
    """One colour per chapter kernel, the same in every chart; the library baselines in greys
    with dashed lines, so the yardstick stands apart from the kernels it measures."""

    def __init__(self, rows):
        plt = _pyplot()
        kernels = [k for k in kernels_of(rows) if not is_baseline(k[1])]
        # The qualitative palettes without their greys, which belong to the baselines.
        palette = [c for c in plt.get_cmap("tab10" if len(kernels) <= 9 else "tab20").colors
                   if len(set(c)) > 1]
        self.colors = {k: palette[i % len(palette)] for i, k in enumerate(kernels)}
        greys = ["black", "dimgray", "gray"]
        baselines = [k for k in kernels_of(rows) if is_baseline(k[1])]
        self.colors.update({k: greys[i % len(greys)] for i, k in enumerate(baselines)})

    def color(self, chapter, kernel):
        return self.colors[(chapter, kernel)]

    @staticmethod
    def line(kernel):
        return "--" if is_baseline(kernel) else "-"

    @staticmethod
    def label(chapter, kernel):
        return f"{chapter}: {kernel}" + (" (baseline)" if is_baseline(kernel) else "")


def _save(fig, path):
    # bbox_inches="tight" keeps legends placed outside the axes inside the image.
    fig.savefig(path, dpi=130, bbox_inches="tight")
    _pyplot().close(fig)


def _placeholder(path, title, message):
    """A chart with nothing to show still gets written, saying why, so that the README's image
    links never break."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="dimgray",
            transform=ax.transAxes, wrap=True)
    _save(fig, path)


def _log2_x_axis(ax, ns, what):
    ax.set_xscale("log", base=2)
    ticks = sorted(set(ns))
    while len(ticks) > 14:       # keep tick labels legible on long sweeps
        ticks = ticks[::2]
    ax.set_xticks(ticks)
    ax.set_xticklabels([pow2_tex(n) for n in ticks])
    ax.xaxis.set_minor_locator(_pyplot().NullLocator())
    ax.set_xlim(min(ns) / 1.5, max(ns) * 1.5)
    ax.set_xlabel(f"n ({what}, log scale)")


def _bandwidth_roofs(ax, machine):
    """Horizontal lines for the theoretical DRAM bandwidth and the measured copy bandwidth,
    labelled on the line itself so the reader needs no legend lookup."""
    roofs = [(machine.dram_gbps, "theoretical DRAM", "firebrick", "--")]
    if machine.copy_gbps:
        roofs.append((machine.copy_gbps, "measured device-to-device copy", "darkgreen", ":"))
    for gbps, what, color, style in roofs:
        ax.axhline(gbps, color=color, linestyle=style, linewidth=1.3)
        ax.text(0.01, gbps, f"{what}: {gbps:.0f} GB/s", transform=ax.get_yaxis_transform(),
                color=color, fontsize=9, ha="left", va="bottom")


def _l2_marks(ax, machine, element_sizes):
    """Where the input fills L2 exactly: a vertical line per element size (f16 fills it at twice
    the n of f32). With a single size, a light band also covers the sizes counted L2-resident
    (input < 4x L2): points there measure L2, not DRAM. element_sizes: {bytes: [dtypes]}."""
    lines = sorted((machine.l2_bytes / size, dtypes) for size, dtypes in element_sizes.items())
    for i, (n_l2, dtypes) in enumerate(lines):
        ax.axvline(n_l2, color="slategray", linestyle="-.", linewidth=1.2)
        # Labels sit horizontally at the top. With several lines the first label goes left of
        # its line, the next right of its own, and every further pair a row lower: no overlaps.
        suffix = f" ({'/'.join(dtypes)})" if len(lines) > 1 else ""
        left = len(lines) > 1 and i % 2 == 0
        ax.text(n_l2, 0.985 - 0.045 * (i // 2), f" {machine.l2_label()}{suffix} ",
                transform=ax.get_xaxis_transform(), ha="right" if left else "left", va="top",
                fontsize=9, color="slategray")
    if len(lines) == 1:
        ax.axvspan(ax.get_xlim()[0], 4 * lines[0][0], color="gold", alpha=0.10, linewidth=0)
    return len(lines) == 1


def _l2_legend_entries(ax, shaded):
    """Legend entries that explain the marker fill (and the band), added after the series."""
    plt = _pyplot()
    handles, labels = ax.get_legend_handles_labels()
    handles.append(plt.Line2D([], [], color="gray", marker="o", linestyle="none"))
    labels.append("filled marker: DRAM-resident")
    handles.append(plt.Line2D([], [], color="gray", marker="o", markerfacecolor="white",
                              linestyle="none"))
    labels.append("hollow marker: L2-resident (input < 4x L2)")
    if shaded:
        handles.append(plt.Rectangle((0, 0), 1, 1, color="gold", alpha=0.25))
        labels.append("sizes below 4x L2")
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8.5,
              frameon=False)


def _plot_series(ax, rows, color, style, label, marker="o"):
    """One line of GB/s vs n; L2-resident points get hollow markers (white face)."""
    ns = [r["n"] for r in rows]
    ax.plot(ns, [r["gbps"] for r in rows], color=color, linestyle=style, marker=marker,
            markersize=5, linewidth=1.6, label=label)
    l2 = [r for r in rows if r["l2_resident"]]
    if l2:
        ax.plot([r["n"] for r in l2], [r["gbps"] for r in l2], linestyle="none", marker=marker,
                markersize=5, color=color, markerfacecolor="white")


def _element_bytes(rows):
    """Input bytes per element (4 for f32, 8 for an f32 dot product's two vectors), read from
    the data itself: bytes counts the input once plus a few bytes of output."""
    r = max(rows, key=lambda r: r["n"])
    return round(r["bytes"] / r["n"])


def _bandwidth_chart(path, title, series, machine, what):
    """GB/s vs n. series: [(label, rows, color, linestyle, marker)]."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 6))
    all_rows = [r for s in series for r in s[1]]
    for label, rows, color, style, marker in series:
        _plot_series(ax, rows, color, style, label, marker)
    _log2_x_axis(ax, [r["n"] for r in all_rows], what)
    _bandwidth_roofs(ax, machine)
    element_sizes = {}
    for _, rows, *_ in series:
        dtypes = element_sizes.setdefault(_element_bytes(rows), [])
        dtypes += sorted({r["dtype"] for r in rows} - set(dtypes))
    shaded = _l2_marks(ax, machine, element_sizes)
    top = max([machine.dram_gbps] + [r["gbps"] for r in all_rows])
    ax.set_ylim(0, top * 1.12)
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    _l2_legend_entries(ax, shaded)
    _save(fig, path)


def chart_bandwidth_vs_n(rows, machine, styles, path):
    part = select(rows, "sum", "f32")
    title = f"f32 sum: bandwidth vs. input size ({machine.gpu})"
    if not part:
        return _placeholder(path, title, "No f32 sum rows in bench.csv.")
    series = [(styles.label(ch, k), rs, styles.color(ch, k), styles.line(k), "o")
              for (ch, k), rs in series_of(part).items()]
    _bandwidth_chart(path, title, series, machine, "f32 elements")


def chart_dtypes(rows, machine, styles, path):
    """f16/bf16/f32 sums of the chapters that have half-precision rows: the same kernel's
    dtypes share a colour, the line style tells the dtype apart."""
    title = f"Sums by element type: bandwidth vs. input size ({machine.gpu})"
    sums = [r for r in select(rows, "sum") if r["dtype"] in ("f16", "bf16", "f32")]
    chapters = {r["chapter"] for r in sums if r["dtype"] != "f32"}
    part = [r for r in sums if r["chapter"] in chapters]
    if not part:
        return _placeholder(path, title, "No f16 or bf16 sum rows in bench.csv: nothing to "
                                         "compare across element types.")
    series = []
    for (ch, k, dt), rs in series_of(part, ("chapter", "kernel", "dtype")).items():
        style, marker = DTYPE_STYLE[dt]
        series.append((f"{ch}: {k}, {dt}", rs, styles.color(ch, k), style, marker))
    _bandwidth_chart(path, title, series, machine, "elements")


# Line style and marker per element type, where one chart shows several: a kernel keeps its colour.
DTYPE_STYLE = {"f32": ("-", "o"), "f16": ("--", "s"), "bf16": (":", "^")}


def chart_dot(rows, machine, styles, path):
    title = f"Dot products: bandwidth vs. input size ({machine.gpu})"
    part = select(rows, "dot")
    if not part:
        return _placeholder(path, title, "No dot-product rows in bench.csv.")
    # A kernel keeps its colour across element types; the line style and marker tell them apart.
    several = len({r["dtype"] for r in part}) > 1
    series = [(styles.label(ch, k) + (f", {dt}" if several else ""), rs, styles.color(ch, k),
               DTYPE_STYLE.get(dt, ("-", "o"))[0], DTYPE_STYLE.get(dt, ("-", "o"))[1])
              for (ch, k, dt), rs in series_of(part, ("chapter", "kernel", "dtype")).items()]
    _bandwidth_chart(path, title + "; bytes count both input vectors", series, machine,
                     "elements per vector")


def flops_of(row):
    """Floating-point operations of one call: n-1 additions for a sum (≈ n), a multiply and an
    add per element for a dot product."""
    return 2 * row["n"] if row["op"] == "dot" else row["n"] - 1


def chart_roofline(rows, machine, styles, path):
    plt = _pyplot()
    title = f"Roofline ({machine.gpu})"
    points, notes = [], set()
    for op, marker in (("sum", "o"), ("dot", "s")):
        for (ch, k), rs in series_of(select(rows, op, "f32")).items():
            dram = [r for r in rs if not r["l2_resident"]]
            if not dram:
                notes.add("no DRAM-resident size for some kernels: their largest n is shown")
            r = max(dram or rs, key=lambda r: r["n"])
            intensity = flops_of(r) / r["bytes"]
            gflops = flops_of(r) / (r["time_us"] * 1e3)  # FLOP per µs / 1e3 = GFLOP/s
            label = f"{styles.label(ch, k)}, {op}, n = {pow2_label(r['n'])}"
            points.append((intensity, gflops, styles.color(ch, k), marker, label))
    if not points:
        return _placeholder(path, title, "No f32 sum or dot rows in bench.csv.")

    fig, ax = plt.subplots(figsize=(11, 6.5))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    mem_gbps = machine.copy_gbps or machine.dram_gbps
    mem_what = "measured copy" if machine.copy_gbps else "theoretical DRAM"
    # Span the x axis from well below the reductions to past the ridge point, where the memory
    # roof meets the compute roof: the reader sees how far left of it a reduction sits.
    ridge = machine.fp32_gflops / mem_gbps if machine.fp32_gflops else 16
    xs_pts = [p[0] for p in points]
    x_lo, x_hi = min(xs_pts) / 16, max(ridge * 8, max(xs_pts) * 16)
    ax.set_xlim(x_lo, x_hi)
    # Every f32 reduction does about one FLOP per 4-byte element, so all points share one
    # intensity and pile up on a vertical line. Each gets a label to the right, joined by a
    # leader line, stacked top-down in performance order so that no two labels collide; the
    # y axis reaches below the lowest label.
    points.sort(key=lambda p: -p[1])
    label_ys, label_y = [], math.inf
    for p in points:
        label_y = min(p[1], label_y / 1.4)
        label_ys.append(label_y)
    y_top = (machine.fp32_gflops or mem_gbps * x_hi) * 3
    ax.set_ylim(min(label_ys + [mem_gbps * x_lo]) / 2, y_top)

    xs = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
    roof = [min(mem_gbps * x, machine.fp32_gflops or math.inf) for x in xs]
    ax.plot(xs, roof, color="black", linewidth=2)
    if machine.fp32_gflops:
        ax.axhline(machine.fp32_gflops, color="black", linewidth=0.8, linestyle=":")
        ax.text(x_hi / 1.2, machine.fp32_gflops * 1.15,
                f"fp32 compute roof: {machine.fp32_gflops / 1e3:.1f} TFLOP/s",
                ha="right", va="bottom", fontsize=10)
    # Memory roof label, rotated to lie along the sloped line (angle measured on screen).
    x_text = x_lo * 2
    p0, p1 = ax.transData.transform([(x_text, mem_gbps * x_text),
                                     (x_text * 2, mem_gbps * x_text * 2)])
    angle = math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))
    ax.text(x_text, mem_gbps * x_text * 1.25,
            f"memory roof ({mem_what}): {mem_gbps:.0f} GB/s × intensity",
            rotation=angle, rotation_mode="anchor", ha="left", va="bottom", fontsize=10)

    if machine.copy_gbps:
        # A copy writes as much as it reads; a reduction only reads, so it may pass the copy's
        # roof. The theoretical DRAM roof above it is the one no kernel can pass.
        ax.plot(xs, [min(machine.dram_gbps * x, machine.fp32_gflops or math.inf) for x in xs],
                color="firebrick", linewidth=1, linestyle="--")
        ax.text(x_text * 32, machine.dram_gbps * x_text * 32 * 1.3,
                f"theoretical DRAM: {machine.dram_gbps:.0f} GB/s", color="firebrick",
                rotation=angle, rotation_mode="anchor", ha="left", va="bottom", fontsize=9)

    for (intensity, gflops, color, marker, label), label_y in zip(points, label_ys):
        hollow = marker == "s"  # dot products: open squares, so a circle below stays visible
        ax.plot(intensity, gflops, marker=marker, markersize=11 if hollow else 7,
                linestyle="none", color=color, markerfacecolor="none" if hollow else color,
                markeredgecolor=color if hollow else "black", markeredgewidth=1.5 if hollow else 0.6)
        ax.annotate(f"{label}: {gflops:.0f} GFLOP/s", (intensity, gflops),
                    xytext=(intensity * 6, label_y), textcoords="data", va="center", fontsize=8.5,
                    color=color,
                    arrowprops=dict(arrowstyle="-", color=color, linewidth=0.7,
                                    relpos=(0, 0.5)))  # from the label's left end
    ax.set_xlabel("arithmetic intensity (FLOP/byte, log scale)")
    ax.set_ylabel("achieved performance (GFLOP/s, log scale)")
    ax.set_title(f"{title}: f32 sum (dots) and dot product (open squares) at the largest "
                 f"DRAM-resident n" + ("\n" + "; ".join(sorted(notes)) if notes else ""))
    ax.grid(True, which="major", alpha=0.3)
    _save(fig, path)


def chart_chapters(rows, machine, styles, path):
    plt = _pyplot()
    part = select(rows, "sum", "f32")
    if not part:
        return _placeholder(path, f"Chapters ({machine.gpu})", "No f32 sum rows in bench.csv.")
    n, note = pick_dram_n(part)
    bars = [r for r in sort_rows(list(part)) if r["n"] == n]

    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(bars) + 3), 6))
    xs = range(len(bars))
    colors = [styles.color(r["chapter"], r["kernel"]) for r in bars]
    drawn = ax.bar(xs, [r["gbps"] for r in bars], color=colors, edgecolor="black",
                   linewidth=0.6)
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
    size = f"n = {pow2_label(n)} ({binary_size(n * 4)} of f32)"
    ax.set_title(f"f32 sum per chapter at {size} ({machine.gpu})"
                 + (f"\n{note}" if note else ""))
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, path)


def load_results(results_dir):
    return (read_csv(os.path.join(results_dir, "bench.csv")),
            Machine(os.path.join(results_dir, "machine.txt")))


def write_tables(results_dir, rows, machine):
    with open(os.path.join(results_dir, "tables.md"), "w", encoding="utf-8") as f:
        f.write(tables_markdown(rows, machine) + "\n")
    print(f"wrote tables.md in {results_dir}")


def charts(results_dir):
    rows, machine = load_results(results_dir)
    # The charts draw the lessons' kernels and the libraries'. A variant is measured at a few
    # sizes for a comparison with its lesson kernel, which the tables make better than a line
    # of two points would.
    shown = [r for r in rows if not r["variant_of"]]
    styles = Styles(shown)

    def out(name):
        return os.path.join(results_dir, name)

    chart_bandwidth_vs_n(shown, machine, styles, out("bandwidth_vs_n.png"))
    chart_roofline(shown, machine, styles, out("roofline.png"))
    chart_chapters(shown, machine, styles, out("chapters.png"))
    chart_dtypes(shown, machine, styles, out("dtypes.png"))
    chart_dot(shown, machine, styles, out("dot.png"))
    variants = [f"{chapter}/{kernel}" for chapter, kernel in
                kernels_of([r for r in rows if r["variant_of"]])]
    if variants:
        print(f"charts leave out the variants (tables.md has them): {', '.join(variants)}")
    print(f"wrote {', '.join(name for name, _ in CHARTS)} in {results_dir}")
    write_tables(results_dir, rows, machine)


# --------------------------------------------------------------------------------------------
# Comparing two runs
# --------------------------------------------------------------------------------------------

def compare_markdown(rows, other_rows, name, other_name):
    other = {row_key(r): r for r in other_rows}
    matched = []
    for r in rows:
        o = other.get(row_key(r))
        if o is not None:
            # A row-shaped record so kernel_table can lay it out; the L2 mark follows this run.
            matched.append(dict(r, ratio_to_cub=r["gbps"] / o["gbps"]))
    if not matched:
        raise InputError(f"no (chapter, kernel, op, dtype, n) in common between {name} and "
                         f"{other_name}")
    lines = [f"# {name} vs. {other_name}", "",
             f"GB/s of {name} divided by GB/s of {other_name}, for the rows both runs measured "
             f"(> 1: {name} is faster). The last column is the geometric mean over sizes.",
             f"Cells marked `*` are L2-resident in {name}: input < 4x L2.", ""]
    for op, dtype in sections(matched):
        part = select(matched, op, dtype)
        ns = sorted({r["n"] for r in part})
        table = kernel_table(part, [(pow2_label(n), n, "ratio_to_cub") for n in ns])
        # Append the geometric mean (the fair average of ratios) to each kernel's line.
        means = []
        for chapter, kernel in kernels_of(part):
            ratios = [r["ratio_to_cub"] for r in part
                      if (r["chapter"], r["kernel"]) == (chapter, kernel)]
            means.append(math.exp(sum(map(math.log, ratios)) / len(ratios)))
        table[0] += " geomean |"
        table[1] += "---:|"
        table[2:] = [line + f" {mean:.2f} |" for line, mean in zip(table[2:], means)]
        lines += [f"## {op}, {dtype}", ""] + table + [""]
    only_here = len(rows) - len(matched)
    only_there = len(other_rows) - len(matched)
    lines.append(f"Rows only in {name}: {only_here}; only in {other_name}: {only_there}.")
    return "\n".join(lines)


def compare(results_dir, other_dir):
    rows = read_csv(os.path.join(results_dir, "bench.csv"))
    other_rows = read_csv(os.path.join(other_dir, "bench.csv"))
    name = os.path.basename(os.path.normpath(results_dir))
    other_name = os.path.basename(os.path.normpath(other_dir))
    if name == other_name:
        name, other_name = os.path.normpath(results_dir), os.path.normpath(other_dir)
    text = compare_markdown(rows, other_rows, name, other_name)
    with open(os.path.join(results_dir, "compare.md"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(text)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def command_csv(args):
    rows, skipped = load_benchmark_json(args.bench_json)
    if skipped:
        warn(f"{len(skipped)} benchmark(s) failed or were skipped and are left out:\n  "
             + "\n  ".join(skipped))
    if not rows:
        raise InputError(f"{args.bench_json} holds no successful benchmark rows")
    add_ratio_to_cub(rows)
    write_csv(sort_rows(rows), args.out_csv)
    print(f"wrote {len(rows)} rows to {args.out_csv}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("csv", help="Google Benchmark JSON -> tidy CSV")
    p.add_argument("bench_json")
    p.add_argument("out_csv")
    p.set_defaults(func=command_csv)
    p = sub.add_parser("charts", help="bench.csv + machine.txt -> PNG charts and tables.md")
    p.add_argument("results_dir")
    p.set_defaults(func=lambda args: charts(args.results_dir))
    p = sub.add_parser("tables", help="bench.csv + machine.txt -> tables.md (no matplotlib needed)")
    p.add_argument("results_dir")
    p.set_defaults(func=lambda args: write_tables(args.results_dir, *load_results(args.results_dir)))
    p = sub.add_parser("compare", help="GB/s ratios between two result folders")
    p.add_argument("results_dir")
    p.add_argument("other_dir")
    p.set_defaults(func=lambda args: compare(args.results_dir, args.other_dir))
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except InputError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # an output file that cannot be written
        print(f"plot.py: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
