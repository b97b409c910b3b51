"""Chapters 11 and 12's chart: many reductions at once, GB/s per shape against CUB (batched.png)."""

import math

from tools.chart_labels import end_labels
from tools.chart_style import (LIBRARY_COLORS, bandwidth_roofs, label_on_line, label_roofs,
                               log2_n_axis, marker_note, placeholder, plot_series, pyplot,
                               save, span_text, suptitle)
from tools.results import select
from tools.schema import BATCHED_BASELINE, LAYOUTS, batched_key, is_baseline
from tools.tables import distribution


# The batched chart: a colour per layout, a marker per layout (heavy-tailed segments their own),
# the heavy-tailed segments dash-dotted; CUB is the line at 1 of the lower panel.
LAYOUT_COLORS = {"rows": "#1f77b4", "columns": "#ff7f0e", "segments": "#2ca02c"}
LAYOUT_MARKERS = {"rows": "o", "columns": "s", "segments": "^"}


def batched_lines(rows):
    """The batched chart's lines: {(layout index, heavy, kernel): rows sorted by length} of the
    lessons' f32 sums (chapters 11 and 12; no variant, no library), one point per length, the
    largest n where several shapes share it."""
    lines = {}
    for r in sorted(select(rows, "sum", "f32"), key=lambda r: (r["length"], -r["n"])):
        if not r["variant_of"] and not is_baseline(r["kernel"]):
            line = lines.setdefault((LAYOUTS.index(r["layout"]), bool(r["params"].get("heavy")),
                                     r["kernel"]), [])
            if not line or line[-1]["length"] != r["length"]:
                line.append(r)
    return dict(sorted(lines.items()))


def batched_cub_ratios(line, rows):
    """[(row, its GB/s ÷ CUB's segmented reduction's at the same shape)] for the points of line
    that CUB measured (none for columns: CUB has no column reduction)."""
    cub = {batched_key(r): r["gbps"] for r in rows if r["kernel"] == BATCHED_BASELINE}
    return [(r, r["gbps"] / cub[batched_key(r)]) for r in line if batched_key(r) in cub]


def batched_label(line):
    r = line[0]
    shape = f", {distribution(r)}" if r["layout"] == "segments" else ""
    return f"{r['kernel']}{shape}"


def _ratio_span(values):
    """'1.01–139': ratios with three significant digits."""
    return span_text(values, "{:.3g}")


def chart_batched(rows, machine, path):
    """The batched f32 sums (chapters 11 and 12) against L, the length of a row or column or the
    segments' mean length, log2. Upper panel: the lessons' GB/s on a linear axis (they all run
    near the DRAM bandwidth, which a log axis would squash into one band), with the roofs. Lower
    panel: each as a multiple of CUB's segmented reduction at the same shape, log (rows and
    segments; CUB has no column reduction). The variants are in the tables."""
    lines = batched_lines(rows)
    if not lines:
        return placeholder(path, f"Batched f32 sums ({machine.gpu})",
                            "No batched f32 sum rows in bench.csv.")
    plt = pyplot()
    ratios = {key: batched_cub_ratios(line, rows) for key, line in lines.items()}
    ratios = {key: pairs for key, pairs in ratios.items() if pairs}
    shown = [r for line in lines.values() for r in line]
    values = [v for pairs in ratios.values() for _, v in pairs]
    story = f"the lessons run at {span_text([r['gbps'] for r in shown], '{:,.0f}')} GB/s at every length"
    if values:
        story += f", {_ratio_span(values)}× CUB's segmented reduction"
    fig, axes = plt.subplots(2 if ratios else 1, 1, figsize=(11, 4.6 * (2 if ratios else 1) + 0.8),
                             sharex=True, squeeze=False, gridspec_kw=dict(hspace=0.16))
    axes = list(axes[:, 0])
    suptitle(fig, f"Batched f32 sums: {story} ({machine.gpu})")
    lengths = sorted({r["length"] for r in shown})
    for a in axes:
        a.set_xlim(lengths[0] / 1.5, lengths[-1] * 1.5)
    log2_n_axis(axes[-1], lengths, plt)
    axes[-1].set_xlabel("L: elements per row or column, or the segments' mean length (log scale)")
    batched_gbps_panel(axes[0], lines, machine)
    if ratios:
        batched_ratio_panel(axes[1], lines, ratios, plt)
    save(fig, path)


def draw_batched(ax, lines, points):
    """points: {key of lines: [(row, y)]} -> their lines, a colour and a marker per layout
    (heavy-tailed segments dash-dotted), and their labels at their ends (end_labels items)."""
    ends = []
    for key, pairs in points.items():
        line = lines[key]
        color = LAYOUT_COLORS[line[0]["layout"]]
        marker = "v" if key[1] else LAYOUT_MARKERS[line[0]["layout"]]
        plot_series(ax, [r["length"] for r, _ in pairs], [y for _, y in pairs],
                     [r for r, _ in pairs], color, "-." if key[1] else "-", marker,
                     label=batched_label(line))
        ends.append((pairs[-1][0]["length"], pairs[-1][1], batched_label(line), color))
    return ends


def batched_gbps_panel(ax, lines, machine):
    """batched.png's upper panel: the lessons' GB/s, linear, under the roofs."""
    shown = [r for line in lines.values() for r in line]
    ends = draw_batched(ax, lines, {key: [(r, r["gbps"]) for r in line] for key, line in lines.items()})
    bottom = 500 * math.floor(0.9 * min(r["gbps"] for r in shown) / 500)
    ax.set_ylim(bottom, max([machine.dram_gbps] + [r["gbps"] for r in shown]) * 1.05)
    ax.set_ylabel("GB/s (linear" + (f", from {bottom:.0f})" if bottom else ")"))
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title("the lessons' GB/s, linear", fontsize=10.5)
    bandwidth_roofs(ax, machine, label=False)
    if any(r["l2_resident"] for r in shown):
        marker_note(ax)
    label_roofs(ax, machine, ends)
    end_labels(ax, ends)


def batched_ratio_panel(ax, lines, ratios, plt):
    """batched.png's lower panel: each line as a multiple of CUB's segmented reduction at the same
    shape (ratios: {key: batched_cub_ratios'}), log, CUB the line at 1."""
    values = [v for pairs in ratios.values() for _, v in pairs]
    ends = draw_batched(ax, lines, ratios)
    low, high = min(values + [1.0]) / 1.6, max(values + [1.0]) * 2
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    ticks = [t for t in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if low <= t <= high]
    ax.set_yticks(ticks)
    ax.set_yticklabels([f"{t:g}×" for t in ticks])
    ax.yaxis.set_minor_locator(plt.NullLocator())
    ax.axhline(1.0, color=LIBRARY_COLORS["cub_"], linestyle="--", linewidth=1.3)
    ax.set_ylabel(f"× CUB: GB/s ÷ {BATCHED_BASELINE}'s\nat the same shape (log scale)")
    ax.grid(True, which="major", alpha=0.3)
    without = sorted({line[0]["layout"] for key, line in lines.items() if key not in ratios},
                     key=LAYOUTS.index)
    ax.set_title("against CUB's segmented reduction"
                 + (f" ({', '.join(without)}: CUB has none)" if without else ""), fontsize=10.5)
    label_on_line(ax, 1.0, f"CUB ({BATCHED_BASELINE}) = 1", LIBRARY_COLORS["cub_"], ends=ends)
    end_labels(ax, ends)
