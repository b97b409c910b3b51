"""Reading a results folder: bench.csv (under today's chapter names), machine.txt, floor.csv; and
the selections of its rows the tables and charts use."""

import csv
import os

from tools.schema import (CHECK_COUNTERS, CSV_COLUMNS, DRAM_N, FLAT, FLOOR_COLUMNS, FLOOR_CSV,
                        FLOOR_KERNEL, InputError, LAYOUTS, OPTIONAL_COLUMNS, binary_size,
                        is_baseline, kernel_key, open_input, pow2_label, row_key)


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
    """bench.csv -> its rows, each a dict (parse_row); a bad cell is an InputError naming its line."""
    # Rows are dicts, not a pandas DataFrame: each holds a params dict and sorts by kernel_key.
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


# ---- Selections (the tables, the charts and the READMEs' tables) ---------------------------

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
