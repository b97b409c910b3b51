"""Nsight Compute's counters: the profiled cases read from profile/kernels.csv and cases.txt, summed
per case, and the per-chapter profiler tables (profile.md and the READMEs' "What the profiler
counts")."""

import csv
import math
import os
import re

from tools.schema import InputError, is_baseline, open_input
from tools.tables import markdown_table


PROFILE_N = 2 ** 28          # the profiled size: f32 sums of 1 GiB, far beyond L2
MARKER = "profile_case_marker"
WARP = 32

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
    with open_input(path) as f:
        for line in f:
            m = re.match(r"profile case (\d+): (\S+)", line)
            if m:
                cases[int(m.group(1))] = m.group(2)
    if not cases:
        raise InputError(f"{path} has no 'profile case K: LABEL' lines")
    return cases


def read_kernels(path):
    """Nsight Compute's raw CSV (a header row, a units row, one row per kernel) ->
    [{'name': kernel name, metric: value, ...}] in launch order."""
    with open_input(path) as f:
        lines = [line for line in f if not line.startswith("==")]  # ncu's own messages
    reader = csv.reader(lines)
    try:
        header = next(reader)
        units = next(reader)
    except StopIteration:
        raise InputError(f"{path} has no header and units rows") from None
    if "Kernel Name" not in header:
        raise InputError(f"{path} is not Nsight Compute's raw CSV (no 'Kernel Name' column)")
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
        raise InputError(f"{path} has no kernel rows")
    return kernels


def split_cases(kernels, cases):
    """{label: [kernel, ...]}: the kernels after marker K, up to the next marker, are case K's."""
    out, current = {}, None
    for k in kernels:
        if MARKER in k["name"]:  # "red::profile_case_marker()"
            ordinal = int(k.get("launch__grid_size") or k.get("grid_blocks") or 0)
            if ordinal not in cases:
                raise InputError(f"profile: marker of case {ordinal}, which cases.txt does not name")
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
        chosen += sorted(own, key=lambda s: (bool(s["variant_of"]), is_baseline(s["kernel"]),
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
    return markdown_table(header, body)


PROFILE_NOTE = ("Nsight Compute, one call of an f32 sum (08: an f32 dot product) of n = 2^28 (L2 emptied first), "
                "every kernel of the call (`scripts/profile_kernels.sh`; raw counters in "
                "[`profile/kernels.csv`](profile/kernels.csv)). Counts (bytes, instructions, conflicts, "
                "atomics, µs) add up the call's kernels; rates and states (threads per instruction, "
                "occupancy, stalls) are the longest kernel's. DRAM bytes are divided by the input's "
                "bytes (4n; 8n for a dot product's two vectors). A stall figure is the average number of warps waiting for that reason per "
                "issued instruction; the profiler's clocks are its own, so its µs are not the "
                "benchmark's.")
