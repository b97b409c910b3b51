"""What every chart shares: matplotlib (imported only when a chart is drawn), the colours of the
chapters and libraries, the bandwidth roofs, the axes, the L2 marks and the series' lines."""

import math

from tools.chart_labels import label_cost, laid_out, label_obstacles
from tools.results import kernels_of
from tools.schema import is_baseline, pow2_label


# ---- Charts ---------------------------------------------------------------------------------

def pyplot():
    # matplotlib is imported here, not at the top, so that the jobs csv, tables, compare
    # and readmes run without it; Agg renders without a display (CI, a GPU node).
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


# tab10 reordered so that neighbouring chapters never share a hue family: chapter NN takes entry
# NN - 1 (blue, orange, green, pink, brown, cyan, red, purple, olive), whichever chapters a run
# measured. tab10's grey is left out: greys and black belong to the libraries. Chapter 10, past
# tab10, takes magenta: a saturated colour far from every one of those and from the libraries'.
CHAPTER_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#e377c2", "#8c564b", "#17becf", "#d62728",
                   "#9467bd", "#bcbd22", "#ff00ff"]
LIBRARY_COLORS = {"cub_": "black", "cublas_": "dimgray"}


def chapter_color(chapter, position):
    """The colour of a chapter 'NN_name' (or, without a number, of its position among the chapters)."""
    prefix = chapter.split("_", 1)[0]
    index = int(prefix) - 1 if prefix.isdigit() and int(prefix) > 0 else position
    return CHAPTER_PALETTE[index % len(CHAPTER_PALETTE)]


def mix(color, white):
    """color moved a fraction `white` of the way to white."""
    from matplotlib.colors import to_rgb
    return tuple(c + (1 - c) * white for c in to_rgb(color))


def kernel_colors(rows):
    """One colour per chapter, the same in every chart, for its kernels (dot.png, the one chart
    of a chapter's several steps, gives the steps before the lead kernel colours of their own:
    step_colors). The libraries in black (CUB) and grey (cuBLAS), so the yardstick stands apart
    from the kernels."""
    kernels = kernels_of(rows)
    colors = {}
    for position, chapter in enumerate(dict.fromkeys(chapter for chapter, _ in kernels)):
        for k in kernels:
            if k[0] == chapter and not is_baseline(k[1]):
                colors[k] = chapter_color(chapter, position)
    for k in kernels:
        if is_baseline(k[1]):
            colors[k] = next(c for prefix, c in LIBRARY_COLORS.items() if k[1].startswith(prefix))
    return colors


def legend_label(chapter, kernel):
    return f"{chapter}: {kernel}" + (" (baseline)" if is_baseline(kernel) else "")


def save(fig, path):
    # bbox_inches="tight" keeps the labels placed beside the axes inside the image.
    fig.savefig(path, dpi=130, bbox_inches="tight")
    pyplot().close(fig)


def placeholder(path, title, message):
    """A chart with nothing to show still gets written, saying why, so that the README's image
    links never break."""
    fig, ax = pyplot().subplots(figsize=(8, 3))
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="dimgray",
            transform=ax.transAxes, wrap=True)
    save(fig, path)



# ---- Chart furniture: axes, roofs, direct labels --------------------------------------------

ROOFS = (("dram_gbps", "theoretical DRAM", "firebrick", "--", "bottom"),
         ("copy_gbps", "measured device-to-device copy", "darkgreen", ":", "top"))


def bandwidth_roofs(ax, machine, label=True):
    """Horizontal lines for the theoretical DRAM bandwidth and the measured copy bandwidth,
    labelled on the line itself so the reader needs no legend lookup (label=False: later, by
    label_roofs, once the series are drawn)."""
    # The higher line is labelled above itself, the lower below: the two never overlap.
    for field, what, color, style, side in ROOFS:
        gbps = getattr(machine, field)
        ax.axhline(gbps, color=color, linestyle=style, linewidth=1.3)
        if label:
            ax.text(0.01, gbps, f"{what}: {gbps:.0f} GB/s", transform=ax.get_yaxis_transform(),
                    color=color, fontsize=9, ha="left", va=side)


def label_roofs(ax, machine, ends=None):
    """The roofs' labels, each on its own side of its line (DRAM above, copy below), placed by
    label_on_line: call it once the series and the axes' limits are drawn. ends: as there."""
    for field, what, color, _, side in ROOFS:
        gbps = getattr(machine, field)
        label_on_line(ax, gbps, f"{what}: {gbps:.0f} GB/s", color, (side,), ends=ends)


def label_on_line(ax, y, text, color, sides=("bottom", "top"), fontsize=9, ends=None):
    """A horizontal line's label, at y on the side(s) given ('bottom': above the line), at the
    first of a few places along it, left to right, where it crosses no series' line, marker or
    other text (else where it crosses least). Where every place crosses something and ends (a
    list of end_labels items) is given, the label goes there instead: at the line's right end,
    beside the axes. Returns the label, None when it went to ends."""
    draws = [lambda x=x, side=side: ax.text(x, y, text, transform=ax.get_yaxis_transform(), color=color,
                                            fontsize=fontsize, ha="left", va=side,
                                            bbox=dict(facecolor="white", edgecolor="none", alpha=0.7,
                                                      pad=0.5))
             for x in (0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8) for side in sides]
    cost, label = _cheapest_label(ax, draws)
    if cost >= 0.5 and ends is not None:
        label.remove()
        ends.append((ax.get_xlim()[1], y, text, color))
        return None
    return label


def _cheapest_label(ax, draws):
    """Draws the candidate labels (each a function that draws one and returns it) in turn until
    one crosses nothing (a cost under 0.5), keeping only the cheapest drawn: (its cost, it)."""
    _, renderer, _ = laid_out(ax)
    boxes, points = label_obstacles(ax, renderer, True)
    best = None
    for draw in draws:
        label = draw()
        cost = label_cost(label.get_window_extent(renderer).extents, boxes, points, [])
        if best is None or cost < best[0]:
            if best:
                best[1].remove()
            best = (cost, label)
        else:
            label.remove()
        if cost < 0.5:
            break
    return best


def log2_n_axis(ax, ns, plt, min_gap=0.6):
    """The x axis of n (or a length), log2, a tick at the measured sizes ns (sorted): powers of two
    first, then any other size at least min_gap (in powers of two) from every tick, so that no
    two labels collide (a mean length of 34 beside 2^5 gets none: the tables have it)."""
    ax.set_xscale("log", base=2)
    ticks = list(ns)
    while len(ticks) > 14:  # keep tick labels legible on long sweeps
        ticks = ticks[::2]
    chosen = []
    for n in sorted(ticks, key=lambda n: (n & (n - 1) != 0, n)):
        if all(abs(math.log2(n) - math.log2(c)) >= min_gap for c in chosen):
            chosen.append(n)
    chosen.sort()
    ax.set_xticks(chosen)
    ax.set_xticklabels([pow2_label(n, tex=True) for n in chosen])
    ax.xaxis.set_minor_locator(plt.NullLocator())


def l2_marks(ax, series, machine, band=True, text=True):
    """Where the input fills L2 exactly: a vertical line per element size (f16 fills it at twice
    the n of f32). Input bytes per element come from the data: bytes counts the input once (both
    vectors of a dot product) plus a few bytes of output. With a single element size, a light
    band also covers the sizes counted L2-resident (input no larger than L2, measured hot)."""
    element_sizes = {}
    for rows in series:
        r = max(rows, key=lambda r: r["n"])
        dtypes = element_sizes.setdefault(round(r["bytes"] / r["n"]), [])
        dtypes += sorted({r["dtype"] for r in rows} - set(dtypes))
    marks = sorted((machine.l2_bytes / size, dtypes) for size, dtypes in element_sizes.items())
    for i, (n_l2, dtypes) in enumerate(marks):
        ax.axvline(n_l2, color="slategray", linestyle="-.", linewidth=1.2)
        if not text:
            continue
        # Labels sit horizontally at the top. With several lines the first label goes left of
        # its line, the next right of its own, and every further pair a row lower: no overlaps.
        suffix = f" ({'/'.join(dtypes)})" if len(marks) > 1 else ""
        left = len(marks) > 1 and i % 2 == 0
        ax.text(n_l2, 0.985 - 0.06 * (i // 2), f" {machine.l2_label}{suffix} ",
                transform=ax.get_xaxis_transform(), ha="right" if left else "left", va="top",
                fontsize=9, color="slategray")
    if band and len(marks) == 1:
        ax.axvspan(ax.get_xlim()[0], marks[0][0], color="gold", alpha=0.10, linewidth=0)
    return marks


def marker_note(ax, gold=False):
    """What a marker's fill says, written in the chart (it replaces two legend entries), in the
    first corner of the axes where it covers no series, marker or text: call it once the series
    and the axes' limits are drawn."""
    text = "hollow markers: L2-resident, measured hot; filled: larger than L2, measured cold"
    if gold:
        text += "\ngold: inputs no larger than L2"
    draws = [lambda x=x, y=y, ha=ha, va=va: ax.text(x, y, text, transform=ax.transAxes, ha=ha, va=va,
                                                    fontsize=8, color="dimgray",
                                                    bbox=dict(facecolor="white", edgecolor="none",
                                                              alpha=0.85, pad=1.5))
             for x, y, ha, va in ((0.99, 0.03, "right", "bottom"), (0.01, 0.86, "left", "top"),
                                  (0.01, 0.03, "left", "bottom"), (0.99, 0.86, "right", "top"),
                                  (0.5, 0.03, "center", "bottom"), (0.5, 0.86, "center", "top"))]
    return _cheapest_label(ax, draws)[1]


def plot_series(ax, x, y, rows, color, style="-", marker="o", label=None, linewidth=1.6,
                 markersize=5):
    """One line of a chart, its L2-resident points hollow (the same rows' l2_resident)."""
    ax.plot(x, y, color=color, linestyle=style, marker=marker, markersize=markersize,
            linewidth=linewidth, label=label)
    hollow = [(a, b) for a, b, r in zip(x, y, rows) if r["l2_resident"]]
    if hollow:
        ax.plot(*zip(*hollow), linestyle="none", marker=marker, markersize=markersize,
                color=color, markerfacecolor="white")


def log_gbps_axis(ax, rows, machine, ylabel=True):
    """A bandwidth panel's y axis: logarithmic, since small sizes and short rows reach a few GB/s,
    which a linear axis would draw as zero; room above for the roofs' labels."""
    ax.set_yscale("log")
    ax.set_ylim(min(r["gbps"] for r in rows) / 1.5,
                max([machine.dram_gbps] + [r["gbps"] for r in rows]) * 2.2)
    if ylabel:
        ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s, log scale)")
    ax.grid(True, which="major", alpha=0.3)


def series_count(ax):
    """The series a panel draws: its labelled lines, bars and bands (what a legend would list).
    Roofs, floors, L2 marks and hollow markers are unlabelled furniture."""
    import matplotlib.container
    artists = (ax.get_lines() + ax.collections
               + [c for c in ax.containers if isinstance(c, matplotlib.container.BarContainer)])
    return len({a.get_label() for a in artists if a.get_label() and not a.get_label().startswith("_")})


def span_text(values, fmt="{:.2f}"):
    """'0.13–0.40' (one value alone: '0.13')."""
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


def suptitle(fig, text):
    """A figure's title, one message, just above its top panel's own title."""
    fig.subplots_adjust(top=1 - 0.7 / fig.get_figheight())
    fig.suptitle(text, y=1 - 0.12 / fig.get_figheight(), va="top")


def finish_n_axis(ax, ns, plt, what):
    """An x axis of n: log2, a tick at the measured sizes, half a power of two of room each side."""
    log2_n_axis(ax, ns, plt)
    ax.set_xlim(ns[0] / 1.5, ns[-1] * 1.5)
    ax.set_xlabel(f"n ({what}, log scale)")
