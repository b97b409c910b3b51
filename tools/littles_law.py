"""The load latency and Little's law: bytes in flight per SM against the bandwidth they buy
(bytes_in_flight.md and its chart bytes_in_flight.png)."""

import csv
import math

from tools.chart_labels import place_labels, ring_candidates
from tools.chart_style import pyplot, save, chapter_color
from tools.profile import PROFILE_N, WARP
from tools.schema import InputError, binary_size, open_input
from tools.tables import markdown_table


# ---- Load latency and bytes in flight -------------------------------------------------------

def read_latency(path):
    """pointer_chase's CSV -> {'l2': ns, 'dram': [(region_bytes, ns), ...]}."""
    out = {"dram": []}
    with open_input(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for r in rows:
        try:
            ns, region = float(r["ns_per_load"]), int(r["region_bytes"])
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{path}: bad row {r}") from None
        if r["pattern"] == "l2":
            out["l2"] = ns
        elif r["pattern"] == "dram":
            out["dram"].append((region, ns))
    if "l2" not in out or not out["dram"]:
        raise InputError(f"{path} lacks an l2 row or dram rows")
    out["dram"].sort()
    # The latency a streaming kernel sees: the smallest region, whose pages the TLBs cover.
    out["dram_ns"] = out["dram"][0][1]
    return out


def bytes_per_thread(row):
    """Bytes of f32 input one thread has in flight at once, from the kernel's declared settings
    (bench.csv params): 07's unrolled vectors, 05's coarsening (2 x factor elements, all loads
    independent), or a plain count of elements per thread. None when the kernel declares none."""
    p = row["params"]
    if "unroll" in p and "vector_bytes" in p:
        return p["unroll"] * p["vector_bytes"]
    if "coarsening" in p:
        return 2 * p["coarsening"] * 4
    if "elements_per_thread" in p:
        return p["elements_per_thread"] * 4
    return None


def in_flight_points(profile, rows):
    """f32 sums at PROFILE_N with a bytes-per-thread setting: bytes in flight per SM (measured
    active warps x 32 x bytes per thread) and the benchmark's GB/s at the same n."""
    bench = {(r["chapter"], r["kernel"]): r for r in rows
             if r["op"] == "sum" and r["dtype"] == "f32" and r["n"] == PROFILE_N}
    points = []
    for s in profile.values():
        r = bench.get((s["chapter"], s["kernel"]))
        if not r or s["op"] != "sum" or s["dtype"] != "f32" or s["n"] != PROFILE_N or not s["warps_per_sm"]:
            continue
        per_thread = bytes_per_thread(r)
        if per_thread is None:
            continue
        points.append({"chapter": s["chapter"], "kernel": s["kernel"], "per_thread": per_thread,
                       "threads_per_sm": s["warps_per_sm"] * WARP,
                       "per_sm": s["warps_per_sm"] * WARP * per_thread, "gbps": r["gbps"]})
    return sorted(points, key=lambda p: (p["chapter"], p["per_sm"]))


def littles_law_gbps(per_sm_bytes, latency_ns, sm_count, peak_gbps):
    return min(peak_gbps, sm_count * per_sm_bytes / latency_ns)


def kib(x):
    return f"{x / 1024:.1f}"


def in_flight_section(latency, points, machine, sm_count):
    need = latency["dram_ns"] * machine.dram_gbps  # ns x GB/s = bytes
    lines = [
        f"Load latency measured by `pointer_chase` (one thread, dependent loads, "
        f"[`latency.csv`](latency.csv)): **{latency['l2']:.0f} ns** from L2, "
        f"**{latency['dram_ns']:.0f} ns** from DRAM "
        f"(a chain over {binary_size(latency['dram'][0][0])}; the same chain spread over larger regions, "
        "where address translation may miss: "
        + ", ".join(f"{ns:.0f} ns at {binary_size(b)}" for b, ns in latency["dram"][1:]) + ").",
        "",
        f"Little's law: to stream at the theoretical {machine.dram_gbps:.0f} GB/s, "
        f"{latency['dram_ns']:.0f} ns × {machine.dram_gbps:.0f} GB/s = **{need / 2**20:.2f} MiB** "
        f"must be in flight over the GPU, **{kib(need / sm_count)} KiB per SM** ({sm_count} SMs). "
        "Idle latency is a floor: under load, queues make it longer, so a kernel needs more than this.",
        "",
        "What each kernel keeps in flight, f32 sum at n = 2^28: threads resident per SM (measured "
        "by the profiler: average active warps × 32) × the bytes a thread may request before it needs "
        "the first (from its code: the independent loads it has, which is an upper bound, since the "
        "compiler may keep fewer of them in flight when it runs short of registers: see 05's "
        "profiler table), against the bandwidth it reached. The last column is the latency Little's "
        "law implies: bytes in flight over the GPU ÷ GB/s. Below the knee it is the latency a loaded "
        "memory system answers with; past it, extra bytes only wait in queues and the figure grows "
        "with them.",
        "",
    ]
    body = []
    for p in points:
        total = p["per_sm"] * sm_count
        body.append([p["chapter"], f"`{p['kernel']}`", f"{p['threads_per_sm']:.0f}", f"{p['per_thread']:.0f}",
                     kib(p["per_sm"]), f"{total / 2**20:.2f}", f"{p['gbps']:.0f}",
                     f"{100 * p['gbps'] / machine.dram_gbps:.1f}", f"{total / p['gbps']:.0f}"])
    lines += markdown_table(["Chapter", "Kernel", "threads / SM", "bytes / thread, at most", "KiB in flight / SM",
                                  "MiB in flight, GPU", "GB/s", "% of peak", "implied latency (ns)"], body)
    return lines


def chart_in_flight(path, latency, points, machine, sm_count):
    """bytes_in_flight.png: each kernel's bytes in flight per SM against its GB/s, beside the
    curve Little's law draws with the measured DRAM latency; every point named."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 6.5))
    colors = draw_in_flight(ax, latency, points, machine, sm_count)
    ax.set_xlabel("bytes in flight per SM (KiB), at most: resident threads × the bytes each may request at once")
    ax.set_ylabel("GB/s (f32 sum, n = 2^28, DRAM)")
    ax.set_title(f"{machine.gpu}: bandwidth is bytes in flight ÷ latency, until the memory is busy")
    ax.grid(True, which="both", alpha=0.25)
    label_in_flight(ax, points, colors)
    save(fig, path)


def draw_in_flight(ax, latency, points, machine, sm_count):
    """The curve, the roofs and the points of chart_in_flight; returns {chapter: colour}."""
    xs = [2 ** (k / 4) * 1024 for k in range(0, 4 * 12 + 1)]  # 1 KiB ... 4 MiB per SM
    ax.plot([x / 1024 for x in xs], [littles_law_gbps(x, latency["dram_ns"], sm_count, machine.dram_gbps)
                                     for x in xs],
            color="0.35", linewidth=1.5,
            label=f"Little's law: {sm_count} SMs × bytes ÷ {latency['dram_ns']:.0f} ns (idle DRAM latency)")
    ax.axhline(machine.dram_gbps, color="0.35", linestyle=":", linewidth=1)
    ax.axhline(machine.copy_gbps, color="0.6", linestyle="--", linewidth=1)
    ax.text(1.05, machine.dram_gbps * 1.03, f"theoretical {machine.dram_gbps:.0f} GB/s", fontsize=8, color="0.3")
    ax.text(1.05, machine.copy_gbps * 0.93, f"device copy {machine.copy_gbps:.0f} GB/s", fontsize=8, color="0.4",
            va="top")
    colors = {c: chapter_color(c, 0) for c in {p["chapter"] for p in points}}
    markers = {"03_shared": "s", "05_coarsened": "o", "07_two_pass": "^"}
    for chapter in sorted(colors):
        own = [p for p in points if p["chapter"] == chapter]
        ax.scatter([p["per_sm"] / 1024 for p in own], [p["gbps"] for p in own], color=colors[chapter],
                   marker=markers.get(chapter, "D"), s=36, zorder=3, label=chapter)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, machine.dram_gbps * 1.12)
    ax.legend(fontsize=8, loc="lower right")
    return colors


def label_in_flight(ax, points, colors):
    """Names every point, none over another label, point, line or text: each at the first free
    place around its point (place_labels), a leader line back to it where it sits apart.
    The crowded points go first, so that they take the places nearest them."""
    def crowd(p):
        x = math.log2(p["per_sm"])
        return -sum(abs(x - math.log2(q["per_sm"])) < 1 and abs(p["gbps"] - q["gbps"]) < 400 for q in points)
    ordered = sorted(points, key=lambda p: (crowd(p), -p["gbps"], p["per_sm"]))
    return place_labels(ax, [(p["per_sm"] / 1024, p["gbps"], p["kernel"].replace("reduce_", ""),
                                    colors[p["chapter"]]) for p in ordered],
                              ring_candidates(), fontsize=6.5)
