"""A chapter README's benchmark tables (`part`: the rows of one op and dtype): its lead kernel
against the previous chapter's and the library, its variants, small n or the launch cost, large n."""

import os

from tools.bench_csv import format_number
from tools.results import kernel_rows, select
from tools.schema import (BATCHED_BASELINE, LAYOUTS, TWO_PASS_CHAPTER, baseline_for, binary_size,
                        is_baseline, pow2_label)
from tools.tables import CELL_FORMATS, count_label, distribution, markdown_table, sections


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
    return [r["kernel"] for r in kernel_rows(rows) if r["chapter"] == chapter
            and not r["variant_of"] and not is_baseline(r["kernel"])]


def lead_kernel(rows, chapter):
    """The kernel the chapter's lesson ends with, or None (a chapter of library rows only)."""
    own = lessons(rows, chapter)
    return own[-1] if own else None


def variants(rows, chapter, lead):
    return [r["kernel"] for r in kernel_rows(rows)
            if r["chapter"] == chapter and r["variant_of"] == lead]


def fmt(field, value):
    return "—" if value is None else CELL_FORMATS[field].format(value)


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
    part = [r for r in select(batched, "sum", "f32")
            if not r["variant_of"] and not is_baseline(r["kernel"])]
    if not part:
        return []
    header = ["Chapter", "Kernel", "layout", "shapes", "GB/s, lowest", "at L", "GB/s, highest",
              "at L", f"× `{BATCHED_BASELINE}`, lowest", "highest"]
    body = []
    for layout in LAYOUTS:
        for chapter, kernel in sorted({(r["chapter"], r["kernel"]) for r in part if r["layout"] == layout}):
            mine = [r for r in part if (r["chapter"], r["kernel"], r["layout"]) == (chapter, kernel, layout)]
            low, high = min(mine, key=lambda r: r["gbps"]), max(mine, key=lambda r: r["gbps"])
            ratios = [r["ratio_to_cub"] for r in mine if r["ratio_to_cub"] is not None]
            where = lambda r: count_label(r["length"]) + (f" ({distribution(r)})" if layout == "segments" else "")
            body.append([chapter, f"`{kernel}`", layout, str(len(mine)), fmt("gbps", low["gbps"]), where(low),
                         fmt("gbps", high["gbps"]), where(high),
                         fmt("ratio_to_cub", min(ratios)) if ratios else "—",
                         fmt("ratio_to_cub", max(ratios)) if ratios else "—"])
    return markdown_table(header, body, text_columns=4)


# ---- Chapter tables. `part`: the rows of one op and dtype. ----------------------------------

def lead_table(part, chapter, lead, previous):
    """The lead kernel at CHAPTER_SIZES: one line per size it was measured at."""
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in part}
    prev_lead = previous and lead_kernel(part, previous)
    header = ["n", "input", "memory", "µs per call, back to back", "µs, one call", "GB/s",
              "% of DRAM peak"]
    header += [f"vs. {previous} (GB/s ratio)"] if prev_lead else []
    header += [f"× `{baseline_for(part[0]['op'], part[0]['dtype'])[1]}`"]
    body = []
    for n in CHAPTER_SIZES:
        r = at.get((chapter, lead, n))
        if r:
            input_bytes = n * round(r["bytes"] / n)  # bytes counts the input plus the result
            cells = [pow2_label(n), binary_size(input_bytes), memory_label(r)]
            cells += [fmt(field, r[field]) for field in ("time_us", "latency_us", "gbps", "pct_peak")]
            cells += [ratio(r, at.get((previous, prev_lead, n)))] if prev_lead else []
            body.append(cells + [fmt("ratio_to_cub", r["ratio_to_cub"])])
    return markdown_table(header, body, text_columns=3) if body else []


def comparison_table(part, chapter, kernels, lead):
    """One line per kernel measured at CHAPTER_SIZES, sorted by its params (the libraries last):
    the params that differ, then at each size where a kernel other than the lead was measured,
    its GB/s and its ratio to the lead kernel's and to the library's. Empty when that leaves
    the lead kernel alone."""
    at = {(r["kernel"], r["n"]): r for r in part if r["chapter"] == chapter}
    sizes = [n for n in CHAPTER_SIZES if any((k, n) in at for k in kernels if k != lead)]
    shown = [r for r in kernel_rows(part) if r["chapter"] == chapter
             and r["kernel"] in kernels and any((r["kernel"], n) in at for n in sizes)]
    if len(shown) < 2:
        return []
    # The params whose values differ among the kernels shown (one without it counts as different).
    names = [name for name in sorted({name for r in shown for name in r["params"]})
             if len({r["params"].get(name) for r in shown}) > 1]
    base = baseline_for(part[0]["op"], part[0]["dtype"])[1]
    header = ["kernel"] + names
    for n in sizes:
        some = next(at[k, n] for k in kernels if (k, n) in at)
        header += [f"GB/s, n = {pow2_label(n)} ({memory_label(some)})", f"× `{lead}`",
                   f"× `{base}`"]
    body = []
    for r in shown:
        cells = [f"`{r['kernel']}`"] + [format_number(r["params"].get(name)) or "—"
                                         for name in names]
        for n in sizes:
            mine = at.get((r["kernel"], n))
            cells += [fmt("gbps", mine and mine["gbps"]), ratio(mine, at.get((lead, n))),
                      fmt("ratio_to_cub", mine and mine["ratio_to_cub"])]
        body.append(cells)
    return markdown_table(header, body, text_columns=1)


def small_n_table(rows, chapter, lead):
    """Latency (µs) of one f32 sum call from idle at SMALL_SIZES: the lead kernel, its variants
    measured below CHAPTER_SIZES (07's plain launch: those measured from there on are in the
    variants table), and CUB, with CUB's latency divided by the lead kernel's."""
    sums = select(rows, "sum", "f32")
    base_chapter, cub = baseline_for("sum", "f32")
    time = {(r["chapter"], r["kernel"], r["n"]): r["latency_us"] for r in sums if r["latency_us"]}
    kernels = [lead] + [k for k in variants(sums, chapter, lead)
                        if any((chapter, k, n) in time for n in SMALL_SIZES if n < CHAPTER_SIZES[0])]
    header = ["n"] + [f"`{k}` (µs)" for k in kernels] + [f"`{cub}` (µs)", "CUB time ÷ this chapter's"]
    body = []
    for n in SMALL_SIZES:
        mine, base = time.get((chapter, lead, n)), time.get((base_chapter, cub, n))
        if mine is not None:
            body.append([pow2_label(n)] + [fmt("latency_us", time.get((chapter, k, n))) for k in kernels]
                        + [fmt("latency_us", base), fmt("ratio_to_cub", base / mine if base else None)])
    return markdown_table(header, body, text_columns=1) if body else []


def has_launch_cost(rows, chapter, lead):
    """Whether a chapter gets the launch-cost tables in place of the small-n one: from
    LAUNCH_COST_FROM_CHAPTER on, where its lead kernel's f32 sums were timed in a loop at
    SMALL_SIZES (a bench.csv from before the benchmark did that has no b2b_us)."""
    number = chapter_number(chapter)
    return number is not None and number >= LAUNCH_COST_FROM_CHAPTER and any(
        r["b2b_us"] for r in select(rows, "sum", "f32")
        if (r["chapter"], r["kernel"]) == (chapter, lead) and r["n"] in SMALL_SIZES)


def launch_cost_table(rows, chapter, lead, floor):
    """µs per f32 sum call at SMALL_SIZES, the lead kernel's and CUB's: one call from idle, then
    in a loop, each with the lead's time divided by CUB's, then in a CUDA graph; with a floor
    (read_floor), the lead's one call and loop minus the empty kernel's, timed alike."""
    base_chapter, cub = baseline_for("sum", "f32")
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in select(rows, "sum", "f32")}
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
        cells = [pow2_label(n)]
        for field in ("latency_us", "b2b_us"):
            theirs = base and base[field]
            cells += [fmt(field, mine[field]), fmt(field, theirs),
                      fmt("ratio_to_cub", mine[field] / theirs if mine[field] and theirs else None)]
        cells += [fmt("graph_us", mine["graph_us"]), fmt("graph_us", base and base["graph_us"])]
        if floor:
            cells += [fmt(field, mine[field] - floor[field] if mine[field] and floor[field] else None)
                      for field in ("latency_us", "b2b_us")]
        body.append(cells)
    return markdown_table(header, body, text_columns=1) if body else []


def large_n_table(rows, chapter, lead):
    """GB/s of the lead kernel's f32 sum at LARGE_SIZES beside 07's lead kernel's, and their
    ratio. Empty without 07's rows."""
    sums = select(rows, "sum", "f32")
    two_pass = lead_kernel(sums, TWO_PASS_CHAPTER)
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in sums}
    header = ["n", "memory", f"`{lead}` (GB/s)", f"{TWO_PASS_CHAPTER}: `{two_pass}` (GB/s)",
              f"× `{two_pass}`"]
    body = []
    for n in LARGE_SIZES:
        mine, theirs = at.get((chapter, lead, n)), at.get((TWO_PASS_CHAPTER, two_pass, n))
        if mine and theirs:
            body.append([pow2_label(n), memory_label(mine), fmt("gbps", mine["gbps"]),
                         fmt("gbps", theirs["gbps"]), ratio(mine, theirs)])
    return markdown_table(header, body, text_columns=2) if body else []


def against_cub_table(part):
    """Rows: every chapter's lead kernel; columns: every n the library was measured at; cells:
    ratio to the library. The last line is the library's GB/s. Empty without library rows."""
    base_chapter, base = baseline_for(part[0]["op"], part[0]["dtype"])
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
    header = ["chapter", "kernel"] + [pow2_label(n) + ("*" if base_rows[n]["l2_resident"] else "")
                                      for n in sizes]
    return markdown_table(header, body)


def chapter_tables(rows, chapter, lead, previous, floor):
    """(title, table) pairs in reading order: per op and dtype the steps and the lead kernel,
    then the variants, then small n (or the launch cost and large n). floor: read_floor's."""
    tables, later = [], []
    for op, dtype in sections([r for r in rows if r["chapter"] == chapter]):
        part = select(rows, op, dtype)
        if len(lessons(part, chapter)) > 1:
            steps = [r["kernel"] for r in kernel_rows(part)
                     if r["chapter"] == chapter and not r["variant_of"]]
            tables.append((f"**{dtype} {op}, every step**, and the libraries measured beside them",
                           comparison_table(part, chapter, steps, lead)))
        tables.append((f"**{dtype} {op}**, `{lead}`", lead_table(part, chapter, lead, previous)))
        base = baseline_for(op, dtype)[1]
        later.append((f"**Variants of `{lead}`**, {dtype} {op}: the settings in which they differ, "
                      f"and their GB/s against `{lead}`'s and `{base}`'s at the same n.",
                      comparison_table(part, chapter, [lead] + variants(part, chapter, lead), lead)))
    number = chapter_number(chapter)
    if has_launch_cost(rows, chapter, lead):
        cub = baseline_for("sum", "f32")[1]
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
        two_pass = lead_kernel(select(rows, "sum", "f32"), TWO_PASS_CHAPTER)
        later.append((f"**Large n**, f32 sum, where bytes set the time: `{lead}`'s one launch "
                      f"against {TWO_PASS_CHAPTER}'s two, GB/s, and `{lead}`'s divided by "
                      f"`{two_pass}`'s (> 1: this chapter is faster; 1: the single launch costs "
                      f"nothing here).", large_n_table(rows, chapter, lead)))
    return [(title, table) for title, table in tables + later if table]
