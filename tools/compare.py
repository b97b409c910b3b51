"""The compare job: this run's GB/s divided by another run's, printed and written to compare.md."""

import math
import os

from tools.job import run_job
from tools.results import flat_rows, kernel_rows, kernels_of, lesson_kernels, read_csv, select
from tools.schema import DRAM_N, InputError, L2_FOOTNOTE, flat_key, is_baseline, pow2_label
from tools.tables import kernel_table, markdown_table, sections


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


def main(argv):
    return run_job("compare", "GB/s ratios between two result folders", compare, ["results_dir", "other_dir"], argv)
