"""tables.md: the Markdown tables of a results folder, and the cell formats the READMEs share."""

import os

from tools.job import run_job
from tools.results import batched_rows, flat_rows, kernels_of, lesson_kernels, read_results, select
from tools.schema import (BATCHED_BASELINE, DTYPE_ORDER, L2_FOOTNOTE, NAIVE_MAPPING, OP_ORDER,
                        TIME_TABLE_MAX_N, baseline_for, batched_key, binary_size, is_baseline,
                        pow2_label)


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
    # By hand, not tabulate: tabulate pads every cell to its column's width; these tables are unpadded.
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
             "Generated by `python3 -m tools charts` from `bench.csv`; do not edit by hand.",
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


def main(argv):
    return run_job("tables", "bench.csv + machine.txt -> tables.md (no matplotlib needed)",
                   lambda results_dir: write_tables(results_dir, *read_results(results_dir)), ["results_dir"], argv)
