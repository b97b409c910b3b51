#!/usr/bin/env python3
"""Regenerates the results sections of the READMEs, everything between the lines
<!-- results:begin --> and <!-- results:end -->, from a results folder (bench.csv, machine.txt).

    scripts/update_readme.py README RESULTS_DIR                 the top-level README
    scripts/update_readme.py --chapter CHAPTER_DIR RESULTS_DIR  CHAPTER_DIR/README.md
    scripts/update_readme.py --all README RESULTS_DIR           both: every NN_name/README.md
                                                                next to README with the markers

The top-level README gets the f32 sum of every chapter's lead kernel and of CUB, and the charts
`results/plot.py charts` drew (run it first). A chapter gets, for each op and dtype it measured,
its lead kernel at n = 2^20 ... 2^30 against the previous chapter's and the library, with its
steps (08) and variants beside it; from 06 on, the one-call latency at small n. From 10 on (one
launch per call), a large-n table sets the lead kernel's GB/s against 07's two launches; and
where the lead kernel was also timed in a loop of calls (b2b_us), a launch-cost table takes the
small-n table's place: one call, a loop and a CUDA graph against CUB, and above the empty
kernel's floor (floor.csv, where the run has one).
09_cub_comparison gets every chapter's lead kernel against the library at every size.
11_batched and 12_segmented, many reductions at once (the batched rows of bench.csv; every other
table reads the flat rows only), get their lessons at every shape for f32 and f16 sums against
CUB's segmented reduction and the naive mapping, 11 the row mappings measured against the
automatic choice, and the chart of them.

What each kernel is, bench.csv says: a chapter's lessons are its kernels with no variant_of that
are not a library's, in plot.kernel_key order; the last is the chapter's lead kernel (08's
highest step), and its variants are the kernels whose variant_of names it. Nothing is written
unless every section could be built; a missing marker, file or column is reported in one line
with exit status 2.
"""

import glob
import math
import os
import sys

# The table code lives in results/plot.py, so that the README and tables.md format alike.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "results"))
import plot  # noqa: E402

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"
USAGE = ("usage: update_readme.py README RESULTS_DIR\n"
         "       update_readme.py --chapter CHAPTER_DIR RESULTS_DIR\n"
         "       update_readme.py --all README RESULTS_DIR")

CHAPTER_SIZES = [2 ** 20, 2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30]
SMALL_SIZES = [2 ** k for k in range(10, 23, 2)]
SMALL_N_FROM_CHAPTER = 6  # chapters before 06 are far from launch-bound limits; their tables suffice
# From chapter 10 on a reduction is one launch, so what a launch costs is the lesson: timed one
# call at a time, in a loop and in a graph (launch_cost_table, where the run timed loops), and at
# large n, where a launch is nothing beside the bytes, against 07's two launches (large_n_table).
LAUNCH_COST_FROM_CHAPTER = 10
LARGE_SIZES = [2 ** 26, 2 ** 28, 2 ** 30]


def chapter_number(chapter):
    """NN of 'NN_name', or None for a folder without one."""
    return int(chapter[:2]) if chapter[:2].isdigit() else None


def lessons(rows, chapter):
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


def link(folder, results_dir, name):
    """RESULTS_DIR/name relative to folder, so that links work on GitHub and in a checkout."""
    path = os.path.relpath(os.path.join(os.path.abspath(results_dir), name), os.path.abspath(folder))
    return path.replace(os.sep, "/")


def batched_summary(batched):
    """Chapter 11 (many reductions at once) in the top README: f32 sum, one line per layout, the
    lowest and highest GB/s over the shapes measured and where, and the range of its ratio to
    CUB's segmented reduction. Its own README has every shape."""
    part = [r for r in plot.select(batched, "sum", "f32")
            if not r["variant_of"] and not plot.is_baseline(r["kernel"])]
    if not part:
        return []
    header = ["Chapter", "Kernel", "layout", "shapes", "GB/s, lowest", "at L", "GB/s, highest",
              "at L", f"× `{plot.BATCHED_BASELINE}`, lowest", "highest"]
    body = []
    for layout in plot.LAYOUTS:
        for chapter, kernel in sorted({(r["chapter"], r["kernel"]) for r in part if r["layout"] == layout}):
            mine = [r for r in part if (r["chapter"], r["kernel"], r["layout"]) == (chapter, kernel, layout)]
            low, high = min(mine, key=lambda r: r["gbps"]), max(mine, key=lambda r: r["gbps"])
            ratios = [r["ratio_to_cub"] for r in mine if r["ratio_to_cub"] is not None]
            where = lambda r: plot.count_label(r["length"]) + (f" ({plot.distribution(r)})" if layout == "segments" else "")
            body.append([chapter, f"`{kernel}`", layout, str(len(mine)), fmt("gbps", low["gbps"]), where(low),
                         fmt("gbps", high["gbps"]), where(high),
                         fmt("ratio_to_cub", min(ratios)) if ratios else "—",
                         fmt("ratio_to_cub", max(ratios)) if ratios else "—"])
    return plot.markdown_table(header, body, text_columns=4)


def top_section(readme, rows, batched, machine, results_dir):
    # rows: the flat ones, one reduction of n elements each, set beside CUB's. Chapter 11's
    # batched calls read n elements into many results: a table of their own below it.
    sums = plot.select(rows, "sum", "f32")
    if not sums:
        raise plot.InputError(f"{results_dir}/bench.csv has no f32 sum rows")
    # One line per chapter: its variants are in its own README.
    leads = {(c, lead_kernel(sums, c)) for c in {r["chapter"] for r in sums}}
    sums = [r for r in sums if (r["chapter"], r["kernel"]) in leads or plot.is_baseline(r["kernel"])]
    # The library, the yardstick of the × CUB columns, closes the table, after every chapter.
    kernels = sorted(plot.kernels_of(sums), key=lambda k: plot.is_baseline(k[1]))
    here = os.path.dirname(os.path.abspath(readme))
    csv_link, tables_link = link(here, results_dir, "bench.csv"), link(here, results_dir, "tables.md")

    dram_n, note = plot.pick_dram_n(sums)
    l2_rows = [r for r in sums if r["n"] == plot.L2_N]
    l2_label = " (L2-resident)" if l2_rows and all(r["l2_resident"] for r in l2_rows) else ""
    columns = [column for n, label in ((dram_n, ""), (plot.L2_N, l2_label)) for column in (
        (f"GB/s, n = {plot.pow2_label(n)}{label}", n, "gbps"), ("% of peak", n, "pct_peak"),
        ("× CUB", n, "ratio_to_cub"))]
    lines = [f"Measured on **{machine.gpu}**. Generated by `scripts/update_readme.py` from "
             f"[`{csv_link}`]({csv_link}); edit nothing between the markers, rerun the script instead.",
             "",
             f"f32 sum per chapter: GB/s (10^9 bytes/s), % of the theoretical DRAM bandwidth "
             f"({machine.dram_gbps:.0f} GB/s) and ratio to `{plot.baseline_for('sum', 'f32')[1]}` "
             f"at the same n" + (f" (n = {plot.pow2_label(dram_n)}: {note})" if note else "") + ".",
             ""]
    lines += plot.kernel_table(sums, columns, kernels)
    lines += ["", f"\\* {plot.L2_FOOTNOTE} ({machine.l2_label}): these cells measure L2, "
                  f"not DRAM, bandwidth.", ""]
    summary = batched_summary(batched)
    if summary:
        lines += ["Many reductions at once, f32 sum: the rows or the columns of a [B, L] matrix, or "
                  "segments of mean length L, B · L elements in all. Each layout's lowest and "
                  "highest GB/s over the shapes measured, and its ratio to "
                  f"`{plot.BATCHED_BASELINE}` at the same shapes (CUB has no column reduction). "
                  "Every shape: the chapter's README.", ""]
        lines += summary + [""]
    custom = custom_ops_summary(rows)
    if custom:
        lines += ["Any associative operator: each of chapter 13's operators over 1 GiB through its "
                  f"lesson kernel, against chapter 07's f32 sum of the same bytes and CUB's "
                  "TransformReduce with the same functors in the same run, and its error against "
                  "float64 (a naive form's error is its trap; its check fails where the bound, "
                  "which grows with the chain of combines, is tighter than the loss, and wherever "
                  "the whole answer is lost). Every kernel: the chapter's README.", ""]
        lines += custom + [""]
    charts = [(name, alt) for name, alt in plot.CHARTS
              if os.path.exists(os.path.join(results_dir, name))]
    if not charts:
        print(f"update_readme.py: warning: no charts in {results_dir}; run "
              f"results/plot.py charts {results_dir} first", file=sys.stderr)
    for name, alt in charts:  # one paragraph each, so the images stack rather than tile
        lines += [f"![{alt}]({link(here, results_dir, name)})", ""]
    return "\n".join(lines + [f"Every op, dtype and size: [`{tables_link}`]({tables_link})."])


# ---- Chapter tables. `part`: the rows of one op and dtype. ----------------------------------

def lead_table(part, chapter, lead, previous):
    """The lead kernel at CHAPTER_SIZES: one line per size it was measured at."""
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in part}
    prev_lead = previous and lead_kernel(part, previous)
    header = ["n", "input", "memory", "µs per call, back to back", "µs, one call", "GB/s",
              "% of DRAM peak"]
    header += [f"vs. {previous} (GB/s ratio)"] if prev_lead else []
    header += [f"× `{plot.baseline_for(part[0]['op'], part[0]['dtype'])[1]}`"]
    body = []
    for n in CHAPTER_SIZES:
        r = at.get((chapter, lead, n))
        if r:
            input_bytes = n * round(r["bytes"] / n)  # bytes counts the input plus the result
            cells = [plot.pow2_label(n), plot.binary_size(input_bytes), memory_label(r)]
            cells += [fmt(field, r[field]) for field in ("time_us", "latency_us", "gbps", "pct_peak")]
            cells += [ratio(r, at.get((previous, prev_lead, n)))] if prev_lead else []
            body.append(cells + [fmt("ratio_to_cub", r["ratio_to_cub"])])
    return plot.markdown_table(header, body, text_columns=3) if body else []


def comparison_table(part, chapter, kernels, lead):
    """One line per kernel measured at CHAPTER_SIZES, sorted by its params (the libraries last):
    the params that differ, then at each size where a kernel other than the lead was measured,
    its GB/s and its ratio to the lead kernel's and to the library's. Empty when that leaves
    the lead kernel alone."""
    at = {(r["kernel"], r["n"]): r for r in part if r["chapter"] == chapter}
    sizes = [n for n in CHAPTER_SIZES if any((k, n) in at for k in kernels if k != lead)]
    shown = [r for r in plot.kernel_rows(part) if r["chapter"] == chapter
             and r["kernel"] in kernels and any((r["kernel"], n) in at for n in sizes)]
    if len(shown) < 2:
        return []
    # The params whose values differ among the kernels shown (one without it counts as different).
    names = [name for name in sorted({name for r in shown for name in r["params"]})
             if len({r["params"].get(name) for r in shown}) > 1]
    base = plot.baseline_for(part[0]["op"], part[0]["dtype"])[1]
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
    """Latency (µs) of one f32 sum call from idle at SMALL_SIZES: the lead kernel, its variants
    measured below CHAPTER_SIZES (07's plain launch: those measured from there on are in the
    variants table), and CUB, with CUB's latency divided by the lead kernel's."""
    sums = plot.select(rows, "sum", "f32")
    base_chapter, cub = plot.baseline_for("sum", "f32")
    time = {(r["chapter"], r["kernel"], r["n"]): r["latency_us"] for r in sums if r["latency_us"]}
    kernels = [lead] + [k for k in variants(sums, chapter, lead)
                        if any((chapter, k, n) in time for n in SMALL_SIZES if n < CHAPTER_SIZES[0])]
    header = ["n"] + [f"`{k}` (µs)" for k in kernels] + [f"`{cub}` (µs)", "CUB time ÷ this chapter's"]
    body = []
    for n in SMALL_SIZES:
        mine, base = time.get((chapter, lead, n)), time.get((base_chapter, cub, n))
        if mine is not None:
            body.append([plot.pow2_label(n)] + [fmt("latency_us", time.get((chapter, k, n))) for k in kernels]
                        + [fmt("latency_us", base), fmt("ratio_to_cub", base / mine if base else None)])
    return plot.markdown_table(header, body, text_columns=1) if body else []


def has_launch_cost(rows, chapter, lead):
    """Whether a chapter gets the launch-cost tables in place of the small-n one: from
    LAUNCH_COST_FROM_CHAPTER on, where its lead kernel's f32 sums were timed in a loop at
    SMALL_SIZES (a bench.csv from before the benchmark did that has no b2b_us)."""
    number = chapter_number(chapter)
    return number is not None and number >= LAUNCH_COST_FROM_CHAPTER and any(
        r["b2b_us"] for r in plot.select(rows, "sum", "f32")
        if (r["chapter"], r["kernel"]) == (chapter, lead) and r["n"] in SMALL_SIZES)


def launch_cost_table(rows, chapter, lead, floor):
    """µs per f32 sum call at SMALL_SIZES, the lead kernel's and CUB's: one call from idle, then
    in a loop, each with the lead's time divided by CUB's, then in a CUDA graph; with a floor
    (plot.read_floor), the lead's one call and loop minus the empty kernel's, timed alike."""
    base_chapter, cub = plot.baseline_for("sum", "f32")
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in plot.select(rows, "sum", "f32")}
    header = ["n"]
    for what in ("one call", "in a loop"):
        header += [f"`{lead}`, {what} (µs)", f"`{cub}`, {what} (µs)", "÷ CUB"]
    header += [f"`{lead}`, in a graph (µs)", f"`{cub}`, in a graph (µs)"]
    header += ["one call − floor (µs)", "in a loop − floor (µs)"] if floor else []
    body = []
    for n in SMALL_SIZES:
        mine, base = at.get((chapter, lead, n)), at.get((base_chapter, cub, n))
        if not mine:
            continue
        cells = [plot.pow2_label(n)]
        for field in ("latency_us", "b2b_us"):
            theirs = base and base[field]
            cells += [fmt(field, mine[field]), fmt(field, theirs),
                      fmt("ratio_to_cub", mine[field] / theirs if mine[field] and theirs else None)]
        cells += [fmt("graph_us", mine["graph_us"]), fmt("graph_us", base and base["graph_us"])]
        if floor:
            cells += [fmt(field, mine[field] - floor[field] if mine[field] and floor[field] else None)
                      for field in ("latency_us", "b2b_us")]
        body.append(cells)
    return plot.markdown_table(header, body, text_columns=1) if body else []


def large_n_table(rows, chapter, lead):
    """GB/s of the lead kernel's f32 sum at LARGE_SIZES beside 07's lead kernel's, and their
    ratio. Empty without 07's rows."""
    sums = plot.select(rows, "sum", "f32")
    two_pass = lead_kernel(sums, plot.TWO_PASS_CHAPTER)
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in sums}
    header = ["n", "memory", f"`{lead}` (GB/s)", f"{plot.TWO_PASS_CHAPTER}: `{two_pass}` (GB/s)",
              f"× `{two_pass}`"]
    body = []
    for n in LARGE_SIZES:
        mine, theirs = at.get((chapter, lead, n)), at.get((plot.TWO_PASS_CHAPTER, two_pass, n))
        if mine and theirs:
            body.append([plot.pow2_label(n), memory_label(mine), fmt("gbps", mine["gbps"]),
                         fmt("gbps", theirs["gbps"]), ratio(mine, theirs)])
    return plot.markdown_table(header, body, text_columns=2) if body else []


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


def chapter_tables(rows, chapter, lead, previous, floor):
    """(title, table) pairs in reading order: per op and dtype the steps and the lead kernel,
    then the variants, then small n (or the launch cost and large n). floor: plot.read_floor's."""
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
    number = chapter_number(chapter)
    if has_launch_cost(rows, chapter, lead):
        cub = plot.baseline_for("sum", "f32")[1]
        later.append(("**Launch cost**, f32 sum, where launches, not bytes, set the time (all "
                      "these inputs sit in L2): µs per call, one call from an idle GPU (the host's "
                      "dispatch included); in a loop, 200 calls made back to back, per call (the "
                      "host's dispatch or the GPU's work, whichever is slower); in a graph, the same "
                      f"200 calls captured into one CUDA graph, per call. `÷ CUB`: `{lead}`'s time "
                      f"divided by `{cub}`'s, a ratio of times, so < 1: this chapter is faster"
                      + ("; − floor: minus an empty kernel's time, timed the same way "
                         "(`floor.csv`)." if floor else "."),
                      launch_cost_table(rows, chapter, lead, floor)))
    elif number is not None and number >= SMALL_N_FROM_CHAPTER:
        later.append(("**Small n**, f32 sum: one call from an idle GPU, the host's dispatch included, "
                      "where launches, not bytes, set the time (all these inputs sit in L2).",
                      small_n_table(rows, chapter, lead)))
    if number is not None and number >= LAUNCH_COST_FROM_CHAPTER:
        two_pass = lead_kernel(plot.select(rows, "sum", "f32"), plot.TWO_PASS_CHAPTER)
        later.append((f"**Large n**, f32 sum, where bytes set the time: `{lead}`'s one launch "
                      f"against {plot.TWO_PASS_CHAPTER}'s two, GB/s, and `{lead}`'s divided by "
                      f"`{two_pass}`'s (> 1: this chapter is faster; 1: the single launch costs "
                      f"nothing here).", large_n_table(rows, chapter, lead)))
    return [(title, table) for title, table in tables + later if table]


# ---- Chapters 11 and 12: many reductions at once. `batched`: plot.batched_rows's. -------------

BATCHED_SECTIONS = [("sum", "f32"), ("sum", "f16")]


def batched_lessons_table(batched, chapter, op, dtype):
    """The chapter's lessons (one per layout) at every shape measured, one op and dtype: GB/s,
    % of peak, and the layout's yardstick, CUB's segmented reduction (rows, segments) or the
    naive mapping (columns)."""
    part = plot.select([r for r in batched if r["chapter"] == chapter], op, dtype)
    lessons = [r for r in part if not r["variant_of"] and not plot.is_baseline(r["kernel"])]
    segmented = any(r["layout"] == "segments" for r in lessons)
    # Segments have a count, a mean length and a distribution of lengths; a matrix B rows of L.
    shape = ["segments", "mean length", "lengths"] if segmented else ["B", "L"]
    header = ["layout"] + shape + ["kernel", "memory", "GB/s", "% of DRAM peak",
                                   f"× `{plot.BATCHED_BASELINE}`", "× naive mapping"]
    body = [[r["layout"], plot.count_label(r["segments"]), plot.count_label(r["length"])]
            + ([plot.distribution(r)] if segmented else [])
            + [f"`{r['kernel']}`", memory_label(r), fmt("gbps", r["gbps"]),
               fmt("pct_peak", r["pct_peak"]), fmt("ratio_to_cub", r["ratio_to_cub"]),
               fmt("ratio_to_cub", plot.naive_ratio(r, part))]
            for r in lessons]
    return plot.markdown_table(header, body, text_columns=len(shape) + 3) if body else []


def row_mappings_table(batched, chapter):
    """Rows, f32 sum: the rows lesson (its automatic choice) and its variants (each mapping
    forced), GB/s at every shape, the fastest in bold; and the choice, where the lesson's rows
    name it (param_strategy_id). Empty without a variant to set it against."""
    part = [r for r in plot.select(batched, "sum", "f32")
            if r["chapter"] == chapter and r["layout"] == "rows" and not r["params"].get("teaching")]
    kernels = plot.kernel_rows(part)
    lesson = next((r["kernel"] for r in kernels
                   if not r["variant_of"] and not plot.is_baseline(r["kernel"])), None)
    shown = [lesson] + [r["kernel"] for r in kernels if lesson and r["variant_of"] == lesson]
    if len(shown) < 2:
        return []
    at = {(r["kernel"], r["segments"], r["length"]): r for r in part}
    choice = any("strategy_id" in r["params"] for r in part if r["kernel"] == lesson)
    header = ["B", "L", "memory"] + (["automatic choice"] if choice else [])
    header += [f"`{lesson}` (automatic)"] + [f"`{k}`" for k in shown[1:]]
    body = []
    shapes = {(r["length"], r["segments"]) for r in part if r["kernel"] in shown}
    for length, segments in sorted(shapes):
        measured = [at.get((k, segments, length)) for k in shown]
        best = max(r["gbps"] for r in measured if r)
        cells = [plot.count_label(segments), plot.count_label(length),
                 memory_label(next(r for r in measured if r))]
        if choice:
            strategy = measured[0] and measured[0]["params"].get("strategy_id")
            cells.append("—" if strategy is None else
                         f"`{plot.ROW_STRATEGIES.get(strategy, plot.format_number(strategy))}`")
        cells += [f"**{fmt('gbps', r['gbps'])}**" if r and r["gbps"] == best else
                  fmt("gbps", r and r["gbps"]) for r in measured]
        body.append(cells)
    return plot.markdown_table(header, body, text_columns=4 if choice else 3)


def teaching_table(batched, chapter):
    """f32 sum: each teaching kernel of the lesson (param_teaching) beside the tuned kernel it is a
    variant of, at every shape both ran, and the ratio of their GB/s. Empty without teaching rows."""
    part = [r for r in plot.select(batched, "sum", "f32") if r["chapter"] == chapter]
    # A teaching row carries param_teaching (chapter 11) or is named for it (chapter 12's
    # reduce_segments_teaching, whose params are the data's).
    teaching = [r for r in part if r["params"].get("teaching") or r["kernel"].endswith("_teaching")]
    tuned = {(r["kernel"],) + plot.batched_key(r): r for r in part if r not in teaching}
    pairs = [(r, tuned.get((r["variant_of"],) + plot.batched_key(r))) for r in teaching]
    pairs = sorted(((t, u) for t, u in pairs if u), key=lambda p: (p[0]["layout"], p[0]["kernel"],
                                                                  p[0]["params"].get("heavy", 0),
                                                                  p[0]["length"], p[0]["segments"]))
    if not pairs:
        return []
    segmented = any(t["layout"] == "segments" for t, _ in pairs)
    header = (["teaching kernel", "tuned kernel"] + (["lengths"] if segmented else [])
              + ["B", "L", "memory", "teaching GB/s", "tuned GB/s", "teaching ÷ tuned"])
    body = []
    for t, u in pairs:
        cells = [f"`{t['kernel']}`", f"`{u['kernel']}`"]
        if segmented:
            cells.append("heavy-tailed" if t["params"].get("heavy") else "uniform")
        cells += [plot.count_label(t["segments"]), plot.count_label(t["length"]), memory_label(t),
                  fmt("gbps", t["gbps"]), fmt("gbps", u["gbps"]), fmt("ratio_to_cub", t["gbps"] / u["gbps"])]
        body.append(cells)
    return plot.markdown_table(header, body, text_columns=6 if segmented else 5)


def batched_chapter(chapter, batched, machine):
    """The intro and the (title, table) pairs of a chapter of batched rows."""
    tables = [(f"**{dtype} {op}**, the lessons: each layout at every shape measured",
               batched_lessons_table(batched, chapter, op, dtype)) for op, dtype in BATCHED_SECTIONS]
    tables.append(("**Rows, f32 sum: the measured alternatives**: the lesson's automatic choice of "
                   "mapping against each mapping forced (its variants), GB/s; the fastest of each "
                   "line in bold.", row_mappings_table(batched, chapter)))
    tables.append(("**The teaching kernels against the tuned ones**, f32 sum: the lesson's simplest "
                   "code of each mapping beside the tuned kernel of the same mapping, at the same "
                   "shapes, GB/s (a ratio below 1: the teaching kernel is slower).",
                   teaching_table(batched, chapter)))
    tables = [(title, table) for title, table in tables if table]
    if not tables:
        raise plot.InputError(f"bench.csv has no f32 or f16 sum rows of chapter {chapter}'s "
                              f"lessons")
    kernels = {r["kernel"] for r in batched if r["chapter"] == chapter}
    naive = "; ".join(f"`{k}`'s GB/s divided by `{v}`'s" for k, v in plot.NAIVE_MAPPING.items()
                      if k in kernels)
    segmented = any(r["layout"] == "segments" for r in batched if r["chapter"] == chapter)
    calls = ("a result per segment, segments of varying length (lengths uniform or "
             "heavy-tailed). GB/s: the elements and the int64 offsets read once"
             if segmented else
             "the rows or the columns of a [B, L] matrix. GB/s: the input read once")
    intro = (f"Measured on **{machine.gpu}**. Many reductions in one call: {calls} "
             f"(and the results written), in 10^9 bytes/s; % of DRAM "
             f"peak: of the theoretical DRAM bandwidth ({machine.dram_gbps:.0f} GB/s); both the "
             f"steady state, the median call among calls queued back to back. L2-resident rows "
             f"(input no larger than L2, {machine.l2_label}) are measured hot and measure L2, not "
             f"DRAM; larger inputs are measured cold. `× {plot.BATCHED_BASELINE}`: GB/s divided by "
             f"CUB's segmented reduction's at the same shape"
             + ("" if segmented else " (CUB has no column reduction)")
             + f"; × naive mapping: {naive} at the same shape (> 1: the lesson is faster).")
    return intro, tables


# ---- Chapter 13: any associative operator (flat rows with a check beside the time). ----------

# Every chapter 13 operator reads 1 GiB; chapter 07's f32 sum of the same bytes is the yardstick.
CUSTOM_OPS_BYTES = 2 ** 30
CUSTOM_OPS_REFERENCE_CHAPTER = "07_two_pass"
TRUE_AT = {0: "deciding byte first", 1: "deciding byte at the middle", 2: "no deciding byte"}
EARLY_EXIT_KERNEL = "reduce_early_exit"


def data_cell(row):
    """What a chapter 13 row's data set shows: where any/all's deciding byte is, or a product that
    stays in float's range."""
    if "true_at" in row["params"]:
        return TRUE_AT.get(row["params"]["true_at"], "")
    return "in float's range" if row["params"].get("in_range") else ""


def custom_ops_reference(rows):
    """Chapter 07's lead kernel, f32 sum of CUSTOM_OPS_BYTES, in the same run, or None."""
    lead = lead_kernel(rows, CUSTOM_OPS_REFERENCE_CHAPTER)
    return next((r for r in plot.select(rows, "sum", "f32") if (r["chapter"], r["kernel"], r["n"])
                 == (CUSTOM_OPS_REFERENCE_CHAPTER, lead, CUSTOM_OPS_BYTES // 4)), None)


def error_cell(value):
    """An error or bound: 3 significant digits; 1e300 and more stands for a result that is not
    finite; a negative bound for none below 10^-4 at this n (a product's: its row is not checked)."""
    if value is None:
        return "—"
    if value < 0:
        return "none"
    return "not finite" if value >= 1e300 else f"{value:.3g}"


def number_cell(value):
    """A result or a float64 value: 3 significant digits, +-1e300 and beyond standing for +-inf."""
    if value is None:
        return "—"
    if abs(value) >= 1e300:
        return "inf" if value > 0 else "-inf"
    return f"{value:.3g}"


def error_with_values_cell(row):
    """The error; beside it the result and its float64 value where the check failed on one number
    (a product past float's range: inf beside the true product)."""
    cell = error_cell(row["error"])
    failed = row["passed"] == 0 or (row["passed"] and whole_answer_lost(row))
    if failed and row.get("result") is not None and row.get("true_value") is not None:
        cell += f" (result {number_cell(row['result'])}, float64 {number_cell(row['true_value'])})"
    return cell


# Operators whose error is |ln got - ln p| (13_custom_ops/host_reference.hpp): the log and the
# mantissa/exponent products.
LOG_ERROR_OPS = {"log_product", "scaled_product"}


def whole_answer_lost(row):
    """The checker's rule (host_reference.hpp, unless_lost), applied to the published numbers, so
    that a run from before the rule shows it too: a log or scaled product whose ln|p| is off by
    ln 2 or more (the product off by a factor of 2) and by at least |ln p| (no digit of the log
    either), or a plain product off by a factor of 2 (or of the wrong sign, or 0), has lost the
    whole answer, whatever its bound."""
    error, got, want = row.get("error"), row.get("result"), row.get("true_value")
    if row.get("op") == "product" and got is not None and want:
        return got / want <= 0 or abs(math.log(got / want)) >= math.log(2)
    if row.get("op") not in LOG_ERROR_OPS or error is None or want is None:
        return False
    return error >= math.log(2) and error >= abs(want)


# The largest bound a product's "pass" may rest on (13_custom_ops/checks.hpp, kLargestProductBound):
# relative for the float product, in ln|p| for the log and mantissa/exponent products.
LARGEST_PRODUCT_BOUND = 1e-4
PRODUCT_OPS = {"product", "log_product", "scaled_product"}
NOT_CHECKED = "unbounded: not checked"


def unbounded(row):
    """The checker's rule for products (checks.hpp, held_to_useful_bound), applied to the published
    numbers, so that a run from before the rule shows it too: a bound of -1 (none below 10^-4 at
    this n), or a product's bound of 10^-4 or more that the row did not fail, judges nothing."""
    bound = row.get("error_bound")
    return bound is not None and (bound < 0 or (row.get("op") in PRODUCT_OPS and bound >= LARGEST_PRODUCT_BOUND
                                                 and row["passed"] != 0))


def check_cell(row):
    """pass or **fails** against the bound; a failure within the bound is a result that lost the
    whole answer, which the bound was too loose to catch (the check says so rather than pass it).
    Where a product's bound is too loose to judge, "unbounded: not checked", never pass: it fails
    only on a lost answer, or with passed 0, its exact-data gate failed (passed -1 or, in a run
    from before the rule, 1: the gate passed)."""
    if row["passed"] is None:
        return "—"
    lost = whole_answer_lost(row)
    passed = row["passed"] == 1 and not lost
    bound, error = row.get("error_bound"), row.get("error")
    if unbounded(row):
        if lost:
            return "**fails**: the whole answer lost, and no bound at this n"
        return "**fails**: exact data" if row["passed"] == 0 else NOT_CHECKED
    verdict = "pass" if passed else "**fails**"
    if bound is not None and bound >= 1e300 and not passed:
        return "**fails**: the whole answer lost, and no bound at this n"
    if not passed and error is not None and bound is not None and 0 < error <= bound:
        return f"**fails**: the whole answer lost, the bound ({error_cell(bound)}) above the loss"
    return verdict


def time_ratio(row, other):
    """other's time over row's: how many times faster row is. For inputs of the same bytes read to
    the end it is the ratio of GB/s; an early exit's is its speed-up."""
    return fmt("ratio_to_cub", other["time_us"] / row["time_us"] if row and other else None)


def cub_row_of(part, row):
    """CUB's row beside `row` in its operator's table: the same data set (any/all: no deciding
    byte, as CUB always reads to the end)."""
    data = row["params"].get("in_range", 0)
    return next((r for r in part if plot.is_baseline(r["kernel"])
                 and r["params"].get("in_range", 0) == data), None)


def reads_uncounted(row):
    """An early exit with a deciding byte whose reads were never counted (a bench.csv from before
    scripts/early_exit_bytes.sh, which set the whole input as its bytes): its GB/s are not shown."""
    return (row["kernel"] == EARLY_EXIT_KERNEL and row["params"].get("true_at", 2) < 2
            and row["bytes"] >= row["n"] * plot.ELEMENT_BYTES.get(row["dtype"], 1))


def bytes_cell(row):
    """The bytes a call read, in GiB (2^30): the whole input, or what an early exit counted."""
    return "not counted" if reads_uncounted(row) else f"{row['bytes'] / 2**30:.3g}"


def custom_ops_rows(rows, chapter):
    """The chapter's rows by operator, in bench.csv's order: the lesson, its variants, the library."""
    by_op = {}
    for r in rows:
        if r["chapter"] == chapter:
            by_op.setdefault(r["op"], []).append(r)
    order = lambda r: (plot.is_baseline(r["kernel"]), r["variant_of"] != "", r["kernel"],
                       r["params"].get("true_at", -1), r["params"].get("in_range", 0))
    return {op: sorted(rs, key=order) for op, rs in by_op.items()}


def custom_ops_table(part, reference):
    header = ["kernel", "data", "µs", "GiB read", "GB/s", "% of DRAM peak",
              f"× {CUSTOM_OPS_REFERENCE_CHAPTER} f32 sum", f"× `cub_transform_reduce`",
              "error vs. float64", "bound", "check"]
    body = [[f"`{r['kernel']}`", data_cell(r), f"{r['time_us']:.1f}", bytes_cell(r),
             fmt("gbps", None if reads_uncounted(r) else r["gbps"]),
             fmt("pct_peak", None if reads_uncounted(r) else r["pct_peak"]), time_ratio(r, reference),
             time_ratio(r, cub_row_of(part, r)), error_with_values_cell(r), error_cell(r["error_bound"]),
             check_cell(r)] for r in part]
    return plot.markdown_table(header, body)


def custom_ops_chapter(chapter, rows, machine):
    """The intro and the (title, table) pairs of chapter 13: one table per operator."""
    by_op = custom_ops_rows(rows, chapter)
    if not by_op:
        raise plot.InputError(f"bench.csv has no rows of chapter {chapter}")
    reference = custom_ops_reference(rows)
    dtypes = lambda part: ", ".join(sorted({r["dtype"] for r in part}))
    tables = [(f"**{op}** ({dtypes(part)}, 1 GiB)", custom_ops_table(part, reference)) for op, part in by_op.items()]
    intro = (f"Measured on **{machine.gpu}**. Each operator over 1 GiB of input (2^28 floats, 2^30 bytes "
             f"or 2^27 (a, b) pairs). µs: the steady state, the median call among calls queued back "
             f"to back, cold. GiB read: the whole input, except for the early exit with a deciding "
             f"byte, which stops before the end: its bytes read from DRAM are counted by Nsight "
             f"Compute (scripts/early_exit_bytes.sh). GB/s: the bytes read over the time, in 10^9 "
             f"bytes/s; % of DRAM peak: of the theoretical DRAM bandwidth "
             f"({machine.dram_gbps:.0f} GB/s). `× {CUSTOM_OPS_REFERENCE_CHAPTER} f32 sum`: chapter "
             f"07's time for its f32 sum of the same bytes in the same run over this row's time; "
             f"`× cub_transform_reduce`: CUB's TransformReduce with the same functors, over the same "
             f"data, likewise (> 1: this chapter is faster; for the early exit, its speed-up). The "
             f"error is against the float64 reference, beside the bound it is held to "
             f"(host_reference.hpp); where a check of one number fails, the result and its float64 "
             f"value stand beside the error. A naive form's error is its trap: its check **fails** "
             f"where the bound is tighter than the loss; where the bound, which grows with the "
             f"longest chain of combines, is looser than a loss of the whole answer, the check fails "
             f"on that loss and says so. A product whose bound is 10^-4 or more (relative, or in "
             f"ln|p|) reads \"{NOT_CHECKED}\" where its result is within that bound, never pass; it "
             f"fails beyond the bound, on a lost answer (off by a factor of 2 or more) or on a failed "
             f"exact-data gate.")
    return intro, tables


def custom_ops_summary(rows):
    """Chapter 13 in the top README: each operator's lesson kernel, one line each."""
    reference = custom_ops_reference(rows)
    body = []
    for chapter in sorted({r["chapter"] for r in rows if r["error"] is not None}):
        for op, part in custom_ops_rows(rows, chapter).items():
            lesson = next((r for r in part if not r["variant_of"] and not plot.is_baseline(r["kernel"])
                           and r["params"].get("true_at", 2) == 2 and not r["params"].get("in_range")), None)
            if lesson:
                body.append([chapter, f"`{lesson['kernel']}`", op, fmt("gbps", lesson["gbps"]),
                             ratio(lesson, reference),
                             fmt("ratio_to_cub", lesson["ratio_to_cub"]), error_with_values_cell(lesson),
                             check_cell(lesson)])
    header = ["Chapter", "Kernel", "operator", "GB/s", f"× {CUSTOM_OPS_REFERENCE_CHAPTER} f32 sum",
              "× `cub_transform_reduce`", "error vs. float64", "check"]
    return plot.markdown_table(header, body, text_columns=3) if body else []


def chapter_section(chapter_dir, rows, batched, machine, results_dir):
    """rows: the flat ones; batched: the others."""
    chapter = os.path.basename(os.path.abspath(chapter_dir))
    chart = []
    if chapter == plot.CUB_CHAPTER:
        # The operators of the chapters before this one and the dot product: the custom operators
        # (rows with an error column) wait for their own chapter, where the reader meets them.
        custom_ops = {r["op"] for r in rows if r["error"] is not None}
        tables = [(f"**{dtype} {op}** against `{plot.baseline_for(op, dtype)[1]}`",
                   against_cub_table(plot.select(rows, op, dtype)))
                  for op, dtype in plot.sections(rows) if op not in custom_ops]
        if not any(table for _, table in tables):
            raise plot.InputError("bench.csv has no CUB rows to compare with")
        intro = (f"Measured on **{machine.gpu}**. Every chapter's lead kernel against the library in "
                 f"the same run: its GB/s divided by the library's at the same n (> 1: faster than the "
                 f"library). The last line of each table is the library's own GB/s. \\* L2-resident "
                 f"sizes ({plot.L2_FOOTNOTE}, {machine.l2_label}): the ratio compares L2 and launch "
                 f"times, not DRAM bandwidth.")
    elif any(r["chapter"] == chapter and r["error"] is not None for r in rows):
        intro, tables = custom_ops_chapter(chapter, rows, machine)
    elif any(r["chapter"] == chapter for r in batched):
        intro, tables = batched_chapter(chapter, batched, machine)
        if os.path.exists(os.path.join(results_dir, plot.BATCHED_CHART)):
            alt = dict(plot.CHARTS)[plot.BATCHED_CHART]
            chart = [f"![{alt}]({link(chapter_dir, results_dir, plot.BATCHED_CHART)})"]
        else:
            print(f"update_readme.py: warning: no {plot.BATCHED_CHART} in {results_dir}; run "
                  f"results/plot.py charts {results_dir} first", file=sys.stderr)
    else:
        lead = lead_kernel(rows, chapter)
        previous = max((r["chapter"] for r in rows if r["chapter"] < chapter), default=None)
        tables = (chapter_tables(rows, chapter, lead, previous, plot.read_floor(results_dir))
                  if lead else [])
        if not tables:
            raise plot.InputError(f"{results_dir}/bench.csv has no rows of chapter {chapter}"
                                  + (f"'s {lead} at n = 2^10 ... 2^30" if lead else ""))
        ratios = ["`× K`: divided by kernel K's in the same run (`cub_…`: `cub::DeviceReduce`, "
                  "`cublas_…`: cuBLAS)"]
        if any("vs. " in table[0] for _, table in tables):
            ratios.insert(0, f"`vs. {previous}`: this chapter's GB/s divided by {previous}'s at the same n")
        dot = any(r["op"] == "dot" for r in rows if r["chapter"] == chapter)
        intro = (f"Measured on **{machine.gpu}**. GB/s: "
                 f"{'the bytes of both vectors' if dot else 'the input'} read once, in 10^9 bytes/s; "
                 f"% of DRAM peak: of the theoretical DRAM bandwidth ({machine.dram_gbps:.0f} GB/s). "
                 f"GB/s, ratios and µs back to back: the steady state, the median call among calls "
                 f"queued back to back; µs, one call: a single call from an idle GPU, the host's "
                 f"dispatch included. L2-resident rows (input no larger than L2, {machine.l2_label}) "
                 f"are measured hot and measure L2 and launch latency, not DRAM: read their time per "
                 f"call; larger inputs are measured cold. {'; '.join(ratios)} (> 1: this chapter is "
                 f"faster).")
    # Under every table: the GPU and the CSV, linked relative to the chapter's README and shown
    # relative to the repository root above it.
    root = os.path.dirname(os.path.abspath(chapter_dir))
    below = (f"*{machine.gpu}. Generated from [`{link(root, results_dir, 'bench.csv')}`]"
             f"({link(chapter_dir, results_dir, 'bench.csv')}) by `scripts/update_readme.py "
             f"--chapter`; edit nothing between the markers, rerun the script instead.*")
    lines = [intro, ""] + [line for title, table in tables if table
                           for line in [title, ""] + table + ["", below, ""]]
    return "\n".join(lines + chart).rstrip("\n")


# ---- Files ----------------------------------------------------------------------------------

def replace_between_markers(text, section, path):
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise plot.InputError(f"{path} needs exactly one '{BEGIN}' and one '{END}' line")
    head, rest = text.split(BEGIN)
    if END in head:
        raise plot.InputError(f"{path}: '{END}' comes before '{BEGIN}'")
    return f"{head}{BEGIN}\n{section}\n{END}{rest.split(END)[1]}"


def read_text(path):
    with plot.open_input(path) as f:
        return f.read()


def chapter_folders(top_readme):
    """The NN_name folders next to the top-level README whose README.md has the markers."""
    folders = []
    for readme in sorted(glob.glob(os.path.join(os.path.dirname(top_readme), "[0-9][0-9]_*",
                                                "README.md"))):
        text = read_text(readme)
        if BEGIN in text or END in text:
            folders.append(os.path.dirname(readme))
        else:
            print(f"skipped {readme}: no results markers")
    return folders


def main(argv):
    args = argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    mode = args.pop(0) if args[:1] in (["--chapter"], ["--all"]) else None
    if len(args) != 2 or any(a.startswith("--") for a in args):
        print(USAGE, file=sys.stderr)
        return 2
    target, results_dir = args
    try:
        # The chapter folders to update; None stands for the top-level README.
        folders = [target] if mode == "--chapter" else [None]
        folders += chapter_folders(target) if mode == "--all" else []
        every, machine = plot.read_results(results_dir)
        rows, batched = plot.flat_rows(every), plot.batched_rows(every)
        updates = []
        for folder in folders:
            readme = os.path.join(folder, "README.md") if folder else target
            text = read_text(readme)
            replace_between_markers(text, "", readme)  # a missing marker, before any table is built
            section = (chapter_section(folder, rows, batched, machine, results_dir) if folder
                       else top_section(readme, rows, batched, machine, results_dir))
            updates.append((readme, text, replace_between_markers(text, section, readme)))
        for readme, text, updated in updates:  # nothing is written before every section was built
            if updated != text:
                with open(readme, "w", encoding="utf-8") as f:
                    f.write(updated)
    except plot.InputError as e:
        print(f"update_readme.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"update_readme.py: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    for readme, _, _ in updates:
        print(f"updated the results section of {readme} from {results_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
