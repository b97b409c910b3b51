"""Chapters 11 and 12's README tables: many reductions at once, every shape against CUB's segmented
reduction and the naive mapping, and 11's row mappings."""

from tools.bench_csv import format_number
from tools.readme_chapters import fmt, memory_label
from tools.results import kernel_rows, select
from tools.schema import (BATCHED_BASELINE, InputError, NAIVE_MAPPING, ROW_STRATEGIES, batched_key,
                        is_baseline)
from tools.tables import count_label, distribution, markdown_table, naive_ratio


# ---- Chapters 11 and 12: many reductions at once. `batched`: results.batched_rows's. -----

BATCHED_SECTIONS = [("sum", "f32"), ("sum", "f16")]


def batched_lessons_table(batched, chapter, op, dtype):
    """The chapter's lessons (one per layout) at every shape measured, one op and dtype: GB/s,
    % of peak, and the layout's yardstick, CUB's segmented reduction (rows, segments) or the
    naive mapping (columns)."""
    part = select([r for r in batched if r["chapter"] == chapter], op, dtype)
    lessons = [r for r in part if not r["variant_of"] and not is_baseline(r["kernel"])]
    segmented = any(r["layout"] == "segments" for r in lessons)
    # Segments have a count, a mean length and a distribution of lengths; a matrix B rows of L.
    shape = ["segments", "mean length", "lengths"] if segmented else ["B", "L"]
    header = ["layout"] + shape + ["kernel", "memory", "GB/s", "% of DRAM peak",
                                   f"× `{BATCHED_BASELINE}`", "× naive mapping"]
    body = [[r["layout"], count_label(r["segments"]), count_label(r["length"])]
            + ([distribution(r)] if segmented else [])
            + [f"`{r['kernel']}`", memory_label(r), fmt("gbps", r["gbps"]),
               fmt("pct_peak", r["pct_peak"]), fmt("ratio_to_cub", r["ratio_to_cub"]),
               fmt("ratio_to_cub", naive_ratio(r, part))]
            for r in lessons]
    return markdown_table(header, body, text_columns=len(shape) + 3) if body else []


def row_mappings_table(batched, chapter):
    """Rows, f32 sum: the rows lesson (its automatic choice) and its variants (each mapping
    forced), GB/s at every shape, the fastest in bold; and the choice, where the lesson's rows
    name it (param_strategy_id). Empty without a variant to set it against."""
    part = [r for r in select(batched, "sum", "f32")
            if r["chapter"] == chapter and r["layout"] == "rows" and not r["params"].get("teaching")]
    kernels = kernel_rows(part)
    lesson = next((r["kernel"] for r in kernels
                   if not r["variant_of"] and not is_baseline(r["kernel"])), None)
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
        cells = [count_label(segments), count_label(length),
                 memory_label(next(r for r in measured if r))]
        if choice:
            strategy = measured[0] and measured[0]["params"].get("strategy_id")
            cells.append("—" if strategy is None else
                         f"`{ROW_STRATEGIES.get(strategy, format_number(strategy))}`")
        cells += [f"**{fmt('gbps', r['gbps'])}**" if r and r["gbps"] == best else
                  fmt("gbps", r and r["gbps"]) for r in measured]
        body.append(cells)
    return markdown_table(header, body, text_columns=4 if choice else 3)


def teaching_table(batched, chapter):
    """f32 sum: each teaching kernel of the lesson (param_teaching) beside the tuned kernel it is a
    variant of, at every shape both ran, and the ratio of their GB/s. Empty without teaching rows."""
    part = [r for r in select(batched, "sum", "f32") if r["chapter"] == chapter]
    # A teaching row carries param_teaching (chapter 11) or is named for it (chapter 12's
    # reduce_segments_teaching, whose params are the data's).
    teaching = [r for r in part if r["params"].get("teaching") or r["kernel"].endswith("_teaching")]
    tuned = {(r["kernel"],) + batched_key(r): r for r in part if r not in teaching}
    pairs = [(r, tuned.get((r["variant_of"],) + batched_key(r))) for r in teaching]
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
        cells += [count_label(t["segments"]), count_label(t["length"]), memory_label(t),
                  fmt("gbps", t["gbps"]), fmt("gbps", u["gbps"]), fmt("ratio_to_cub", t["gbps"] / u["gbps"])]
        body.append(cells)
    return markdown_table(header, body, text_columns=6 if segmented else 5)


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
        raise InputError(f"bench.csv has no f32 or f16 sum rows of chapter {chapter}'s "
                              f"lessons")
    kernels = {r["kernel"] for r in batched if r["chapter"] == chapter}
    naive = "; ".join(f"`{k}`'s GB/s divided by `{v}`'s" for k, v in NAIVE_MAPPING.items()
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
             f"DRAM; larger inputs are measured cold. `× {BATCHED_BASELINE}`: GB/s divided by "
             f"CUB's segmented reduction's at the same shape"
             + ("" if segmented else " (CUB has no column reduction)")
             + f"; × naive mapping: {naive} at the same shape (> 1: the lesson is faster).")
    return intro, tables
