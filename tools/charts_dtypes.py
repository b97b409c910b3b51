"""The charts across data types: each dtype's GB/s (dtypes.png), the same bytes in each dtype
(dtypes_equal_bytes.png), and chapter 08's dot product steps (dot.png)."""

from tools.chart_labels import end_labels, group_names, place_labels, ring_candidates
from tools.chart_style import (LIBRARY_COLORS, bandwidth_roofs, l2_marks, label_on_line,
                               label_roofs, log2_n_axis, log_gbps_axis, marker_note,
                               placeholder, plot_series, pyplot, save, span_text, suptitle,
                               legend_label)
from tools.results import lesson_kernels, pick_dram_n, select, series_of
from tools.schema import CUB_CHAPTER, baseline_for, binary_size, is_baseline, pow2_label, sort_rows
from tools.tables import ELEMENT_BYTES, EQUAL_BYTES, equal_bytes_lines


# Line style and marker per element type, where one chart shows several: a kernel keeps its
# colour, the line style and marker tell its element types apart. Where the element type is what
# a chart compares (dtypes.png's bars, dot.png's lower panel), it has a colour of its own.
DTYPE_STYLE = {"f32": ("-", "o"), "f16": ("--", "s"), "bf16": (":", "^")}
DTYPE_COLORS = {"f32": "#3a5f8f", "f16": "#e08214", "bf16": "#1b9e77"}


def split_at_largest_gap(items):
    """items [(name, value)] sorted by value, high first, cut where neighbouring values lie
    furthest apart: ([high ones], [low ones]); one group if there is a single item."""
    items = sorted(items, key=lambda item: -item[1])
    if len(items) < 2:
        return items, []
    gaps = [a[1] - b[1] for a, b in zip(items, items[1:])]
    cut = gaps.index(max(gaps)) + 1
    return items[:cut], items[cut:]


def dtype_groups(rows):
    """dtypes.png's bars: per chapter with f16 or bf16 sum rows, at one size (pick_dram_n of
    those rows), {dtype: row} of its lead kernel (a library chapter: the baseline of each dtype,
    cub_sum for f32, cub_transform_reduce for f16 and bf16). Returns (n, note, [(chapter,
    {dtype: row})])."""
    sums = [r for r in select(rows, "sum") if r["dtype"] in DTYPE_STYLE]
    halves = [r for r in sums if r["dtype"] != "f32"]
    if not halves:
        return None, None, []
    n, note = pick_dram_n(halves)
    at = {(r["chapter"], r["kernel"], r["dtype"]): r for r in sums if r["n"] == n}
    leads = dict(lesson_kernels(halves))
    groups = []
    for chapter in dict.fromkeys(r["chapter"] for r in sort_rows(halves)):
        def kernel(dtype):
            if chapter in leads:
                return leads[chapter]
            base_chapter, base = baseline_for("sum", dtype)
            return base if base_chapter == chapter else None
        bars = {dt: at.get((chapter, kernel(dt), dt)) for dt in DTYPE_STYLE}
        bars = {dt: r for dt, r in bars.items() if r}
        if bars:
            groups.append((chapter, bars))
    return n, note, groups


def chart_dtypes(rows, machine, colors, path):
    """Sums by element type at one DRAM size: per chapter with f16 or bf16 rows, its lead
    kernel's GB/s (CUB: its baseline call per type), a bar per element type, each 16-bit bar
    marked with its GB/s as a multiple of the same kernel's f32 GB/s."""
    n, note, groups = dtype_groups(rows)
    if not groups:
        return placeholder(path, f"Sums by element type ({machine.gpu})",
                            "No f16 or bf16 sum rows in bench.csv: nothing to compare across "
                            "element types.")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(8, 1.25 * len(groups) + 3), 6.5))
    dtypes = [dt for dt in DTYPE_STYLE if any(dt in bars for _, bars in groups)]
    width = 0.8 / len(dtypes)
    top = max([machine.dram_gbps] + [r["gbps"] for _, bars in groups for r in bars.values()]) * 1.12
    keeps = []  # (chapter, the smaller 16-bit GB/s ÷ f32's)
    for i, dt in enumerate(dtypes):
        drawn = [(g, bars[dt], bars) for g, (_, bars) in enumerate(groups) if dt in bars]
        xs = [g + (i - (len(dtypes) - 1) / 2) * width for g, _, _ in drawn]
        patches = ax.bar(xs, [r["gbps"] for _, r, _ in drawn], width, color=DTYPE_COLORS[dt],
                         edgecolor="black", linewidth=0.5, label=dt)
        for patch, (_, r, bars) in zip(patches, drawn):
            if is_baseline(r["kernel"]):
                patch.set_hatch("//")
            text = dt
            if dt != "f32" and "f32" in bars:
                text += f"  {r['gbps'] / bars['f32']['gbps']:.2f}× f32"
            inside = r["gbps"] > 0.3 * top
            y = r["gbps"] - 0.015 * top if inside else r["gbps"] + 0.01 * top
            ax.text(patch.get_x() + width / 2, y, text, rotation=90, ha="center",
                    va="top" if inside else "bottom", fontsize=8,
                    color="white" if inside else "black", fontweight="bold" if inside else None,
                    bbox=dict(facecolor=DTYPE_COLORS[dt], edgecolor="none", pad=0.6) if inside else None)
    for chapter, bars in groups:
        ratios = [r["gbps"] / bars["f32"]["gbps"] for dt, r in bars.items()
                  if dt != "f32" and "f32" in bars]
        if ratios:
            keeps.append((chapter, min(ratios)))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{chapter}\n" + " / ".join(dict.fromkeys(r["kernel"] for r in bars.values()))
                        for chapter, bars in groups], rotation=25, ha="right", fontsize=8.5)
    bandwidth_roofs(ax, machine)
    ax.set_ylim(0, top)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s, linear)")
    ax.grid(True, axis="y", alpha=0.3)
    story = [f"{group_names([c for c, _ in g])} {'keep' if i == 0 else 'only'} "
             f"{span_text([v for _, v in g])}×" + (" their f32 GB/s" if i == 0 else "")
             for i, g in enumerate(g for g in split_at_largest_gap(keeps) if g)]
    ax.set_title(f"Sums at n = {pow2_label(n)} in f16 and bf16: {', '.join(story)} "
                 f"({machine.gpu})" + (f"\n{note}" if note else ""), fontsize=11)
    ax.text(0.99, 0.985, "hatched: the library (CUB)", transform=ax.transAxes, ha="right", va="top",
            fontsize=8.5, color="dimgray")
    save(fig, path)


def chart_dtypes_equal_bytes(rows, machine, colors, path):
    """Sums of 1 GiB by element type: a group of bars per type, a bar per kernel (07's and 10's
    lead kernels and CUB's sum), each marked with its GB/s as a multiple of its own f32 GB/s.
    False (nothing drawn) where the run has no such rows."""
    size = EQUAL_BYTES[-1]
    lines = [(k, dt, found[size]) for k, dt, found in equal_bytes_lines(rows) if size in found]
    if not lines:
        return False
    plt = pyplot()
    kernels = list(dict.fromkeys(k if not is_baseline(k[1]) else (CUB_CHAPTER, "CUB") for k, _, _ in lines))
    key = lambda k: k if not is_baseline(k[1]) else (CUB_CHAPTER, "CUB")
    dtypes = [dt for dt in ELEMENT_BYTES if any(d == dt for _, d, _ in lines)]
    at = {(key(k), dt): r for k, dt, r in lines}
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(dtypes) + 3), 6))
    width = 0.8 / len(kernels)
    top = max([machine.dram_gbps] + [r["gbps"] for _, _, r in lines]) * 1.15
    keeps = {}
    for i, k in enumerate(kernels):
        drawn = [(g, at[(k, dt)]) for g, dt in enumerate(dtypes) if (k, dt) in at]
        xs = [g + (i - (len(kernels) - 1) / 2) * width for g, _ in drawn]
        color = "#8c8c8c" if k[1] == "CUB" else colors.get(k, f"C{i}")
        patches = ax.bar(xs, [r["gbps"] for _, r in drawn], width, color=color, edgecolor="black",
                         linewidth=0.5, hatch="//" if k[1] == "CUB" else None,
                         label="CUB (cub_sum; TransformReduce for the other types)" if k[1] == "CUB"
                         else f"{k[0]}: {k[1]}")
        f32 = at.get((k, "f32"))
        for patch, (g, r) in zip(patches, drawn):
            if f32 and dtypes[g] != "f32":
                ratio = r["gbps"] / f32["gbps"]
                keeps.setdefault(k, []).append(ratio)
                # Inside the bar, half way up: clear of the roofs' lines and labels.
                ax.text(patch.get_x() + width / 2, r["gbps"] / 2, f"{ratio:.2f}× f32", rotation=90,
                        ha="center", va="center", fontsize=7.5, color="white", fontweight="bold",
                        bbox=dict(facecolor=color, edgecolor="none", pad=0.6))
    ax.set_xticks(range(len(dtypes)))
    ax.set_xticklabels(dtypes)
    bandwidth_roofs(ax, machine)
    ax.set_ylim(0, top)
    ax.set_xlim(-0.6, len(dtypes) - 0.4)
    ax.set_xlabel(f"element type ({binary_size(size)} of input each: n = bytes / element size)")
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s, linear)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=len(kernels), fontsize=8.5, frameon=False)
    story = ", ".join(f"{'CUB' if k[1] == 'CUB' else k[0]} {span_text(v)}×" for k, v in keeps.items())
    ax.set_title(f"Sums of {binary_size(size)} by element type, as a multiple of their f32 GB/s: {story} "
                 f"({machine.gpu})", fontsize=10.5)
    save(fig, path)
    return True


# A chapter's steps before its lead kernel (08's first three) each take a colour of their own,
# far from the chapter's (which its lead kernel keeps) and from each other, and a marker of their
# own.
STEP_COLORS = ["#17becf", "#bcbd22", "#ff7f0e", "#d62728", "#1f77b4"]
STEP_MARKERS = ["D", "v", "P", "X", "*"]


def step_markers(rows):
    """{(chapter, kernel): marker} for every lesson kernel before its chapter's lead kernel."""
    return {k: STEP_MARKERS[i % len(STEP_MARKERS)] for k, i in _earlier_steps(rows).items()}


def step_colors(rows, colors):
    """{(chapter, kernel): colour} of every lesson kernel: the lead in its chapter's colour (from
    colors), each step before it in a distinct colour of STEP_COLORS."""
    out = {k: colors[k] for k in lesson_kernels(rows)}
    out.update({k: STEP_COLORS[i % len(STEP_COLORS)] for k, i in _earlier_steps(rows).items()})
    return out


def _earlier_steps(rows):
    """{(chapter, kernel): its index among its chapter's steps} for each step before the lead."""
    lessons = lesson_kernels(rows)
    out = {}
    for chapter in dict.fromkeys(c for c, _ in lessons):
        out.update({k: i for i, k in enumerate([k for k in lessons if k[0] == chapter][:-1])})
    return out


def bf16_drop(lead_rows):
    """Where a lead kernel's bf16 dot product falls furthest below its f16 one (else below its
    baseline), among sizes larger than L2 if any: (bf16 row, × f16 or None, × baseline or None),
    or None without bf16 rows."""
    by = {(r["dtype"], r["n"]): r for r in lead_rows}
    bf16 = [r for r in lead_rows if r["dtype"] == "bf16"]
    if not bf16:
        return None
    candidates = [r for r in bf16 if not r["l2_resident"]] or bf16

    def against_f16(r):
        f16 = by.get(("f16", r["n"]))
        return r["gbps"] / f16["gbps"] if f16 else None
    row = min(candidates, key=lambda r: (against_f16(r) or 0, r["ratio_to_cub"] or 0, r["n"]))
    return row, against_f16(row), row["ratio_to_cub"]


def dot_story(series, lessons, lead):
    """dot.png's message: how far 08's steps climb against the f32 baseline at the DRAM size,
    and where its lead kernel's bf16 dot product drops (bf16_drop), both from the rows."""
    story = []
    base = baseline_for("dot", "f32")
    base_at = {r["n"]: r["gbps"] for r in series.get(base + ("f32",), [])}
    f32 = [r for k in lessons for r in series.get(k + ("f32",), [])]
    if f32 and base_at:
        n, _ = pick_dram_n(f32)
        at = [r["gbps"] / base_at[n] for k in lessons for r in series.get(k + ("f32",), [])
              if r["n"] == n and n in base_at]
        if len(at) >= 2:
            story.append(f"08's steps climb from {at[0]:.2f}× to {max(at):.2f}× {base[1]} at "
                         f"n = {pow2_label(n)}")
    drop = bf16_drop([r for key, rs in series.items() if lead and key[:2] == lead for r in rs])
    if drop and drop[1]:
        story.append(f"with bf16 inputs {lead[1]} falls to {drop[1]:.2f}× its f16 GB/s")
    return "; ".join(story) or "bandwidth vs. input size", drop


def chart_dot(rows, machine, colors, path):
    """Dot products against n, log2. Upper panel, f32: chapter 08's steps, each in a colour of
    its own, as multiples of the f32 baseline's GB/s (cuBLAS) at the same n, linear: on a log
    axis of GB/s the steps merge near the top. Lower panel, GB/s on a log axis: the lead kernel
    in every element type against the library in the 16-bit ones (CUB), the bf16 drop marked."""
    part = select(rows, "dot")
    if not part:
        return placeholder(path, f"Dot products ({machine.gpu})", "No dot-product rows in bench.csv.")
    plt = pyplot()
    lessons = lesson_kernels(part)
    lead = lessons[-1] if lessons else None
    own, markers, series = step_colors(part, colors), step_markers(part), series_of(part)
    base_at = {r["n"]: r for r in series.get(baseline_for("dot", "f32") + ("f32",), [])}
    upper = [(key, [r for r in rs if r["n"] in base_at]) for key, rs in series.items()
             if key[2] == "f32" and key[:2] in own]
    upper = [(key, rs) for key, rs in upper if rs]
    halves = [dt for dt in DTYPE_STYLE if dt != "f32" and any(r["dtype"] == dt for r in part)]
    lower = ([(key, rs) for key, rs in series.items() if key[:2] == lead]
             + [(key, rs) for key, rs in series.items()
                if key[2] in halves and key[:2] == baseline_for("dot", key[2])])
    panels = [p for p in (upper, lower if halves else []) if p]
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 5.2 * len(panels) + 0.6), sharex=True,
                             squeeze=False, gridspec_kw=dict(hspace=0.16))
    axes = list(axes[:, 0])
    story, drop = dot_story(series, lessons, lead)
    suptitle(fig, f"Dot products: {story} ({machine.gpu})")
    ns = sorted({r["n"] for r in part})
    log2_n_axis(axes[-1], ns, plt)
    for ax, panel in zip(axes, panels):
        if panel is upper:
            dot_steps_panel(ax, panel, own, markers, base_at, ns, machine)
        else:
            dot_dtypes_panel(ax, panel, lead, drop, ns, machine)
    axes[-1].set_xlabel("n (elements per vector, log scale; bytes count both vectors)")
    save(fig, path)


def dot_steps_panel(ax, panel, own, markers, base_at, ns, machine):
    """dot.png's upper panel: chapter 08's f32 steps (panel: [(series key, rows)]), each in its
    colour and marker (own, markers), as multiples of the f32 baseline's GB/s at the same n
    (base_at: its rows by n), linear, the baseline the line at 1."""
    base32 = baseline_for("dot", "f32")
    ends = []
    for (ch, k, dt), rs in panel:
        ys = [r["gbps"] / base_at[r["n"]]["gbps"] for r in rs]
        plot_series(ax, [r["n"] for r in rs], ys, rs, own[ch, k], "-", markers.get((ch, k), "o"),
                     label=f"{legend_label(ch, k)}, {dt}")
        ends.append((rs[-1]["n"], ys[-1], k, own[ch, k]))
    ax.set_xlim(ns[0] / 1.5, ns[-1] * 1.5)
    values = [y for line in ax.get_lines() for y in line.get_ydata()] + [1.0]
    span = max(values) - min(values) or 0.1
    ax.set_ylim(min(values) - 0.08 * span, max(values) + 0.12 * span)
    ax.axhline(1.0, color=LIBRARY_COLORS["cublas_"], linestyle="--", linewidth=1.3)
    ax.set_ylabel(f"× {base32[1]}: GB/s ÷ its GB/s\nat the same n (linear)")
    ax.grid(True, which="major", alpha=0.3)
    marks = l2_marks(ax, [rs for _, rs in panel], machine)
    ax.set_title(f"f32: chapter 08's steps against {base32[1]}, linear", fontsize=10.5)
    label_on_line(ax, 1.0, f"{base32[1]} (baseline) = 1", LIBRARY_COLORS["cublas_"], ends=ends)
    marker_note(ax, gold=len(marks) == 1)
    end_labels(ax, ends)


def dot_dtypes_panel(ax, panel, lead, drop, ns, machine):
    """dot.png's lower panel: the lead kernel's dot product in every element type and the library's
    in the 16-bit ones (panel: [(series key, rows)]), GB/s on a log axis under the roofs, a colour
    per element type; drop (bf16_drop's) marked."""
    ends = []
    for (ch, k, dt), rs in panel:
        color = DTYPE_COLORS.get(dt, "black")
        style, marker = "--" if is_baseline(k) else "-", DTYPE_STYLE.get(dt, ("-", "o"))[1]
        ys = [r["gbps"] for r in rs]
        plot_series(ax, [r["n"] for r in rs], ys, rs, color, style, marker, label=f"{legend_label(ch, k)}, {dt}")
        ends.append((rs[-1]["n"], ys[-1], f"{k}, {dt}" + (" (baseline)" if is_baseline(k) else ""), color))
    ax.set_xlim(ns[0] / 1.5, ns[-1] * 1.5)
    bandwidth_roofs(ax, machine, label=False)
    log_gbps_axis(ax, [r for _, rs in panel for r in rs], machine)
    marks = l2_marks(ax, [rs for _, rs in panel], machine)
    ax.set_title(f"{lead[1] if lead else 'the lead kernel'} by element type against the "
                 f"library: GB/s, log scale", fontsize=10.5)
    label_roofs(ax, machine, ends)
    marker_note(ax, gold=len(marks) == 1)
    end_labels(ax, ends)
    if drop:
        mark_bf16_drop(ax, drop)


def mark_bf16_drop(ax, drop):
    """The bf16 line's point where it falls furthest (drop: bf16_drop's), labelled with its GB/s
    and its multiples of f16's and CUB's, in bold, a leader arrow to the point."""
    row, f16, cub = drop
    against = [f"{v:.2f}× {what}" for v, what in ((f16, "f16"), (cub, "CUB")) if v]
    what = "bf16 drop" if min(v for v in (f16, cub, 1.0) if v) < 0.95 else "bf16"
    text = (f"{what}: {row['gbps']:.0f} GB/s at n = {pow2_label(row['n'])}"
            + (f"\n{', '.join(against)}" if against else ""))
    label, = place_labels(ax, [(row["n"], row["gbps"], text, DTYPE_COLORS["bf16"])],
                           ring_candidates(radii=(40, 55, 70, 90), angles=(-120, -150, -90, -60, 180, 150)),
                           fontsize=9, arrowstyle="->")
    label.set_fontweight("bold")
