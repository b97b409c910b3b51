"""Google Benchmark's JSON (reduction_bench --benchmark_out_format=json) -> bench.csv, one row per
(chapter, kernel, op, dtype, n, shape, params), and floor.csv beside it (the empty kernel's times)."""

import csv
import json
import math
import os
import sys

from tools.job import run_job
from tools.results import Machine
from tools.schema import (BATCHED_BASELINE, BATCHED_COUNTERS, CHECK_COUNTERS, CSV_COLUMNS,
                        EARLY_EXIT_BYTES, FLAT, FLOOR_COLUMNS, FLOOR_CSV, FLOOR_PREFIX, InputError,
                        JSON_COUNTERS, LAYOUTS, OPTIONAL_COUNTERS, baseline_for, batched_key,
                        flat_key, open_input, row_key, sort_rows)


# ---- Google Benchmark JSON -> bench.csv -----------------------------------------------------

def format_number(x):
    """'' for None, integers without a decimal point, other values with 9 significant digits
    (enough that reading the CSV back loses nothing that any chart or table shows)."""
    if x is None:
        return ""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.9g}"


def write_csv(rows, path, columns=CSV_COLUMNS):
    """rows -> a CSV of columns, each value as cell() prints it."""
    # The csv module, not pandas' to_csv: numbers print as format_number, which no float_format is.
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


def read_benchmarks(bench_json):
    """The 'benchmarks' list of a Google Benchmark JSON file."""
    with open_input(bench_json) as f:
        try:
            doc = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InputError(f"{bench_json} is not valid JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError(f"{bench_json} has no 'benchmarks' list: not a Google Benchmark JSON file")
    return doc["benchmarks"]


def counter(bench_json, entry, key):
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{bench_json}: benchmark {entry['name']!r} has no numeric counter {key!r}")
    return float(value)


def optional_counter(bench_json, entry, key):
    """None where the benchmark did not measure it (common/bench.cpp leaves it out, or sets 0)."""
    if key not in entry:
        return None
    value = counter(bench_json, entry, key)
    return value if math.isfinite(value) and value > 0 else None


def name_fields(name):
    """The fields of a benchmark's name (Google Benchmark appends '/iterations:1', '/manual_time'
    and the like to ours), and whether it is the floor's."""
    fields = name.split("/")
    is_floor = fields[0] == FLOOR_PREFIX
    if is_floor and (len(fields) < 2 or not fields[1]):
        raise InputError(f"benchmark name {name!r} is not {FLOOR_PREFIX}/<kernel>/...")
    if not is_floor and (len(fields) < 5 or not fields[4].isdigit()):
        raise InputError(f"benchmark name {name!r} is not <chapter>/<kernel>/<op>/<dtype>/<n>")
    return fields, is_floor


def measured(bench_json, entry):
    """An entry's timing and check counters, or the reason it is left out (a string)."""
    row = {key: counter(bench_json, entry, key) for key in JSON_COUNTERS}
    bad = [key for key, value in row.items() if not math.isfinite(value)]
    if bad or row["time_us"] <= 0:
        return f"non-finite or non-positive {', '.join(bad) or 'time_us'}"
    row.update({key: optional_counter(bench_json, entry, key) for key in OPTIONAL_COUNTERS})
    row.update({key: counter(bench_json, entry, key) if key in entry else None for key in CHECK_COUNTERS})
    return row


def describe(bench_json, entry, fields, row):
    """row given what the kernel is, as common/bench.cpp says it (the label "variant of <kernel>"
    and a counter param_<key> per setting), and its shape."""
    label = entry.get("label") or ""
    variant_of = label[len("variant of "):] if label.startswith("variant of ") else ""
    row.update(chapter=fields[0], kernel=fields[1], op=fields[2], dtype=fields[3],
               n=int(fields[4]), l2_resident=row["l2_resident"] != 0, variant_of=variant_of,
               params={key[len("param_"):]: counter(bench_json, entry, key)
                       for key in entry if key.startswith("param_")},
               layout=FLAT, segments=1, length=int(fields[4]))
    # A batched row says its shape in counters (its name's last field only labels it).
    if "layout_id" in entry:
        layout_id = counter(bench_json, entry, "layout_id")
        if layout_id not in range(1, len(LAYOUTS)):
            raise InputError(f"{bench_json}: benchmark {entry['name']!r} has layout_id {layout_id:g}, "
                             f"not 1 to {len(LAYOUTS) - 1} ({', '.join(LAYOUTS[1:])})")
        row.update(layout=LAYOUTS[int(layout_id)],
                   **{key: int(counter(bench_json, entry, key)) for key in BATCHED_COUNTERS})


def collect(bench_json, entries, early_exit):
    """The runs of every row key and of every floor kernel, and 'name: why' for every benchmark
    left out. early_exit: (the counted bytes, machine) for the rows whose reads are unknown."""
    runs, floors, skipped = {}, {}, []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise InputError(f"{bench_json}: a benchmark entry has no name")
        name = entry["name"]
        # With --benchmark_repetitions Google Benchmark adds mean/median/stddev rows; the
        # individual runs are kept instead (see median_run).
        if entry.get("run_type") == "aggregate":
            continue
        if entry.get("error_occurred") or entry.get("skipped"):
            why = entry.get("error_message") or entry.get("skip_message") or "error"
            skipped.append(f"{name}: {why}")
            continue
        fields, is_floor = name_fields(name)
        row = measured(bench_json, entry)
        if isinstance(row, str):
            skipped.append(f"{name}: {row}")
            continue
        if is_floor:
            floors.setdefault(fields[1], []).append(dict(row, kernel=fields[1]))
            continue
        describe(bench_json, entry, fields, row)
        if entry.get("reads_unknown"):
            why = bytes_read_into(row, *early_exit)
            if why:
                skipped.append(f"{name}: {why}")
                continue
        runs.setdefault(row_key(row), []).append(row)
    return runs, floors, skipped


def median_run(rs):
    """One row per key: with repetitions, the run with the median time (as timing.hpp does)."""
    return sorted(rs, key=lambda r: r["time_us"])[len(rs) // 2]


def add_ratio_to_cub(rows):
    """ratio_to_cub: GB/s over the GB/s of the baseline row with the same op, dtype and n (empty
    when that row was not measured); a batched row's, over CUB's segmented reduction's at the
    same shape (empty for columns). The baseline's own rows get 1."""
    gbps = {flat_key(r): r["gbps"] for r in rows if r["layout"] == FLAT}
    batched_gbps = {batched_key(r): r["gbps"] for r in rows if r["layout"] != FLAT
                    and r["kernel"] == BATCHED_BASELINE}
    for r in rows:
        if r["layout"] == FLAT:
            base = gbps.get(baseline_for(r["op"], r["dtype"]) + (r["op"], r["dtype"], r["n"]))
        else:
            base = batched_gbps.get(batched_key(r))
        r["ratio_to_cub"] = r["gbps"] / base if base else None


def write_floor(floors, out_csv):
    """The floor beside bench.csv. A run without one leaves none: a floor.csv of an earlier run,
    set against this run's times, would give wrong differences."""
    floor_csv = os.path.join(os.path.dirname(out_csv), FLOOR_CSV)
    if floors:
        write_csv([median_run(rs) for _, rs in sorted(floors.items())], floor_csv, FLOOR_COLUMNS)
        print(f"wrote the floor ({', '.join(sorted(floors))}) to {floor_csv}")
    elif os.path.exists(floor_csv):
        os.remove(floor_csv)
        print(f"removed {floor_csv}: this run measured no floor")


def command_csv(bench_json, out_csv):
    entries = read_benchmarks(bench_json)
    folder = os.path.dirname(os.path.abspath(out_csv))
    early_exit_counts = read_early_exit_bytes(os.path.join(folder, EARLY_EXIT_BYTES))
    machine_txt = os.path.join(folder, "machine.txt")
    machine = Machine(machine_txt) if early_exit_counts and os.path.exists(machine_txt) else None
    runs, floors, skipped = collect(bench_json, entries, (early_exit_counts, machine))
    if skipped:
        print(f"csv: warning: {len(skipped)} benchmark(s) failed or were skipped and are left "
              f"out:\n  " + "\n  ".join(skipped), file=sys.stderr)
    if not runs:
        raise InputError(f"{bench_json} holds no successful benchmark rows")
    rows = [median_run(rs) for rs in runs.values()]
    add_ratio_to_cub(rows)
    write_csv(sort_rows(rows), out_csv)
    print(f"wrote {len(rows)} rows to {out_csv}")
    write_floor(floors, out_csv)


def main(argv):
    return run_job("csv", "Google Benchmark JSON -> tidy CSV", command_csv, ["bench_json", "out_csv"], argv)
