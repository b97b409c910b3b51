"""The charts over n: GB/s (bandwidth_vs_n.png), time per call (time_vs_n.png), the launch cost at
small n (launch_cost.png) and every chapter at one size (chapters.png)."""

import math
import os

from tools.chart_labels import chapter_numbers, end_labels, group_names, short_label
from tools.chart_style import (LIBRARY_COLORS, bandwidth_roofs, finish_n_axis, l2_marks,
                               label_on_line, label_roofs, log2_n_axis, log_gbps_axis,
                               marker_note, mix, placeholder, plot_series, pyplot, save,
                               span_text, suptitle, legend_label)
from tools.results import lesson_kernels, pick_dram_n, read_floor, select, series_of
from tools.schema import (SINGLE_PASS_CHAPTER, TIME_TABLE_MAX_N, TWO_PASS_CHAPTER, baseline_for,
                        binary_size, is_baseline, pow2_label, sort_rows)


# A lesson at no less than this fraction of CUB's GB/s at the DRAM size is "at CUB's bandwidth":
# bandwidth_vs_n.png draws those as one band on its log axis and each apart in its × CUB panel.
CLOSE_TO_CUB = 0.9
BAND_COLOR, BAND_TEXT = "#9c8fd0", "#5a4a9e"


def cub_ratios(rows, op="sum", dtype="f32"):
    """{(chapter, kernel): {n: its GB/s ÷ the baseline's GB/s at the same n}} for the lessons in
    rows, computed from the two rows' GB/s; empty where the baseline has no rows."""
    base = baseline_for(op, dtype)
    cub = {r["n"]: r["gbps"] for r in select(rows, op, dtype) if (r["chapter"], r["kernel"]) == base}
    out = {}
    for r in sort_rows(select(rows, op, dtype)):
        if not is_baseline(r["kernel"]) and r["n"] in cub:
            out.setdefault((r["chapter"], r["kernel"]), {})[r["n"]] = r["gbps"] / cub[r["n"]]
    return out


def near_cub(rows, n):
    """The f32 sum lessons at n, (chapter, kernel, × CUB) each, in two lists: those at no less
    than CLOSE_TO_CUB of CUB's GB/s, and the others."""
    at = [(ch, k, ratios[n]) for (ch, k), ratios in cub_ratios(rows).items() if n in ratios]
    return [a for a in at if a[2] >= CLOSE_TO_CUB], [a for a in at if a[2] < CLOSE_TO_CUB]


def cub_message(rows, n):
    """The f32 sum's story at n in one line: which chapters run at CUB's bandwidth, which below."""
    close, far = near_cub(rows, n)
    parts = [f"{group_names([c for c, _, _ in group])} {'at' if i else 'run at'} "
             f"{span_text([r for _, _, r in group])}× CUB"
             for i, group in enumerate(g for g in (close, far) if g)]
    return f"f32 sum at n = {pow2_label(n)}: " + ", ".join(parts) if parts else "f32 sum"


def chart_bandwidth_vs_n(rows, machine, colors, path):
    """GB/s of the f32 sums against n. The upper panel, log-log, draws the chapters below CUB's
    bandwidth and CUB itself, and those at it (CLOSE_TO_CUB at the DRAM size) as one band, where
    a log axis would merge their lines anyway; the lower panel, linear, draws each of those as a
    multiple of CUB's GB/s at the same n, where their differences show."""
    part = select(rows, "sum", "f32")
    if not part:
        return placeholder(path, f"f32 sum: bandwidth vs. input size ({machine.gpu})",
                            "No f32 sum rows in bench.csv.")
    plt = pyplot()
    series = {(ch, k): rs for (ch, k, _), rs in series_of(part).items()}
    n_dram, _ = pick_dram_n(part)
    close, _ = near_cub(part, n_dram)
    grouped = [(ch, k) for ch, k, _ in close] if len(close) >= 2 else []
    ns = sorted({r["n"] for r in part})
    if grouped:
        fig, (ax, ratio_ax) = plt.subplots(2, 1, figsize=(11, 10), sharex=True,
                                           gridspec_kw=dict(height_ratios=[3, 2], hspace=0.14))
    else:
        fig, ax = plt.subplots(figsize=(11, 6.5))
    suptitle(fig, f"{cub_message(part, n_dram)} ({machine.gpu})")  # before the labels: it
    # moves the axes, and the labels are placed in pixels
    bandwidth_panel(ax, part, series, grouped, machine, colors, plt)
    if grouped:
        cub_ratio_panel(ratio_ax, series, grouped, cub_ratios(part), ns, machine, colors)
    save(fig, path)


def bandwidth_panel(ax, part, series, grouped, machine, colors, plt):
    """bandwidth_vs_n.png's upper panel: GB/s against n, log-log, each series a line but those
    grouped (near CUB's bandwidth), which are one band, under the roofs."""
    ends = []
    for (ch, k), rs in series.items():
        if (ch, k) in grouped:
            continue
        plot_series(ax, [r["n"] for r in rs], [r["gbps"] for r in rs], rs, colors[ch, k],
                     "--" if is_baseline(k) else "-", label=legend_label(ch, k))
        ends.append((rs[-1]["n"], rs[-1]["gbps"], short_label(ch, k), colors[ch, k]))
    ns = sorted({r["n"] for r in part})
    if grouped:
        ends.append(band_of(ax, series, grouped, ns))
    finish_n_axis(ax, ns, plt, "f32 elements")
    if grouped:
        ax.set_xlabel("")
    bandwidth_roofs(ax, machine, label=False)
    log_gbps_axis(ax, part, machine)
    marks = l2_marks(ax, list(series.values()), machine)
    marker_note(ax, gold=len(marks) == 1)
    ax.set_title("GB/s against n, log scales", fontsize=10.5)
    label_roofs(ax, machine, ends)
    end_labels(ax, ends)


def band_of(ax, series, grouped, ns):
    """The grouped series as one band, from the lowest GB/s to the highest at each n that all of
    them measured; returns its end label (an end_labels item)."""
    gbps = {key: {r["n"]: r["gbps"] for r in series[key]} for key in grouped}
    band_ns = [n for n in ns if all(n in gbps[key] for key in grouped)]
    lo = [min(gbps[key][n] for key in grouped) for n in band_ns]
    hi = [max(gbps[key][n] for key in grouped) for n in band_ns]
    numbers = chapter_numbers([ch for ch, _ in grouped])
    ax.fill_between(band_ns, lo, hi, color=BAND_COLOR, alpha=0.35, linewidth=0,
                    label=f"chapters {numbers}")
    for edge in (lo, hi):
        ax.plot(band_ns, edge, color=BAND_COLOR, linewidth=0.8)
    return band_ns[-1], math.sqrt(lo[-1] * hi[-1]), f"{numbers}: × CUB below", BAND_TEXT


def cub_ratio_panel(ax, series, grouped, ratios, ns, machine, colors):
    """bandwidth_vs_n.png's lower panel: each grouped series as a multiple of CUB's GB/s at the same
    n (ratios: cub_ratios'), on a linear axis, CUB the line at 1."""
    ends = []
    for key in grouped:
        rs = [r for r in series[key] if r["n"] in ratios.get(key, {})]
        ys = [ratios[key][r["n"]] for r in rs]
        plot_series(ax, [r["n"] for r in rs], ys, rs, colors[key], label=legend_label(*key))
        ends.append((rs[-1]["n"], ys[-1], short_label(*key), colors[key]))
    base = baseline_for("sum", "f32")[1]
    ax.axhline(1.0, color=LIBRARY_COLORS["cub_"], linestyle="--", linewidth=1.3)
    values = [v for key in grouped for v in ratios.get(key, {}).values()] + [1.0]
    span = max(values) - min(values) or 0.1
    ax.set_ylim(min(values) - 0.08 * span, max(values) + 0.12 * span)
    ax.set_ylabel(f"× CUB: GB/s ÷ {base}'s at the same n (linear)")
    ax.grid(True, which="major", alpha=0.3)
    l2_marks(ax, [series[key] for key in grouped], machine, text=False)
    ax.set_xlim(ns[0] / 1.5, ns[-1] * 1.5)
    ax.set_title(f"chapters {chapter_numbers([ch for ch, _ in grouped])} against "
                 f"CUB, linear: where the log axis above merges them", fontsize=10.5)
    ax.set_xlabel("n (f32 elements, log scale)")
    label_on_line(ax, 1.0, f"CUB ({base}) = 1", LIBRARY_COLORS["cub_"], ends=ends)
    end_labels(ax, ends)


# time_vs_n.png draws these chapters' lead kernels, CUB and the empty kernel: 03's tree in shared
# memory (a launch per pass until one value is left), 07's two passes and 10's single pass.
TIME_CHAPTERS = ("03_shared", TWO_PASS_CHAPTER, SINGLE_PASS_CHAPTER)


def flat_time_limit(series):
    """The largest n up to which every kernel's time per call stays within twice its time at
    its smallest n: where launches, not bytes, set the time. series: {key: rows sorted by n}."""
    limits = []
    for rs in series.values():
        first = rs[0]["time_us"]
        n = rs[0]["n"]
        for r in rs[1:]:
            if r["time_us"] > 2 * first:
                break
            n = r["n"]
        limits.append(n)
    return min(limits)


def chart_time_vs_n(rows, machine, colors, path):
    """Time per call of the f32 sums against n, log-log, for TIME_CHAPTERS, CUB and the empty
    kernel (floor.csv beside bench.csv): back to back (solid) and one call from idle (dotted,
    the host's dispatch included). Where the two part, the host sets the time."""
    part = select(rows, "sum", "f32")
    leads = dict(lesson_kernels(part))
    kernels = [(ch, leads[ch]) for ch in TIME_CHAPTERS if ch in leads] + [baseline_for("sum", "f32")]
    series = {(ch, k): rs for (ch, k, _), rs in series_of(part).items() if (ch, k) in kernels}
    if not series:
        return placeholder(path, f"f32 sum: time per call vs. input size ({machine.gpu})",
                            "No f32 sum rows in bench.csv.")
    floor = read_floor(os.path.dirname(os.path.abspath(path)))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11, 6.5))
    ends = []
    for (ch, k), rs in series.items():
        ax.plot([r["n"] for r in rs], [r["time_us"] for r in rs], color=colors[ch, k], marker="o",
                markersize=4, linewidth=1.6, linestyle="--" if is_baseline(k) else "-",
                label=legend_label(ch, k))
        timed = [r for r in rs if r["latency_us"]]
        ax.plot([r["n"] for r in timed], [r["latency_us"] for r in timed], color=colors[ch, k],
                linestyle=":", linewidth=1.2, label="_one call from idle")
        ends.append((rs[-1]["n"], rs[-1]["time_us"], short_label(ch, k), colors[ch, k]))
    if floor:
        for field, style, what, side in (("time_us", "-", "back to back", "top"),
                                         ("latency_us", ":", "one call from idle", "bottom")):
            if floor[field]:
                ax.axhline(floor[field], color="dimgray", linestyle=style, linewidth=1.2,
                           label="empty kernel" if field == "time_us" else "_empty kernel, one call")
                ax.text(0.99, floor[field], f"empty kernel, {what}: {floor[field]:.2f} µs",
                        transform=ax.get_yaxis_transform(), ha="right", va=side, fontsize=8.5,
                        color="dimgray")
    ns = sorted({r["n"] for rs in series.values() for r in rs})
    finish_n_axis(ax, ns, plt, "f32 elements")
    ax.set_yscale("log")
    n_l2 = machine.l2_bytes / 4
    ax.axvline(n_l2, color="slategray", linestyle="-.", linewidth=1.2)
    ax.text(n_l2, 0.985, f" {machine.l2_label} ", transform=ax.get_xaxis_transform(), ha="left",
            va="top", fontsize=9, color="slategray")
    ax.set_ylabel("time per call (µs, log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend([plt.Line2D([], [], color="gray"), plt.Line2D([], [], color="gray", linestyle=":")],
              ["solid (CUB dashed): back to back, the steady state",
               "dotted: one call from idle, host dispatch included"],
              loc="upper left", fontsize=8.5, frameon=False)
    flat = flat_time_limit(series)
    times = [r["time_us"] for rs in series.values() for r in rs if r["n"] <= flat]
    ax.set_title(f"f32 sum: up to n = {pow2_label(flat)} a call takes {span_text(times, '{:.1f}')} µs "
                 f"whatever n; launches, not bytes, set the time ({machine.gpu})")
    end_labels(ax, ends)
    save(fig, path)


def chart_launch_cost(rows, machine, colors, path):
    """Where launches, not bytes, set the time (f32 sums, L2-resident, n ≤ TIME_TABLE_MAX_N): time
    per call of the single-pass chapter, the two-pass one and CUB, one call from idle (left) and
    back to back in a loop (right, the same calls in a CUDA graph dashed), over the floor an empty
    kernel sets, timed the same ways (floor.csv beside bench.csv, where the run measured it)."""
    title = f"f32 sum at small n: time per call, one launch against two and CUB ({machine.gpu})"
    sums = [r for r in select(rows, "sum", "f32") if r["n"] <= TIME_TABLE_MAX_N and r["l2_resident"]]
    if not any(r["chapter"] == SINGLE_PASS_CHAPTER for r in sums):
        return placeholder(path, title, f"No f32 sum rows of {SINGLE_PASS_CHAPTER} at "
                                         f"n ≤ {pow2_label(TIME_TABLE_MAX_N)} (L2-resident) in "
                                         f"bench.csv.")
    leads = dict(lesson_kernels(sums))  # chapter -> its lead kernel, the last of its lessons
    kernels = [(chapter, leads[chapter]) for chapter in (TWO_PASS_CHAPTER, SINGLE_PASS_CHAPTER)
               if chapter in leads] + [baseline_for("sum", "f32")]
    series = {(ch, k): rs for (ch, k, _), rs in series_of(sums).items() if (ch, k) in kernels}
    # The chart lies in its results folder, next to the floor.csv of the same run.
    floor = read_floor(os.path.dirname(os.path.abspath(path)))
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(14, 6), sharey=True)
    # Per panel: its lines (field, line style, legend suffix) and its floors (field, how much
    # lighter than the floor's grey, label). Graph lines for 10 and CUB only, so that the panel
    # stays legible.
    panels = [(axes[0], "one call from an idle GPU, host dispatch included",
               [("latency_us", "-", "")], [("latency_us", 0.0, "empty kernel")]),
              (axes[1], "back to back: 200 calls in a loop (dashed: in one CUDA graph)",
               [("b2b_us", "-", ""), ("graph_us", "--", ", in a CUDA graph")],
               [("b2b_us", 0.0, "empty kernel"), ("graph_us", 0.5, "empty kernel, in a CUDA graph")])]
    values = []
    for ax, panel_title, lines, floors in panels:
        for field, style, suffix in lines:
            for (ch, k), rs in series.items():
                timed = [r for r in rs if r[field]]
                if timed and not (field == "graph_us" and ch == TWO_PASS_CHAPTER):
                    ax.plot([r["n"] for r in timed], [r[field] for r in timed], color=colors[ch, k],
                            linestyle=style, marker="o", markersize=4, linewidth=1.6,
                            label=legend_label(ch, k) + suffix)
                    values += [r[field] for r in timed]
        # The floors, labelled on the line as the bandwidth roofs are; a white box keeps the
        # label legible where a kernel's line crosses it.
        for field, lighter, label in floors:
            if floor and floor[field]:
                color = mix("dimgray", lighter)
                ax.axhline(floor[field], color=color, linestyle=":", linewidth=1.4)
                ax.annotate(f"{label}: {floor[field]:.2f} µs", (0.99, floor[field]),
                            xycoords=ax.get_yaxis_transform(), xytext=(0, -3),
                            textcoords="offset points", color=color, fontsize=8.5, ha="right",
                            va="top", bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1))
                values.append(floor[field])
        log2_n_axis(ax, sorted({r["n"] for r in sums}), plt)
        ax.set_xlabel("n (f32 elements, log scale; every input L2-resident)")
        ax.set_title(panel_title, fontsize=10.5)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8.5, frameon=False)
    axes[0].set_yscale("log")  # the panels share it
    if values:  # room above the lines for the legends
        axes[0].set_ylim(min(values) / 1.5, max(values) * 4)
    axes[0].set_ylabel("time per call (µs, log scale)")
    fig.suptitle(title)
    save(fig, path)


def chapters_message(rows, n):
    """chapters.png's story: the share of the DRAM peak the chapters at CUB's bandwidth reach
    (near_cub), against CUB's own."""
    close, _ = near_cub(rows, n)
    at = {(r["chapter"], r["kernel"]): r for r in rows if r["n"] == n}
    cub = at.get(baseline_for("sum", "f32"))
    if not close:
        return f"f32 sum per chapter at n = {pow2_label(n)}"
    pct = [at[ch, k]["pct_peak"] for ch, k, _ in close]
    return (f"f32 sum at n = {pow2_label(n)}: {group_names([ch for ch, _, _ in close])} reach "
            f"{span_text(pct, '{:.1f}')}% of the DRAM peak" + (f", CUB {cub['pct_peak']:.1f}%" if cub else ""))


def chart_chapters(rows, machine, colors, path):
    """Bars of the f32 sums at the DRAM size, chapter by chapter and CUB, each marked with its %
    of the DRAM peak and its ratio to CUB: inside a tall bar, above a short one."""
    part = select(rows, "sum", "f32")
    if not part:
        return placeholder(path, f"Chapters ({machine.gpu})", "No f32 sum rows in bench.csv.")
    n, note = pick_dram_n(part)
    bars = [r for r in sort_rows(part) if r["n"] == n]

    fig, ax = pyplot().subplots(figsize=(max(8, 1.3 * len(bars) + 3), 6))
    xs = range(len(bars))
    drawn = ax.bar(xs, [r["gbps"] for r in bars], edgecolor="black", linewidth=0.6,
                   color=[colors[r["chapter"], r["kernel"]] for r in bars])
    top = max([machine.dram_gbps] + [r["gbps"] for r in bars]) * 1.12
    for bar, r in zip(drawn, bars):
        if is_baseline(r["kernel"]):
            bar.set_hatch("//")
            bar.set_facecolor("lightgray")
        ratio = f"{r['ratio_to_cub']:.2f}× CUB" if r["ratio_to_cub"] is not None else "no CUB row"
        text = f"{r['pct_peak']:.1f}% of peak\n{ratio}" + ("\nL2-resident" if r["l2_resident"] else "")
        # Halfway up a tall bar, clear of the roof lines, on the bar's own colour; above a
        # short one.
        inside = r["gbps"] > 0.4 * top
        face = bar.get_facecolor()
        dark = sum(face[:3]) < 1.8
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height() / (2 if inside else 1)),
                    xytext=(0, 0 if inside else 3), textcoords="offset points", ha="center",
                    va="center" if inside else "bottom", fontsize=8.5,
                    color="white" if inside and dark else "black",
                    bbox=dict(facecolor=face if inside else "white", edgecolor="none", pad=1))
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{r['chapter']}\n{r['kernel']}" for r in bars], rotation=30,
                       ha="right", fontsize=8.5)
    bandwidth_roofs(ax, machine)
    ax.set_ylim(0, top)
    ax.set_ylabel("achieved bandwidth (GB/s, 10⁹ bytes/s)")
    ax.set_title(f"{chapters_message(part, n)} ({binary_size(n * 4)} of f32, {machine.gpu})"
                 + (f"\n{note}" if note else ""))
    ax.grid(True, axis="y", alpha=0.3)
    save(fig, path)
