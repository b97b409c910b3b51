#!/usr/bin/env python3
"""The evidence behind the lessons, generated from one GPU run: the profiler's counters per
chapter, the load latency and what Little's law asks of a kernel, Harris's classic table beside
ours, and the measured answers to the exercises.

    lessons.py tables RESULTS_DIR          RESULTS_DIR/profile.md, bytes_in_flight.md, classic.md
                                           and the chart bytes_in_flight.png
    lessons.py readmes RESULTS_DIR ROOT    the same tables into ROOT's READMEs and solutions/*.md,
                                           between their <!-- NAME:begin --> / <!-- NAME:end -->
                                           markers (a lone <!-- solution-results:NN --> line too)

It reads, from RESULTS_DIR:
    bench.csv, machine.txt      the benchmark (results/plot.py)
    profile/kernels.csv         Nsight Compute's raw page, base units, one row per kernel
                                (scripts/profile_kernels.sh)
    profile/cases.txt           reduction_bench --profile's output: "profile case K: LABEL" lines;
                                each case's kernels follow a marker kernel of grid size K
    latency.csv                 pointer_chase's output (bench/pointer_chase.cu)

Nothing here is typed but the classic figures of other people's GPUs, each with its source.
Bad or missing input is reported in one line on stderr with exit status 2.
"""

import csv
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402

PROFILE_N = 2 ** 28          # the profiled size: f32 sums of 1 GiB, far beyond L2
MARKER = "profile_case_marker"
WARP = 32

# ---- Classic figures (other GPUs), typed from their sources ---------------------------------

# Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), the table of the seven
# kernels: 2^22 ints on a G80 (GeForce 8800 GTX), whose theoretical bandwidth is 86.4 GB/s.
HARRIS_PEAK_GBPS = 86.4
HARRIS = [  # (step, what it does, time in ms, GB/s)
    (1, "interleaved addressing, divergent branch", 8.054, 2.083),
    (2, "interleaved addressing, bank conflicts", 3.456, 4.854),
    (3, "sequential addressing", 1.722, 9.741),
    (4, "first add during the global load", 0.965, 17.377),
    (5, "unroll the last warp", 0.536, 31.289),
    (6, "completely unrolled (block size a template)", 0.381, 43.996),
    (7, "multiple elements per thread", 0.268, 62.671),
]
# A tutorial article on CUDA reductions with RTX 4090 measurements (README, Sources): its coarsened kernel on 2^20
# floats (4 MiB, inside the 4090's 72 MB L2) at 887.48 GB/s, "88 % of 1008 GB/s".
RTX4090 = {"gpu": "RTX 4090", "n": 2 ** 20, "gbps": 887.48, "peak_gbps": 1008.0, "l2_mb": 72}

# ---- Nsight Compute metrics -----------------------------------------------------------------

STALLS = ["long_scoreboard", "barrier", "membar", "short_scoreboard", "wait", "lg_throttle",
          "mio_throttle", "math_pipe_throttle", "not_selected", "selected", "branch_resolving",
          "dispatch_stall", "drain", "no_instruction", "imc_miss", "sleeping", "misc", "tex_throttle"]


def stall_metric(reason):
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


# scripts/profile_kernels.sh asks for these (those the installed ncu knows).
METRICS = [
    "gpu__time_duration.sum",
    "launch__grid_size", "launch__block_size", "launch__registers_per_thread",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "smsp__inst_executed.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__thread_inst_executed_pred_on.sum",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "smsp__sass_inst_executed_op_global_red.sum", "smsp__sass_inst_executed_op_global_atom.sum",
    "sm__warps_active.avg.per_cycle_active", "sm__warps_active.avg.pct_of_peak_sustained_active",
] + [stall_metric(r) for r in STALLS]

UNIT_SCALE = {"": 1, "byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "ns": 1e-3, "nsecond": 1e-3,
              "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6, "%": 1, "inst": 1, "warp": 1,
              "block": 1, "thread": 1, "register/thread": 1, "sector": 1, "request": 1,
              "cycle": 1, "ratio": 1}


def to_number(text, unit):
    """A raw-page value in base units -> float (time in µs, bytes in bytes); None if empty."""
    text = (text or "").strip().replace(",", "")
    if text in ("", "n/a", "N/A"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value * UNIT_SCALE.get(unit.strip().lower(), 1)


def read_cases(path):
    """profile/cases.txt -> {ordinal: label}."""
    cases = {}
    with plot.open_input(path) as f:
        for line in f:
            m = re.match(r"profile case (\d+): (\S+)", line)
            if m:
                cases[int(m.group(1))] = m.group(2)
    if not cases:
        raise plot.InputError(f"{path} has no 'profile case K: LABEL' lines")
    return cases


def read_kernels(path):
    """Nsight Compute's raw CSV (a header row, a units row, one row per kernel) ->
    [{'name': kernel name, metric: value, ...}] in launch order."""
    with plot.open_input(path) as f:
        lines = [line for line in f if not line.startswith("==")]  # ncu's own messages
    reader = csv.reader(lines)
    try:
        header = next(reader)
        units = next(reader)
    except StopIteration:
        raise plot.InputError(f"{path} has no header and units rows") from None
    if "Kernel Name" not in header:
        raise plot.InputError(f"{path} is not Nsight Compute's raw CSV (no 'Kernel Name' column)")
    name_at = header.index("Kernel Name")
    grid_at = header.index("Grid Size") if "Grid Size" in header else None
    kernels = []
    for cells in reader:
        if len(cells) != len(header):
            continue
        k = {"name": cells[name_at]}
        if grid_at is not None:  # "(K, 1, 1)": the blocks of the launch
            dims = [int(d) for d in re.findall(r"\d+", cells[grid_at])]
            k["grid_blocks"] = math.prod(dims) if dims else None
        for column, unit, cell in zip(header, units, cells):
            if column in METRICS:
                k[column] = to_number(cell, unit)
        kernels.append(k)
    if not kernels:
        raise plot.InputError(f"{path} has no kernel rows")
    return kernels


def split_cases(kernels, cases):
    """{label: [kernel, ...]}: the kernels after marker K, up to the next marker, are case K's."""
    out, current = {}, None
    for k in kernels:
        if MARKER in k["name"]:  # "red::profile_case_marker()"
            ordinal = int(k.get("launch__grid_size") or k.get("grid_blocks") or 0)
            if ordinal not in cases:
                raise plot.InputError(f"profile: marker of case {ordinal}, which cases.txt does not name")
            current = cases[ordinal]
            out[current] = []
        elif current is not None:
            out[current].append(k)
    return out


def summarize(label, kernels):
    """One profiled call -> the figures the tables show. Sums over the call's kernels for what
    is counted (bytes, instructions, conflicts, atomics, time); the main kernel's figures (the
    longest) for what is a rate or a state (occupancy, stalls, divergence)."""
    chapter, kernel, op, dtype, n = label.split("/")

    def total(metric):
        values = [k.get(metric) for k in kernels]
        return None if all(v is None for v in values) else sum(v or 0 for v in values)

    main = max(kernels, key=lambda k: k.get("gpu__time_duration.sum") or 0) if kernels else {}
    stalls = sorted(((main.get(stall_metric(r)), r) for r in STALLS if main.get(stall_metric(r)) is not None),
                    reverse=True)
    issued_stalls = [(v, r) for v, r in stalls if r != "selected"]
    sectors, requests = total("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), \
        total("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    conflicts = [total(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{x}.sum") for x in ("ld", "st")]
    atomics = [total(f"smsp__sass_inst_executed_op_global_{x}.sum") for x in ("red", "atom")]
    shared = [total(f"smsp__sass_inst_executed_op_shared_{x}.sum") for x in ("ld", "st")]
    return {
        "chapter": chapter, "kernel": kernel, "op": op, "dtype": dtype, "n": int(n),
        "kernels": len(kernels),
        "time_us": total("gpu__time_duration.sum"),
        "dram_read": total("dram__bytes_read.sum"),
        "dram_write": total("dram__bytes_write.sum"),
        "instructions": total("smsp__inst_executed.sum"),
        "threads_per_inst": main.get("smsp__thread_inst_executed_per_inst_executed.ratio"),
        # threads whose predicate is on: a branch the compiler turned into predication shows here
        "working_threads_per_inst": (main["smsp__thread_inst_executed_pred_on.sum"] / main["smsp__inst_executed.sum"]
                                     if main.get("smsp__thread_inst_executed_pred_on.sum") is not None
                                     and main.get("smsp__inst_executed.sum") else None),
        "branch_uniform_pct": main.get("smsp__sass_average_branch_targets_threads_uniform.pct"),
        "bank_conflicts": None if all(c is None for c in conflicts) else sum(c or 0 for c in conflicts),
        "conflicts_per_block": (sum(main.get(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{x}.sum") or 0
                                    for x in ("ld", "st")) / main["launch__grid_size"]
                                if main.get("launch__grid_size") else None),
        "shared_inst": None if all(s is None for s in shared) else sum(s or 0 for s in shared),
        "sectors_per_request": sectors / requests if sectors is not None and requests else None,
        "global_load_requests": requests,
        "atomics": None if all(a is None for a in atomics) else sum(a or 0 for a in atomics),
        "registers": main.get("launch__registers_per_thread"),
        "grid": main.get("launch__grid_size"),
        "warps_per_sm": main.get("sm__warps_active.avg.per_cycle_active"),
        "occupancy_pct": main.get("sm__warps_active.avg.pct_of_peak_sustained_active"),
        "top_stalls": issued_stalls[:3],
        "long_scoreboard": main.get(stall_metric("long_scoreboard")),
        "barrier_stall": main.get(stall_metric("barrier")),
    }


def load_profile(results_dir):
    folder = os.path.join(results_dir, "profile")
    cases = read_cases(os.path.join(folder, "cases.txt"))
    kernels = read_kernels(os.path.join(folder, "kernels.csv"))
    return {label: summarize(label, ks) for label, ks in split_cases(kernels, cases).items()}


# ---- Load latency and bytes in flight -------------------------------------------------------

def read_latency(path):
    """pointer_chase's CSV -> {'l2': ns, 'dram': [(region_bytes, ns), ...]}."""
    out = {"dram": []}
    with plot.open_input(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for r in rows:
        try:
            ns, region = float(r["ns_per_load"]), int(r["region_bytes"])
        except (KeyError, TypeError, ValueError):
            raise plot.InputError(f"{path}: bad row {r}") from None
        if r["pattern"] == "l2":
            out["l2"] = ns
        elif r["pattern"] == "dram":
            out["dram"].append((region, ns))
    if "l2" not in out or not out["dram"]:
        raise plot.InputError(f"{path} lacks an l2 row or dram rows")
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
        f"(a chain over {plot.binary_size(latency['dram'][0][0])}; the same chain spread over larger regions, "
        "where address translation may miss: "
        + ", ".join(f"{ns:.0f} ns at {plot.binary_size(b)}" for b, ns in latency["dram"][1:]) + ").",
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
    lines += plot.markdown_table(["Chapter", "Kernel", "threads / SM", "bytes / thread, at most", "KiB in flight / SM",
                                  "MiB in flight, GPU", "GB/s", "% of peak", "implied latency (ns)"], body)
    return lines


def chart_in_flight(path, latency, points, machine, sm_count):
    """bytes_in_flight.png: each kernel's bytes in flight per SM against its GB/s, beside the
    curve Little's law draws with the measured DRAM latency; every point named."""
    plt = plot._pyplot()
    fig, ax = plt.subplots(figsize=(10, 6.5))
    colors = draw_in_flight(ax, latency, points, machine, sm_count)
    ax.set_xlabel("bytes in flight per SM (KiB), at most: resident threads × the bytes each may request at once")
    ax.set_ylabel("GB/s (f32 sum, n = 2^28, DRAM)")
    ax.set_title(f"{machine.gpu}: bandwidth is bytes in flight ÷ latency, until the memory is busy")
    ax.grid(True, which="both", alpha=0.25)
    label_in_flight(ax, points, colors)
    plot._save(fig, path)


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
    colors = {c: plot.chapter_color(c, 0) for c in {p["chapter"] for p in points}}
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
    place around its point (plot._place_labels), a leader line back to it where it sits apart.
    The crowded points go first, so that they take the places nearest them."""
    def crowd(p):
        x = math.log2(p["per_sm"])
        return -sum(abs(x - math.log2(q["per_sm"])) < 1 and abs(p["gbps"] - q["gbps"]) < 400 for q in points)
    ordered = sorted(points, key=lambda p: (crowd(p), -p["gbps"], p["per_sm"]))
    return plot._place_labels(ax, [(p["per_sm"] / 1024, p["gbps"], p["kernel"].replace("reduce_", ""),
                                    colors[p["chapter"]]) for p in ordered],
                              plot.ring_candidates(), fontsize=6.5)


# ---- Profiler tables per chapter ------------------------------------------------------------

def fmt_bytes_ratio(value, s):
    """DRAM bytes over the input's: 4n for an f32 sum, 8n for a dot product (two vectors)."""
    per_element = 8 if s["op"] == "dot" else 4
    return "—" if value is None else f"{value / (per_element * s['n']):.2f}"


COLUMNS = {  # name: (header, function of a summary)
    "kernels": ("kernels", lambda s: f"{s['kernels']}"),
    "time": ("µs (profiled)", lambda s: "—" if s["time_us"] is None else f"{s['time_us']:.0f}"),
    "dram_read": ("DRAM read ÷ input", lambda s: fmt_bytes_ratio(s["dram_read"], s)),
    "dram_write": ("DRAM written ÷ input", lambda s: fmt_bytes_ratio(s["dram_write"], s)),
    "threads": ("active threads per instruction (of 32)",
                lambda s: "—" if s["threads_per_inst"] is None else f"{s['threads_per_inst']:.1f}"),
    "working": ("threads with the predicate on, per instruction",
                lambda s: "—" if s["working_threads_per_inst"] is None else f"{s['working_threads_per_inst']:.1f}"),
    "branch": ("uniform branches %",
               lambda s: "—" if s["branch_uniform_pct"] is None else f"{s['branch_uniform_pct']:.1f}"),
    "conflicts": ("shared bank conflicts", lambda s: "—" if s["bank_conflicts"] is None else f"{s['bank_conflicts']:,.0f}"),
    "conflicts_per_block": ("bank conflicts per block (longest kernel)",
                            lambda s: "—" if s["conflicts_per_block"] is None else f"{s['conflicts_per_block']:.1f}"),
    "shared": ("shared ld/st instructions", lambda s: "—" if s["shared_inst"] is None else f"{s['shared_inst']:,.0f}"),
    "sectors": ("sectors per load request",
                lambda s: "—" if s["sectors_per_request"] is None else f"{s['sectors_per_request']:.1f}"),
    "load_requests": ("global load instructions",
                      lambda s: "—" if s["global_load_requests"] is None else f"{s['global_load_requests']:,.0f}"),
    "atomics": ("global atomics", lambda s: "—" if s["atomics"] is None else f"{s['atomics']:,.0f}"),
    "registers": ("registers", lambda s: "—" if s["registers"] is None else f"{s['registers']:.0f}"),
    "occupancy": ("achieved occupancy %", lambda s: "—" if s["occupancy_pct"] is None else f"{s['occupancy_pct']:.0f}"),
    "long_scoreboard": ("long-scoreboard stall",
                        lambda s: "—" if s["long_scoreboard"] is None else f"{s['long_scoreboard']:.2f}"),
    "stalls": ("top stalls (warps per issue)",
               lambda s: ", ".join(f"{r.replace('_', ' ')} {v:.1f}" for v, r in s["top_stalls"]) or "—"),
}

# Per chapter: which profiled kernels its table shows (the chapter before it first, then its own,
# variants included) and the counters its idea moves.
CHAPTER_PROFILE = {
    "01_naive": (["01_naive"], ["kernels", "dram_read", "dram_write", "threads", "working", "branch", "time"]),
    "02_convergent": (["01_naive", "02_convergent"],
                      ["kernels", "dram_read", "dram_write", "threads", "working", "branch", "stalls", "time"]),
    "03_shared": (["02_convergent", "03_shared", "solution_03"],
                  ["kernels", "dram_read", "dram_write", "working", "conflicts", "stalls", "time"]),
    "04_multiblock_atomic": (["03_shared:reduce_shared", "04_multiblock_atomic"],
                             ["kernels", "dram_read", "atomics", "occupancy", "stalls", "time"]),
    "05_coarsened": (["04_multiblock_atomic", "05_coarsened"],
                     ["atomics", "registers", "occupancy", "long_scoreboard", "stalls", "time"]),
    "06_warp_shuffle": (["05_coarsened:reduce_coarsened", "06_warp_shuffle"],
                        ["shared", "registers", "occupancy", "stalls", "time"]),
    "07_two_pass": (["06_warp_shuffle", "07_two_pass"],
                    ["kernels", "load_requests", "sectors", "registers", "occupancy", "long_scoreboard", "stalls",
                     "time"]),
    "08_dot_product": (["08_dot_product"],
                       ["kernels", "dram_read", "load_requests", "sectors", "registers", "occupancy", "stalls", "time"],
                       "dot"),
    "09_cub_comparison": (["07_two_pass:reduce_two_pass", "09_cub_comparison"],
                          ["kernels", "load_requests", "sectors", "registers", "occupancy", "stalls", "time"]),
    "10_single_pass": (["07_two_pass:reduce_two_pass", "10_single_pass"],
                       ["kernels", "atomics", "registers", "occupancy", "stalls", "time"]),
}
# The exercises whose answer is a profile: 03's conflicts, beside the lesson.
SOLUTION_PROFILE = {
    "03": (["03_shared:reduce_shared", "03_shared:harris2_interleaved_bank_conflicts", "solution_03"],
           ["conflicts", "conflicts_per_block", "working", "stalls", "time"]),
}


def profile_rows_for(profile, selectors, op="sum"):
    """Summaries of f32 `op` at PROFILE_N named by selectors ('chapter' or 'chapter:kernel'), in
    selector order, each chapter's lesson first, then its variants in the order of their settings."""
    chosen = []
    for sel in selectors:
        chapter, _, kernel = sel.partition(":")
        own = [s for s in profile.values() if s["chapter"] == chapter and (not kernel or s["kernel"] == kernel)
               and s["op"] == op and s["dtype"] == "f32" and s["n"] == PROFILE_N]
        chosen += sorted(own, key=lambda s: (bool(s["variant_of"]), plot.is_baseline(s["kernel"]),
                                             s["params"].get("step", 0), sorted(s["params"].items()), s["kernel"]))
    return chosen


def chapter_profile_table(profile, chapter):
    return profile_table(profile, *CHAPTER_PROFILE[chapter])


def profile_table(profile, selectors, columns, op="sum"):
    rows = profile_rows_for(profile, selectors, op)
    if not rows:
        return None
    header = ["Chapter", "Kernel"] + [COLUMNS[c][0] for c in columns]
    body = [[s["chapter"], f"`{s['kernel']}`"] + [COLUMNS[c][1](s) for c in columns] for s in rows]
    return plot.markdown_table(header, body)


PROFILE_NOTE = ("Nsight Compute, one call of an f32 sum (08: an f32 dot product) of n = 2^28 (L2 emptied first), "
                "every kernel of the call (`scripts/profile_kernels.sh`; raw counters in "
                "[`profile/kernels.csv`](profile/kernels.csv)). Counts (bytes, instructions, conflicts, "
                "atomics, µs) add up the call's kernels; rates and states (threads per instruction, "
                "occupancy, stalls) are the longest kernel's. DRAM bytes are divided by the input's "
                "bytes (4n; 8n for a dot product's two vectors). A stall figure is the average number of warps waiting for that reason per "
                "issued instruction; the profiler's clocks are its own, so its µs are not the "
                "benchmark's.")


# ---- Classic tables -------------------------------------------------------------------------

def classic_section(rows, machine):
    i32 = {(r["chapter"], r["kernel"], r["n"]): r for r in rows if r["op"] == "sum" and r["dtype"] == "i32"}
    steps = {int(r["params"]["harris_step"]): (r["chapter"], r["kernel"]) for r in rows
             if "harris_step" in r["params"]}
    small, large = 2 ** 22, 2 ** 28

    def cells(key, n):
        r = i32.get(key + (n,)) if key else None
        if not r:
            return ["—", "—"]
        star = "*" if r["l2_resident"] else ""
        return [f"{r['gbps']:.0f}{star}", f"{r['pct_peak']:.1f}{star}"]

    body = []
    for step, what, ms, gbps in HARRIS:
        key = steps.get(step)
        body.append([f"{step}. {what}", f"`{key[1]}`" if key else "—", f"{ms:.3f}", f"{gbps:.3f}",
                     f"{100 * gbps / HARRIS_PEAK_GBPS:.1f}"] + cells(key, small) + cells(key, large))
    header = ["Harris's kernel", "rebuilt here", "G80 ms", "G80 GB/s", "% of 86.4",
              f"H200 GB/s, n = 2^22", "% of peak", "H200 GB/s, n = 2^28", "% of peak"]
    lines = plot.markdown_table(header, body)
    lines += ["", f"\\* L2-resident on the {machine.gpu}: 2^22 ints are 16 MiB, inside its "
                  f"{plot.binary_size(machine.l2_bytes)} of L2, so these are L2 figures; Harris's G80 had no "
                  f"L2 at all. The n = 2^28 columns (1 GiB) are DRAM figures. % of peak: of each GPU's "
                  f"own theoretical DRAM bandwidth ({HARRIS_PEAK_GBPS} GB/s; {machine.dram_gbps:.0f} GB/s).", ""]
    # This project's chapters on the same i32 sums.
    leads = [(c, k) for c, k in {(r["chapter"], r["kernel"]) for r in rows if r["dtype"] == "i32"}
             if not re.match(r"solution_", c)]
    leads = [key for key in sorted(leads) if not any(
        r["variant_of"] for r in rows if (r["chapter"], r["kernel"]) == key)]
    body = [[c, f"`{k}`"] + cells((c, k), small) + cells((c, k), large) for c, k in leads]
    lines += ["The chapters on the same i32 sums:", ""]
    lines += plot.markdown_table(["Chapter", "Kernel", "GB/s, n = 2^22", "% of peak", "GB/s, n = 2^28",
                                  "% of peak"], body)
    # The RTX 4090 article's L2-resident figure beside ours at the same n.
    f32 = {(r["chapter"], r["kernel"], r["n"]): r for r in rows if r["op"] == "sum" and r["dtype"] == "f32"}
    ours = [f32.get(("05_coarsened", "reduce_coarsened", n)) for n in (RTX4090["n"], large)]
    if all(ours):
        lines += ["", f"A popular tutorial's {RTX4090['gpu']} figure: its coarsened kernel on 2^20 floats reached "
                      f"{RTX4090['gbps']} GB/s, {100 * RTX4090['gbps'] / RTX4090['peak_gbps']:.0f} % of the card's "
                      f"{RTX4090['peak_gbps']:.0f} GB/s; but 4 MiB sit in its {RTX4090['l2_mb']} MB L2, so that is "
                      f"an L2 figure. Chapter 05 here: {ours[0]['gbps']:.0f} GB/s at 2^20 (L2-resident, "
                      f"{ours[0]['pct_peak']:.1f} % of peak: a call that short is mostly launch and tail) and "
                      f"{ours[1]['gbps']:.0f} GB/s at 2^28 from DRAM ({ours[1]['pct_peak']:.1f} %)."]
    return lines


# ---- Solutions ------------------------------------------------------------------------------

def solution_table(rows, number):
    """The solution's rows (chapter solution_NN) beside the lesson kernel they change, at the
    same op, dtype and n."""
    own = [r for r in rows if r["chapter"] == f"solution_{number}"]
    if not own:
        return None
    lessons = {(r["kernel"], r["op"], r["dtype"], r["n"]): r for r in rows
               if r["chapter"].startswith(number + "_") and not r["variant_of"]}
    body = []
    for r in sorted(own, key=lambda r: (r["op"], r["dtype"], r["n"], sorted(r["params"].items()), r["kernel"])):
        base = lessons.get((r["variant_of"], r["op"], r["dtype"], r["n"]))
        params = ", ".join(f"{k}={v:g}" for k, v in sorted(r["params"].items())) or "—"
        def one_call(row):
            return f"{row['latency_us']:.2f}" if row and row["latency_us"] else "—"
        body.append([f"`{r['kernel']}`", params, r["op"], r["dtype"], plot.pow2_label(r["n"]),
                     f"{r['time_us']:.2f}", one_call(r), f"{r['gbps']:.0f}",
                     f"{base['time_us']:.2f}" if base else "—", one_call(base),
                     f"{base['time_us'] / r['time_us']:.2f}" if base else "—"])
    lesson = own[0]["variant_of"]
    return plot.markdown_table(["Kernel", "settings", "op", "dtype", "n", "µs per call, back to back",
                                "µs, one call", "GB/s", f"`{lesson}`: µs back to back", "µs, one call",
                                "speed-up (back to back)"], body, text_columns=5)


def single_pass_table(rows):
    """09's exercise: a single pass with atomics (chapter 06's kernel) against CUB's two passes,
    f32 sum, back to back and one call from idle."""
    at = {(r["chapter"], r["kernel"], r["n"]): r for r in rows if r["op"] == "sum" and r["dtype"] == "f32"}
    body = []
    for n in (2 ** 10, 2 ** 14, 2 ** 20, 2 ** 24, 2 ** 28):
        one = at.get(("06_warp_shuffle", "reduce_warp_shuffle", n))
        cub = at.get(("09_cub_comparison", "cub_sum", n))
        if not one or not cub:
            continue
        body.append([plot.pow2_label(n), "L2-resident" if one["l2_resident"] else "DRAM",
                     f"{one['time_us']:.2f}", f"{cub['time_us']:.2f}", f"{cub['time_us'] / one['time_us']:.2f}",
                     f"{one['latency_us']:.2f}" if one["latency_us"] else "—",
                     f"{cub['latency_us']:.2f}" if cub["latency_us"] else "—",
                     f"{cub['latency_us'] / one['latency_us']:.2f}" if one["latency_us"] and cub["latency_us"] else "—"])
    if not body:
        return None
    return plot.markdown_table(["n", "memory", "µs, 06 back to back", "µs, CUB back to back", "CUB ÷ 06",
                                "µs, 06 one call", "µs, CUB one call", "CUB ÷ 06"], body)


# ---- Commands -------------------------------------------------------------------------------

def build_all(results_dir):
    rows, machine = plot.load_results(results_dir)
    sm_count = machine_sm_count(os.path.join(results_dir, "machine.txt"))
    profile = load_profile(results_dir)
    known = {(r["chapter"], r["kernel"]): r for r in rows}
    for s in profile.values():  # what the benchmark says the kernel is: lessons first, variants by setting
        r = known.get((s["chapter"], s["kernel"]))
        s["variant_of"], s["params"] = (r["variant_of"], r["params"]) if r else ("", {})
    latency = read_latency(os.path.join(results_dir, "latency.csv"))
    points = in_flight_points(profile, rows)
    sections = {"inflight": in_flight_section(latency, points, machine, sm_count),
                "classic": classic_section(rows, machine)}
    for chapter in CHAPTER_PROFILE:
        table = chapter_profile_table(profile, chapter)
        if table:
            sections["profile:" + chapter] = table
    for number in ("03", "04", "05", "06", "07", "08"):
        table = solution_table(rows, number)
        if table:
            sections["solution-results:" + number] = table
    for number, spec in SOLUTION_PROFILE.items():
        table = profile_table(profile, *spec)
        if table:
            sections["solution-profile:" + number] = table
    # 02's exercise is the profiler's traffic count; 09's, a single pass against CUB's two.
    if "profile:02_convergent" in sections:
        sections["solution-results:02"] = sections["profile:02_convergent"]
    table = single_pass_table(rows)
    if table:
        sections["solution-results:09"] = table
    return rows, machine, sm_count, profile, latency, points, sections


def machine_sm_count(path):
    with plot.open_input(path) as f:
        for line in f:
            if line.startswith("sm_count:"):
                return int(line.split(":", 1)[1])
    raise plot.InputError(f"{path} lacks 'sm_count:'")


def write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip() + "\n")


def command_tables(results_dir):
    rows, machine, sm_count, profile, latency, points, sections = build_all(results_dir)
    head = "Generated by `results/lessons.py tables` from this folder's files; do not edit by hand."
    profile_lines = [f"# Profiler counters per chapter: {machine.gpu}", "", head, "", PROFILE_NOTE, ""]
    for chapter in CHAPTER_PROFILE:
        if "profile:" + chapter in sections:
            profile_lines += [f"## {chapter}", ""] + sections["profile:" + chapter] + [""]
    write(os.path.join(results_dir, "profile.md"), profile_lines)
    write(os.path.join(results_dir, "bytes_in_flight.md"),
          [f"# Bytes in flight: {machine.gpu}", "", head, "", "![Bandwidth against bytes in flight per SM]"
           "(bytes_in_flight.png)", ""] + sections["inflight"])
    write(os.path.join(results_dir, "classic.md"),
          [f"# Harris's table beside this tutorial: {machine.gpu}", "", head, ""] + sections["classic"])
    chart_in_flight(os.path.join(results_dir, "bytes_in_flight.png"), latency, points, machine, sm_count)
    print(f"wrote profile.md, bytes_in_flight.md, classic.md and bytes_in_flight.png in {results_dir}")


def relink(lines, results_dir, folder):
    """Links relative to results_dir -> relative to folder (a README elsewhere in the tree)."""
    prefix = os.path.relpath(os.path.abspath(results_dir), os.path.abspath(folder)).replace(os.sep, "/")
    return [re.sub(r"\]\((?!https?:|#|\.\./|/)([^)]+)\)", lambda m: f"]({prefix}/{m.group(1)})", line)
            for line in lines]


def replace_block(text, name, body):
    """Replaces the block between <!-- name:begin --> and <!-- name:end -->, or a lone
    <!-- name --> line, with the marked body. None when the text has neither."""
    begin, end, lone = f"<!-- {name}:begin -->", f"<!-- {name}:end -->", f"<!-- {name} -->"
    block = "\n".join([begin] + body + [end])
    if begin in text and end in text:
        i, j = text.index(begin), text.index(end) + len(end)
        return text[:i] + block + text[j:]
    if lone in text:
        return text.replace(lone, block)
    return None


def command_readmes(results_dir, root):
    *_, sections = build_all(results_dir)
    targets = [(os.path.join(root, "README.md"), ["inflight", "classic"])]
    targets += [(os.path.join(root, c, "README.md"), ["profile:" + c]) for c in CHAPTER_PROFILE]
    solutions = os.path.join(root, "solutions")
    if os.path.isdir(solutions):
        for name in sorted(os.listdir(solutions)):
            m = re.match(r"(\d\d)_.*\.md$", name)
            if m:
                targets.append((os.path.join(solutions, name),
                                ["solution-results:" + m.group(1), "solution-profile:" + m.group(1)]))
    changed = []
    for path, names in targets:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name in names:
            if name not in sections:
                continue
            lines = relink(sections[name], results_dir, os.path.dirname(path))
            new = replace_block(text, name, ["", f"Generated by `results/lessons.py readmes` from "
                                             f"`{os.path.relpath(results_dir, root)}`; do not edit by hand.",
                                             ""] + lines + [""])
            if new is not None:
                text = new
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                changed.append(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    print(f"updated {len(changed)} file(s)" + "".join(f"\n  {p}" for p in changed))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        if len(argv) == 2 and argv[0] == "tables":
            command_tables(argv[1])
        elif len(argv) == 3 and argv[0] == "readmes":
            command_readmes(argv[1], argv[2])
        else:
            print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
            return 2
    except plot.InputError as e:
        print(f"lessons.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
