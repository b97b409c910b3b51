"""The evidence behind the lessons, generated from one GPU run: the profiler's counters per
chapter, the load latency and what Little's law asks of a kernel, Harris's classic table beside
ours, and the measured answers to the exercises.

    lessons tables RESULTS_DIR          RESULTS_DIR/profile.md, bytes_in_flight.md, classic.md
                                        and the chart bytes_in_flight.png
    lessons readmes RESULTS_DIR ROOT    the same tables into ROOT's READMEs and solutions/*.md,
                                        between their <!-- NAME:begin --> / <!-- NAME:end -->
                                        markers (a lone <!-- solution-results:NN --> line too)

It reads, from RESULTS_DIR:
    bench.csv, machine.txt      the benchmark (python3 -m tools csv)
    profile/kernels.csv         Nsight Compute's raw page, base units, one row per kernel
                                (scripts/profile_kernels.sh)
    profile/cases.txt           reduction_bench --profile's output: "profile case K: LABEL" lines;
                                each case's kernels follow a marker kernel of grid size K
    latency.csv                 pointer_chase's output (bench/pointer_chase.cu)

Nothing here is typed but the classic figures of other people's GPUs, each with its source.
Bad or missing input is reported in one line on stderr with exit status 2."""

import os
import re
import sys

from tools.littles_law import chart_in_flight, in_flight_points, in_flight_section, read_latency
from tools.profile import (CHAPTER_PROFILE, PROFILE_NOTE, SOLUTION_PROFILE, chapter_profile_table,
                           load_profile, profile_table)
from tools.results import load_results
from tools.schema import InputError, binary_size, open_input, pow2_label
from tools.tables import markdown_table


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
    lines = markdown_table(header, body)
    lines += ["", f"\\* L2-resident on the {machine.gpu}: 2^22 ints are 16 MiB, inside its "
                  f"{binary_size(machine.l2_bytes)} of L2, so these are L2 figures; Harris's G80 had no "
                  f"L2 at all. The n = 2^28 columns (1 GiB) are DRAM figures. % of peak: of each GPU's "
                  f"own theoretical DRAM bandwidth ({HARRIS_PEAK_GBPS} GB/s; {machine.dram_gbps:.0f} GB/s).", ""]
    # This project's chapters on the same i32 sums.
    leads = [(c, k) for c, k in {(r["chapter"], r["kernel"]) for r in rows if r["dtype"] == "i32"}
             if not re.match(r"solution_", c)]
    leads = [key for key in sorted(leads) if not any(
        r["variant_of"] for r in rows if (r["chapter"], r["kernel"]) == key)]
    body = [[c, f"`{k}`"] + cells((c, k), small) + cells((c, k), large) for c, k in leads]
    lines += ["The chapters on the same i32 sums:", ""]
    lines += markdown_table(["Chapter", "Kernel", "GB/s, n = 2^22", "% of peak", "GB/s, n = 2^28",
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
        body.append([f"`{r['kernel']}`", params, r["op"], r["dtype"], pow2_label(r["n"]),
                     f"{r['time_us']:.2f}", one_call(r), f"{r['gbps']:.0f}",
                     f"{base['time_us']:.2f}" if base else "—", one_call(base),
                     f"{base['time_us'] / r['time_us']:.2f}" if base else "—"])
    lesson = own[0]["variant_of"]
    return markdown_table(["Kernel", "settings", "op", "dtype", "n", "µs per call, back to back",
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
        body.append([pow2_label(n), "L2-resident" if one["l2_resident"] else "DRAM",
                     f"{one['time_us']:.2f}", f"{cub['time_us']:.2f}", f"{cub['time_us'] / one['time_us']:.2f}",
                     f"{one['latency_us']:.2f}" if one["latency_us"] else "—",
                     f"{cub['latency_us']:.2f}" if cub["latency_us"] else "—",
                     f"{cub['latency_us'] / one['latency_us']:.2f}" if one["latency_us"] and cub["latency_us"] else "—"])
    if not body:
        return None
    return markdown_table(["n", "memory", "µs, 06 back to back", "µs, CUB back to back", "CUB ÷ 06",
                                "µs, 06 one call", "µs, CUB one call", "CUB ÷ 06"], body)


# ---- Commands -------------------------------------------------------------------------------

def build_all(results_dir):
    rows, machine = load_results(results_dir)
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
    with open_input(path) as f:
        for line in f:
            if line.startswith("sm_count:"):
                return int(line.split(":", 1)[1])
    raise InputError(f"{path} lacks 'sm_count:'")


def write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip() + "\n")


def command_tables(results_dir):
    rows, machine, sm_count, profile, latency, points, sections = build_all(results_dir)
    head = "Generated by `python3 -m tools lessons tables` from this folder's files; do not edit by hand."
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
            new = replace_block(text, name, ["", f"Generated by `python3 -m tools lessons readmes` from "
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


def main(argv):
    """argv: the job's arguments, after "lessons"."""
    try:
        if len(argv) == 2 and argv[0] == "tables":
            command_tables(argv[1])
        elif len(argv) == 3 and argv[0] == "readmes":
            command_readmes(argv[1], argv[2])
        else:
            print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
            return 2
    except InputError as e:
        print(f"lessons: {e}", file=sys.stderr)
        return 2
    return 0
