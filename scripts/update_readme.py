#!/usr/bin/env python3
"""Regenerates the results sections of the READMEs, everything between the lines
<!-- results:begin --> and <!-- results:end -->, from a results folder (bench.csv, machine.txt).

    scripts/update_readme.py README RESULTS_DIR
    scripts/update_readme.py --chapter CHAPTER_DIR RESULTS_DIR
    scripts/update_readme.py --all README RESULTS_DIR

What each kernel is, bench.csv says (results/plot.py csv): a chapter's lessons are its kernels
with no variant_of that are not a library's (cub_..., cublas_...), ordered by param step, then by
their other params; the last of them is the chapter's lead kernel (08's highest step). Its
variants are the kernels whose variant_of names it.

README: a table of the f32 sum of every chapter's lead kernel and of CUB at n = 2^28 (DRAM) and
n = 2^20 (L2), and the charts `results/plot.py charts RESULTS_DIR` drew (run it first).

--chapter: CHAPTER_DIR/README.md (the chapter is the folder's name) gets, for each op and dtype
the chapter measured:
  - with several lessons (08's steps): a table of them all and of the libraries beside them;
  - the lead kernel at n = 2^20, 2^24 ... 2^30: time per call, GB/s, % of DRAM peak, and the
    ratio of its GB/s to the previous chapter's lead kernel's and to the library's;
  - with variants measured at those sizes: the variants table, the lead kernel and its variants
    sorted by their params, the params that differ as columns, and at each size a variant was
    measured at, the GB/s and its ratio to the lead kernel's and to the library's.
From chapter 06 on, the small-n table: time per call of the f32 sum at n = 2^10 ... 2^22 of the
lead kernel, of its variants measured below 2^20, and of CUB.
09_cub_comparison gets instead, for each op and dtype, every chapter's lead kernel against the
library at every size.

--all: the top-level README and every NN_name/README.md next to it that has the markers;
nothing is written unless every section could be built.

A missing marker, file or column is reported in one line with exit status 2.
"""

import os
import sys

# The table code lives in results/plot.py, so that the README and tables.md format alike.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "results"))
import plot  # noqa: E402

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"

CHAPTER_SIZES = [2 ** 20, 2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30]
SMALL_SIZES = [2 ** k for k in range(10, 23, 2)]
SMALL_N_FROM_CHAPTER = 6  # chapters before 06 are far from launch-bound limits; their tables suffice


# --------------------------------------------------------------------------------------------
# What each kernel is
# --------------------------------------------------------------------------------------------

def chapter_number(name):
    """'06_warp_shuffle' -> 6; None for a name that is not a chapter folder's."""
    number, sep, _ = name.partition("_")
    return int(number) if sep and number.isdigit() else None


def lessons(rows, chapter):
    """The chapter's lesson kernels in rows, in plot.kernel_key order (08's steps in order)."""
    return [r["kernel"] for r in plot.kernel_rows(rows) if r["chapter"] == chapter
            and not r["variant_of"] and not plot.is_baseline(r["kernel"])]


def lead_kernel(rows, chapter):
    """The kernel the chapter's lesson ends with, or None (a chapter of library rows only)."""
    own = lessons(rows, chapter)
    return own[-1] if own else None


def variants(rows, chapter, lead):
    return [r["kernel"] for r in plot.kernel_rows(rows)
            if r["chapter"] == chapter and r["variant_of"] == lead]


def fmt(field, value):
    return "—" if value is None else plot.CELL_FORMATS[field].format(value)


def ratio(row, other):
    return fmt("ratio_to_cub", row["gbps"] / other["gbps"] if row and other else None)


def memory_label(row):
    return "L2-resident" if row["l2_resident"] else "DRAM"


# --------------------------------------------------------------------------------------------
# The top-level README
# --------------------------------------------------------------------------------------------

def build_section(readme_path, results_dir):
    rows = plot.read_csv(os.path.join(results_dir, "bench.csv"))
    machine = plot.Machine(os.path.join(results_dir, "machine.txt"))
    sums = plot.select(rows, "sum", "f32")
    if not sums:
        raise plot.InputError(f"{results_dir}/bench.csv has no f32 sum rows")
    # One line per chapter: its variants are in its own README.
    shown = {(c, lead_kernel(sums, c)) for c in {r["chapter"] for r in sums}}
    sums = [r for r in sums if (r["chapter"], r["kernel"]) in shown or plot.is_baseline(r["kernel"])]
    link = linker(readme_path, results_dir)

    dram_n, note = plot.pick_dram_n(sums)
    l2_rows = [r for r in sums if r["n"] == plot.L2_N]
    l2_label = " (L2-resident)" if l2_rows and all(r["l2_resident"] for r in l2_rows) else ""
    columns = []
    for n, label in ((dram_n, ""), (plot.L2_N, l2_label)):
        at = f"n = {plot.pow2_label(n)}{label}"
        columns += [(f"GB/s, {at}", n, "gbps"), ("% of peak", n, "pct_peak"),
                    ("× CUB", n, "ratio_to_cub")]
    _, cub = plot.baseline_for("sum", "f32")

    lines = [f"Measured on **{machine.gpu}**. Generated by `scripts/update_readme.py` from "
             f"[`{link('bench.csv')}`]({link('bench.csv')}); edit nothing between the markers, "
             f"rerun the script instead.", "",
             f"f32 sum per chapter: GB/s (10^9 bytes/s), % of the theoretical DRAM bandwidth "
             f"({machine.dram_gbps:.0f} GB/s) and ratio to `{cub}` at the same n"
             + (f" (n = {plot.pow2_label(dram_n)}: {note})" if note else "") + ".", ""]
    lines += plot.kernel_table(sums, columns)
    lines += ["", f"\\* {plot.L2_FOOTNOTE} ({machine.l2_label()}): these cells measure L2, "
                  f"not DRAM, bandwidth.", ""]
    charts = [(name, alt) for name, alt in plot.CHARTS
              if os.path.exists(os.path.join(results_dir, name))]
    if not charts:
        print(f"update_readme.py: warning: no charts in {results_dir}; run "
              f"results/plot.py charts {results_dir} first", file=sys.stderr)
    for name, alt in charts:  # one paragraph each, so the images stack rather than tile
        lines += [f"![{alt}]({link(name)})", ""]
    lines += [f"Every op, dtype and size: [`{link('tables.md')}`]({link('tables.md')})."]
    return "\n".join(lines)


def linker(readme_path, results_dir):
    """name -> the path of RESULTS_DIR/name relative to the README's folder, so that links work
    on GitHub and in a checkout."""
    here = os.path.dirname(os.path.abspath(readme_path))

    def link(name):
        return os.path.relpath(os.path.join(os.path.abspath(results_dir), name), here).replace(os.sep, "/")
    return link


# --------------------------------------------------------------------------------------------
# Chapter tables. `part`: the rows of one op and dtype.
# --------------------------------------------------------------------------------------------

def lead_table(part, chapter, lead, previous):
    """The lead kernel at CHAPTER_SIZES: one line per size it was measured at."""
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in part}
    prev_lead = previous and lead_kernel(part, previous)
    _, base = plot.baseline_for(part[0]["op"], part[0]["dtype"])
    header = ["n", "input", "memory", "time per call (µs)", "GB/s", "% of DRAM peak"]
    header += [f"vs. {previous} (GB/s ratio)"] if prev_lead else []
    body = []
    for n in CHAPTER_SIZES:
        r = at.get((chapter, lead, n))
        if r is None:
            continue
        input_bytes = n * round(r["bytes"] / n)  # bytes counts the input plus the result
        cells = [plot.pow2_label(n), plot.binary_size(input_bytes), memory_label(r),
                 fmt("time_us", r["time_us"]), fmt("gbps", r["gbps"]), fmt("pct_peak", r["pct_peak"])]
        cells += [ratio(r, at.get((previous, prev_lead, n)))] if prev_lead else []
        body.append(cells + [fmt("ratio_to_cub", r["ratio_to_cub"])])
    return plot.markdown_table(header + [f"× `{base}`"], body, text_columns=3) if body else []


def varying_params(kernel_rows):
    """The params whose values differ among the kernels (one without it counts as different)."""
    names = sorted({name for r in kernel_rows for name in r["params"]})
    return [name for name in names if len({r["params"].get(name) for r in kernel_rows}) > 1]


def comparison_table(part, chapter, kernels, lead):
    """One line per kernel measured at CHAPTER_SIZES, sorted by its params (the libraries last):
    the params that differ, then at each size where a kernel other than the lead was measured,
    its GB/s and its ratio to the lead kernel's and to the library's. Empty when that leaves
    the lead kernel alone."""
    at = {(r["kernel"], r["n"]): r for r in part if r["chapter"] == chapter}
    sizes = [n for n in CHAPTER_SIZES if any((k, n) in at for k in kernels if k != lead)]
    shown = [r for r in plot.kernel_rows(part) if r["chapter"] == chapter and r["kernel"] in kernels
             and any((r["kernel"], n) in at for n in sizes)]
    if len(shown) < 2:
        return []
    names = varying_params(shown)
    _, base = plot.baseline_for(part[0]["op"], part[0]["dtype"])
    header = ["kernel"] + names
    for n in sizes:
        some = next(at[k, n] for k in kernels if (k, n) in at)
        header += [f"GB/s, n = {plot.pow2_label(n)} ({memory_label(some)})", f"× `{lead}`",
                   f"× `{base}`"]
    body = []
    for r in shown:
        cells = [f"`{r['kernel']}`"] + [plot.format_number(r["params"].get(name)) or "—"
                                         for name in names]
        for n in sizes:
            mine = at.get((r["kernel"], n))
            cells += [fmt("gbps", mine and mine["gbps"]), ratio(mine, at.get((lead, n))),
                      fmt("ratio_to_cub", mine and mine["ratio_to_cub"])]
        body.append(cells)
    return plot.markdown_table(header, body, text_columns=1)


def small_n_table(rows, chapter, lead):
    """Time per call (µs) of the f32 sum at SMALL_SIZES: the lead kernel, its variants measured
    below CHAPTER_SIZES (07's plain launch: those measured from there on are in the variants
    table), and CUB, with CUB's time divided by the lead kernel's."""
    sums = plot.select(rows, "sum", "f32")
    base_chapter, cub = plot.baseline_for("sum", "f32")
    time = {(r["chapter"], r["kernel"], r["n"]): r["time_us"] for r in sums}
    below = [n for n in SMALL_SIZES if n < CHAPTER_SIZES[0]]
    kernels = [lead] + [k for k in variants(sums, chapter, lead)
                        if any((chapter, k, n) in time for n in below)]
    header = ["n"] + [f"`{k}` (µs)" for k in kernels] + [f"`{cub}` (µs)", "CUB time ÷ this chapter's"]
    body = []
    for n in SMALL_SIZES:
        mine, base = time.get((chapter, lead, n)), time.get((base_chapter, cub, n))
        if mine is not None:
            body.append([plot.pow2_label(n)] + [fmt("time_us", time.get((chapter, k, n))) for k in kernels]
                        + [fmt("time_us", base), fmt("ratio_to_cub", base / mine if base else None)])
    return plot.markdown_table(header, body, text_columns=1) if body else []


def against_cub_table(part):
    """Rows: every chapter's lead kernel; columns: every n the library was measured at; cells:
    ratio to the library. The last line is the library's GB/s. Empty without library rows."""
    base_chapter, base = plot.baseline_for(part[0]["op"], part[0]["dtype"])
    base_rows = {r["n"]: r for r in part if (r["chapter"], r["kernel"]) == (base_chapter, base)}
    if not base_rows:
        return []
    sizes = sorted(base_rows)
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in part}
    body = []
    for chapter in sorted({r["chapter"] for r in part}):
        lead = lead_kernel(part, chapter)
        if lead:
            body.append([chapter, f"`{lead}`"] + [fmt("ratio_to_cub", at[chapter, lead, n]["ratio_to_cub"])
                                                  if (chapter, lead, n) in at else "—" for n in sizes])
    body.append([base_chapter, f"`{base}`: GB/s"] + [fmt("gbps", base_rows[n]["gbps"]) for n in sizes])
    header = ["chapter", "kernel"] + [plot.pow2_label(n) + ("*" if base_rows[n]["l2_resident"] else "")
                                      for n in sizes]
    return plot.markdown_table(header, body)


# --------------------------------------------------------------------------------------------
# Chapter sections
# --------------------------------------------------------------------------------------------

def footer(machine, chapter_dir, results_dir):
    """The line under every chapter table: the GPU, and the CSV it comes from (linked relative to
    the chapter README, shown relative to the repository root above it)."""
    target = linker(os.path.join(chapter_dir, "README.md"), results_dir)("bench.csv")
    shown = linker(chapter_dir, results_dir)("bench.csv")
    return (f"*{machine.gpu}. Generated from [`{shown}`]({target}) by `scripts/update_readme.py "
            f"--chapter`; edit nothing between the markers, rerun the script instead.*")


def join(tables, below):
    """(title, table) pairs -> the section's Markdown lines, the footer under every table."""
    return [line for title, table in tables if table for line in [title, ""] + table + ["", below, ""]]


def cub_chapter_section(rows, machine, below):
    tables = [(f"**{dtype} {op}** against `{plot.baseline_for(op, dtype)[1]}`",
               against_cub_table(plot.select(rows, op, dtype))) for op, dtype in plot.sections(rows)]
    if not any(table for _, table in tables):
        raise plot.InputError("bench.csv has no CUB rows to compare with")
    lines = [f"Measured on **{machine.gpu}**. Every chapter's lead kernel against the library in the "
             f"same run: its GB/s divided by the library's at the same n (> 1: faster than the "
             f"library). The last line of each table is the library's own GB/s. \\* L2-resident "
             f"sizes ({plot.L2_FOOTNOTE}, {machine.l2_label()}): the ratio compares L2 and launch "
             f"times, not DRAM bandwidth.", ""]
    return "\n".join(lines + join(tables, below)).rstrip("\n")


def chapter_tables(rows, chapter, lead, previous):
    """(title, table) pairs of a chapter other than the CUB chapter, in reading order: per op
    and dtype the steps and the lead kernel, then the variants, then small n."""
    tables, later = [], []
    for op, dtype in plot.sections([r for r in rows if r["chapter"] == chapter]):
        part = plot.select(rows, op, dtype)
        if len(lessons(part, chapter)) > 1:
            steps = [r["kernel"] for r in plot.kernel_rows(part)
                     if r["chapter"] == chapter and not r["variant_of"]]
            tables.append((f"**{dtype} {op}, every step**, and the libraries measured beside them",
                           comparison_table(part, chapter, steps, lead)))
        tables.append((f"**{dtype} {op}**, `{lead}`", lead_table(part, chapter, lead, previous)))
        base = plot.baseline_for(op, dtype)[1]
        later.append((f"**Variants of `{lead}`**, {dtype} {op}: the settings in which they differ, "
                      f"and their GB/s against `{lead}`'s and `{base}`'s at the same n.",
                      comparison_table(part, chapter, [lead] + variants(part, chapter, lead), lead)))
    if (chapter_number(chapter) or 0) >= SMALL_N_FROM_CHAPTER:
        later.append(("**Small n**, f32 sum: time per call, where launches, not bytes, set the time "
                      "(all these inputs sit in L2).", small_n_table(rows, chapter, lead)))
    return [(title, table) for title, table in tables + later if table]


def build_chapter_section(chapter_dir, results_dir):
    chapter = os.path.basename(os.path.abspath(chapter_dir))
    rows = plot.read_csv(os.path.join(results_dir, "bench.csv"))
    machine = plot.Machine(os.path.join(results_dir, "machine.txt"))
    below = footer(machine, chapter_dir, results_dir)
    if chapter == plot.CUB_CHAPTER:
        return cub_chapter_section(rows, machine, below)
    lead = lead_kernel(rows, chapter)
    previous = max((r["chapter"] for r in rows if r["chapter"] < chapter), default=None)
    tables = chapter_tables(rows, chapter, lead, previous) if lead else []
    if not tables:
        raise plot.InputError(f"{results_dir}/bench.csv has no rows of chapter {chapter}"
                              + (f"'s {lead} at n = 2^10 ... 2^30" if lead else ""))
    ratios = ["`× K`: divided by kernel K's in the same run (`cub_…`: `cub::DeviceReduce`, "
              "`cublas_…`: cuBLAS)"]
    if any("vs. " in table[0] for _, table in tables):
        ratios.insert(0, f"`vs. {previous}`: this chapter's GB/s divided by {previous}'s at the same n")
    dot = any(r["op"] == "dot" for r in rows if r["chapter"] == chapter)
    lines = [f"Measured on **{machine.gpu}**. GB/s: "
             f"{'the bytes of both vectors' if dot else 'the input'} read once, in 10^9 bytes/s; "
             f"% of DRAM peak: of the theoretical DRAM bandwidth ({machine.dram_gbps:.0f} GB/s). "
             f"L2-resident rows (input < 4x L2, {machine.l2_label()}) measure L2 and launch latency, "
             f"not DRAM: read their time per call. {'; '.join(ratios)} (> 1: this chapter is "
             f"faster).", ""]
    return "\n".join(lines + join(tables, below)).rstrip("\n")


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------

def replace_between_markers(text, section, path):
    """The text with the part between the two marker lines replaced by section."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise plot.InputError(f"{path} needs exactly one '{BEGIN}' and one '{END}' line")
    head, rest = text.split(BEGIN)
    if END in head:
        raise plot.InputError(f"{path}: '{END}' comes before '{BEGIN}'")
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{section}\n{END}{tail}"


def read_text(path):
    with plot.open_input(path) as f:
        return f.read()


def plan_update(readme, build):
    """(path, old text, new text). The markers are checked before any results are read: a
    README without them is the usual slip."""
    text = read_text(readme)
    replace_between_markers(text, "", readme)
    return readme, text, replace_between_markers(text, build(), readme)


def chapter_readmes(top_readme):
    """The NN_name/README.md files next to the top-level README that have a results marker,
    and those that have none."""
    root = os.path.dirname(os.path.abspath(top_readme))
    marked, unmarked = [], []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "README.md")
        if chapter_number(name) is None or not os.path.isfile(path):
            continue
        text = read_text(path)
        folder = os.path.join(os.path.dirname(top_readme), name)
        (marked if BEGIN in text or END in text else unmarked).append(folder)
    return marked, unmarked


USAGE = ("usage: update_readme.py README RESULTS_DIR\n"
         "       update_readme.py --chapter CHAPTER_DIR RESULTS_DIR\n"
         "       update_readme.py --all README RESULTS_DIR")


def main(argv):
    args = argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    mode = args.pop(0) if args and args[0] in ("--chapter", "--all") else None
    if len(args) != 2 or any(a.startswith("--") for a in args):
        print(USAGE, file=sys.stderr)
        return 2
    target, results_dir = args
    try:
        if mode == "--chapter":
            readme = os.path.join(target, "README.md")
            plans = [plan_update(readme, lambda: build_chapter_section(target, results_dir))]
        else:
            plans = [plan_update(target, lambda: build_section(target, results_dir))]
            if mode == "--all":
                marked, unmarked = chapter_readmes(target)
                for folder in marked:
                    plans.append(plan_update(os.path.join(folder, "README.md"),
                                             lambda: build_chapter_section(folder, results_dir)))
                for folder in unmarked:
                    print(f"skipped {os.path.join(folder, 'README.md')}: no results markers")
        # Nothing is written before every section was built.
        for path, text, updated in plans:
            if updated != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(updated)
    except plot.InputError as e:
        print(f"update_readme.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"update_readme.py: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    for path, _, _ in plans:
        print(f"updated the results section of {path} from {results_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
