"""The diagrams of many reductions at once: 11's mapping of a row to its readers, 12's ranges of
equal cost."""

import matplotlib

matplotlib.use("Agg")
from matplotlib.patches import FancyArrowPatch  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from tools.chart_style import chapter_color
from tools.diagram_rules import (BLOCK, SEGMENT_COST, UNROLL_11, VEC_F32, WARP, ceil_div,
                                 cost_ranges, element_ranges, range_cost, row_plan, row_readers)
from tools.diagram_style import EDGE, cell, distinct_hues, legend_below, pow2_text, save, tint


def draw_batched_mapping_11(path, resident=1024, shown=3):
    """Teaches chapter 11's idea: the shape decides the mapping. For the benchmark's row shapes
    (L = 8, 32, 1024 and 65536 floats, and 64 rows of 2^20), row_plan gives the strategy and
    row_readers who reads each 16-byte vector of a row: a thread, a group of lanes, a warp, a block,
    or several blocks and a ticket. Every bar is one row, drawn the same width whatever its length.
    The split of the few long rows assumes a GPU holding `resident` blocks at once."""
    cases = [(8, 2 ** 23), (32, 2 ** 21), (1024, 2 ** 16), (65536, 2 ** 10), (2 ** 20, 64)]
    bar, pitch = 30.0, 1.0
    hues = distinct_hues(shown)
    fig, ax = plt.subplots(figsize=(10, 11.5))
    ax.set_axis_off()
    y = 0.0
    for cols, rows in cases:
        plan = row_plan(cols, rows, resident)
        readers = row_readers(cols, plan)
        head = mapping_head(cols, rows, plan)
        shape = f"L = {pow2_text(cols)} floats"
        if plan[1] == BLOCK:  # the rows count only where blocks share them out
            shape += f", {pow2_text(rows)} rows"
        ax.text(-0.3, y, f"{shape}:  {head[0]}", ha="left",
                va="center", fontsize=11, fontweight="bold")
        ax.text(-0.3, y + 0.75, head[1], ha="left", va="center", fontsize=10, color="dimgray")
        y += 1.7
        for r in range(shown):
            ax.text(-0.6, y, f"row {r}", ha="right", va="center", fontsize=10)
            who = mapping_bar(ax, y, r, hues[r], cols, plan, readers, bar)
            ax.text(bar + 0.6, y, who, ha="left", va="center", fontsize=10)
            y += pitch
        ax.text(-0.6, y - 0.15, "…", ha="right", va="center", fontsize=11)
        ax.text(0, y - 0.15, f"and so on, {pow2_text(rows)} rows", ha="left", va="center", fontsize=9.5,
                color="dimgray")
        y += 1.3
    ax.set_xlim(-4.2, bar + 10.5)
    ax.set_ylim(y - 0.6, -0.8)
    ax.set_title("11_batched: the row's length decides who reads it (f32, V = ⌈L / 4⌉ 16-byte vectors a row)\n"
                 "a bar: one row, the same width whatever L; a colour: one owner (thread, group, warp or block)"
                 + f"\nthe split of the 64 rows assumes a GPU that holds {resident} blocks at once",
                 fontsize=11.5, loc="left")
    save(fig, path)


def mapping_head(cols, rows, plan):
    """A shape's two lines of text: the rule row_plan applied, and who reads which vectors."""
    strategy, lanes, split, chunk = plan
    V = ceil_div(cols, VEC_F32)
    if strategy == "thread_per_row":
        return (f"V = {V} ≤ 2 → thread_per_row: a thread reads a whole row",
                f"thread r reads the {V} vectors of row r")
    if strategy == "group_per_row":
        rule = f"max(2, pow2 ≥ ⌈{V}/2⌉)" if lanes < WARP else f"min(32, pow2 ≥ ⌈{V}/2⌉)"
        return (f"V = {V} ≤ 512 → group_per_row, lanes = {rule} = {lanes}",
                f"lane l of a row's group reads vectors l, l + {lanes}, …" +
                (f", l + {V - lanes}: {V // lanes} each (a shade a lane)" if V // lanes > 2 else ""))
    if strategy == "block_per_row":
        return (f"V = {pow2_text(V)} > 512, rows enough to fill the GPU → block_per_row",
                f"thread t of the row's block reads vectors t, t + {BLOCK}, …: {UNROLL_11} in flight a trip "
                f"(a shade), {V // (BLOCK * UNROLL_11)} trips")
    return (f"V = {pow2_text(V)} > 512, only {rows} rows → blocks_per_row: {split} blocks a row",
            f"block k of a row reads its chunk of {pow2_text(chunk)} floats; the last of the row's "
            f"{split} to take its ticket adds the {split} partials")


def mapping_bar(ax, y, r, hue, cols, plan, readers, bar):
    """Row r's bar at y, bar wide: a cell per vector named by its thread (few vectors), a shade per
    lane (a warp's many), or a cell per block's chunk, a shade per trip. Returns who reads the row."""
    strategy, lanes, split, chunk = plan
    V = ceil_div(cols, VEC_F32)
    if strategy in ("thread_per_row", "group_per_row") and V <= 16:
        w = bar / V
        for v, (_, lane, _) in enumerate(readers):
            cell(ax, (v + 0.5) * w, y, hue, f"t{r * lanes + lane}", w=w, h=0.75, fontsize=9.5,
                  edge="white", textcolor="white")
        return f"thread {r}" if lanes == 1 else f"threads {r * lanes}-{r * lanes + lanes - 1}"
    if strategy == "group_per_row":  # too many vectors to name: a shade per lane
        w = bar / V
        for v, (_, lane, _) in enumerate(readers):
            ax.add_patch(Rectangle((v * w, y - 0.375), w, 0.75, linewidth=0,
                                   facecolor=tint(hue, 0.75 * lane / (lanes - 1))))
        ax.add_patch(Rectangle((0, y - 0.375), bar, 0.75, facecolor="none", edgecolor=EDGE, linewidth=0.6))
        return f"warp {r}: lanes 0-{lanes - 1}"
    # blocks: a cell per chunk (a block), a shade per trip
    per_block = chunk // VEC_F32
    trips = ceil_div(per_block, BLOCK * UNROLL_11)
    w = bar / (split * trips) if split == 1 else bar / split
    for v in range(0, V, BLOCK * UNROLL_11 if split == 1 else per_block):
        k, _, trip = readers[v]
        x = (k * trips + trip) * w if split == 1 else k * w
        shade = tint(hue, 0.35 * (trip % 2 if split == 1 else k % 2))
        cell(ax, x + w / 2, y, shade, "" if split == 1 else f"b{r * split + k}", w=w, h=0.75,
              fontsize=7.5, edge="white", textcolor="white")
    return f"block {r}: {BLOCK} threads" if split == 1 else f"blocks {r * split}-{r * split + split - 1}"


HEAVY_TAIL_12 = [2, 0, 1, 3, 0, 0, 2, 24, 1, 0, 4, 1, 0, 2, 0, 8]  # the picture's segments: one holds half


def draw_equal_cost_ranges_12(path, lengths=HEAVY_TAIL_12, end_cost=4, warps=8):
    """Teaches chapter 12's balanced mapping: the warps' ranges hold equal cost, not equal elements.
    An element costs 1 and a segment's end end_cost (the kernel: 32, scaled down here with the
    input); the elements and the ends are laid out as one list and cut every `step` of cost
    (cost_ranges). Where short segments crowd, a range holds few elements; inside the big segment,
    many, and fewer warps share it than equal elements would give it."""
    tail = HeavyTail(lengths, end_cost, warps)
    pastel = plt.get_cmap("Pastel1").colors
    seg_color = [chapter_color("12_segmented", 0) if s == tail.big else pastel[[0, 1, 2, 4, 6][s % 5]]
                 for s in range(tail.segments)]
    fig, ax = plt.subplots(figsize=(10, 6.2))
    ax.set_axis_off()
    y_el, y_eq, y_cost, y_bal = 0.0, 2.2, 4.6, 6.8
    for top, bottom in ((y_el - 1.3, y_eq + 1.25), (y_bal - 0.55, y_bal + 1.25)):  # the big segment's columns
        ax.add_patch(Rectangle((tail.big_lo, top), tail.big_hi - tail.big_lo, bottom - top,
                               facecolor=tint(seg_color[tail.big], 0.85), edgecolor="none", zorder=0))
    elements_row(ax, tail, seg_color, y_el)
    for y, ranges, label in ((y_eq, element_ranges(lengths, warps), f"equal elements\n({ceil_div(tail.n, warps)} a warp)"),
                             (y_bal, cost_ranges(lengths, end_cost, warps), f"equal cost\n({tail.step} a warp)")):
        warp_ranges_row(ax, tail, ranges, y, label)
    work_row(ax, tail, seg_color, y_cost, y_bal)
    ax.set_xlim(-7.5, tail.n + 6.5)
    ax.set_ylim(y_bal + 1.5, -2.0)
    legend_below(ax, [Patch(facecolor=pastel[0], edgecolor=EDGE, label="an element, coloured by its segment"),
                       plt.Line2D([], [], color="black", marker="v", linewidth=1.6,
                                  label="a segment's end (stacked: empty segments)"),
                       Patch(facecolor="#333333", label=f"an end in the work: cost {end_cost}")], 3)
    ax.set_title(f"12_segmented, balanced: {warps} warps share a heavy tail, scaled down (an end costs {end_cost} "
                 f"here, {SEGMENT_COST} in the kernel)\nequal elements: the warps among short segments get their "
                 "many ends too; equal cost evens the work\nout, and the big segment, cheap for its size, gets "
                 "fewer warps", fontsize=11.5, loc="left")
    save(fig, path)


class HeavyTail:
    """equal_cost_ranges_12.png's input: the segments' lengths, each end's cost and the warps; n
    elements in `segments` segments, each segment's end (ends) and each element's segment (owner),
    the big segment and its span [big_lo, big_hi), the total cost and a warp's step of it, and the
    scale that draws the merged list of elements and ends over the width of the elements."""

    def __init__(self, lengths, end_cost, warps):
        self.lengths, self.end_cost, self.warps = lengths, end_cost, warps
        self.n, self.segments = sum(lengths), len(lengths)
        self.ends, e = [], 0
        for length in lengths:
            e += length
            self.ends.append(e)
        self.owner = [s for s, length in enumerate(lengths) for _ in range(length)]
        self.big = max(range(self.segments), key=lambda s: lengths[s])
        self.big_lo, self.big_hi = self.ends[self.big] - lengths[self.big], self.ends[self.big]
        self.total = self.n + end_cost * self.segments
        self.step = ceil_div(self.total, warps)
        self.scale = self.n / self.total


def elements_row(ax, tail, seg_color, y):
    """The elements, coloured by segment, and the ends above them (several at one place: stacked)."""
    for i, s in enumerate(tail.owner):
        cell(ax, i + 0.5, y, seg_color[s], w=1.0, h=0.8, edge="white")
    stacked = {}
    for s, e in enumerate(tail.ends):
        k = stacked.get(e, 0)
        stacked[e] = k + 1
        ax.plot([e, e], [y - 0.45, y + 0.45], color="black", linewidth=1.6)
        ax.plot([e], [y - 0.62 - 0.32 * k], marker="v", color="black", markersize=6)
    ax.text(-0.6, y, f"{tail.n} elements,\n{tail.segments} segments", ha="right", va="center", fontsize=10)
    ax.text(tail.big_lo + (tail.big_hi - tail.big_lo) / 2, y,
            f"segment {tail.big}: {tail.lengths[tail.big]} of the {tail.n} elements",
            ha="center", va="center", fontsize=10, color="white", fontweight="bold")


def warp_ranges_row(ax, tail, ranges, y, label):
    """The warps' ranges of elements, each marked with its elements and its cost, and how many
    warps read the big segment."""
    for w, (lo, hi) in enumerate(ranges):
        if hi > lo:
            cell(ax, (lo + hi) / 2, y, ("#3b4a6b", "#8797b8")[w % 2], f"w{w}", w=hi - lo, h=0.8, edge="white",
                  fontsize=10, textcolor="white")
            ax.text((lo + hi) / 2, y + 0.62, f"{hi - lo}/{range_cost(tail.lengths, lo, hi, tail.end_cost)}",
                    ha="center", va="top", fontsize=9, color="dimgray")
    ax.text(-0.6, y + 0.62, "elements/cost", ha="right", va="top", fontsize=9, color="dimgray")
    on_big = sum(1 for lo, hi in ranges if lo < tail.big_hi and hi > tail.big_lo)
    ax.text(-0.6, y, label, ha="right", va="center", fontsize=10)
    ax.text(tail.n + 0.6, y, f"{on_big} warps\nread segment {tail.big}", ha="left", va="center", fontsize=10,
            fontweight="bold")


def work_row(ax, tail, seg_color, y, y_cut_to):
    """The merged list: each segment's elements (1 each), then its end (end_cost), cut every step,
    each cut's arrow down to where its range begins in the row at y_cut_to."""
    x, scale = 0.0, tail.scale
    for s, length in enumerate(tail.lengths):
        for _ in range(length):
            cell(ax, x + scale / 2, y, seg_color[s], w=scale, h=0.8, edge="white")
            x += scale
        cell(ax, x + scale * tail.end_cost / 2, y, "#333333", w=scale * tail.end_cost, h=0.8, edge="white")
        x += scale * tail.end_cost
    ax.text(-0.6, y, f"the work: an element\ncosts 1, an end {tail.end_cost}", ha="right", va="center",
            fontsize=10)
    ax.text(tail.n + 0.6, y, f"cost {tail.total}\n= {tail.n} + {tail.end_cost} × {tail.segments}", ha="left",
            va="center", fontsize=10)
    for w, (lo, _) in enumerate(cost_ranges(tail.lengths, tail.end_cost, tail.warps)[1:], 1):
        ax.plot([w * tail.step * scale] * 2, [y - 0.55, y + 0.55], color="crimson", linewidth=1.8)
        ax.add_patch(FancyArrowPatch((w * tail.step * scale, y + 0.55), (lo, y_cut_to - 0.45), arrowstyle="-|>",
                                     mutation_scale=8, color="crimson", linewidth=1))
    ax.text(0, y - 0.62, f"cut every {tail.step} = ⌈{tail.total} / {tail.warps} warps⌉ of cost; "
            "a cut inside an end moves to its segment's last element", ha="left", va="bottom", fontsize=9,
            color="crimson")
