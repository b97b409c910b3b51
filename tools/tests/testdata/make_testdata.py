#!/usr/bin/env python3
"""Writes the synthetic inputs of the jobs' tests (tools/tests/fixtures.py): bench.json (shaped like
Google Benchmark's JSON output of reduction_bench), machine.txt (an H200-like description) and batched.json
(a small run of chapter 11's batched reductions, with a few flat rows and the floor beside them).

The numbers come from a simple model, time = launch latency + bytes / bandwidth, with a higher
bandwidth while the input fits in L2, and a one-call latency 2.5 µs above it; where the input
fits in L2, calls in a loop take the longer of that time and the host's dispatch of their
launches, and in a CUDA graph a little less than that time per launch. They are plausible, not
measured. An empty kernel, timed the same ways, is the floor. What each kernel is, the
benchmark says as it does (common/bench.cpp): the label "variant of K" and a counter param_<key>
per setting. Rerun after changing it:

    python3 tools/tests/testdata/make_testdata.py tools/tests/testdata
"""

import json
import os
import sys

MACHINE = {"gpu": "NVIDIA H200", "dram_gbps": 4800.0, "copy_gbps": 4020.5,
           "l2_bytes": 62914560, "fp32_gflops": 66908.2, "sm_count": 132}
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
SIZES = [2 ** 10, 2 ** 14, 2 ** 20, 2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30]
SUM_MAX = [("sum", "f32"), ("max", "f32")]
DOT_ALL = [("dot", "f32"), ("dot", "bf16")]
TWO_PASS = {"early_launch": 1, "fixed_grid": 1, "l2_prefetch": 0, "unroll": 8, "vector_bytes": 16}
SINGLE_PASS = {"atomic_ref": 1, "grid_sync": 0, "cooperative_groups": 1, "programmatic_launch": 1}
DISPATCH_US = 2.2     # the host's dispatch of one launch, in a loop of calls
GRAPH_SAVING_US = 0.8  # per launch, what a CUDA graph takes off the steady-state time
# The empty kernel's times (common/bench.cpp, register_floor).
FLOOR = {"time_us": 1.6, "time_p10_us": 1.55, "time_p90_us": 1.7, "latency_us": 4.1,
         "b2b_us": 2.2, "graph_us": 1.1}


def kernel(chapter, name, sections, fraction, latency_us, sizes=SIZES, variant_of="", launches=1,
           graph=True, **params):
    """fraction: of the copy bandwidth reached; latency_us: the launch latency; launches: kernels
    per call; graph: False for a call that cannot be captured (no graph_us)."""
    return dict(chapter=chapter, kernel=name, sections=sections, fraction=fraction,
                latency_us=latency_us, sizes=sizes, variant_of=variant_of, launches=launches,
                graph=graph, params=params)


KERNELS = [
    kernel("01_naive", "reduce_naive", SUM_MAX, 0.08, 6.0),
    kernel("02_convergent", "reduce_convergent", SUM_MAX, 0.20, 6.0),
    kernel("03_shared", "reduce_shared", SUM_MAX, 0.40, 5.0),
    kernel("04_multiblock_atomic", "reduce_atomic", SUM_MAX, 0.25, 4.0),
    kernel("05_coarsened", "reduce_coarsened", SUM_MAX + [("sum", "f16"), ("sum", "bf16")],
           0.86, 4.0, coarsening=16),
    kernel("06_warp_shuffle", "reduce_warp_shuffle", [("sum", "f32")], 0.91, 3.5, block=256),
    kernel("07_two_pass", "reduce_two_pass", [("sum", "f32"), ("argmax", "f32")], 0.93, 3.0,
           launches=2, **TWO_PASS),
    # 08's kernels are the steps of one lesson, registered here out of their order: the tables
    # order them by param step, not by name, position or another param.
    kernel("08_dot_product", "dot_two_pass", DOT_ALL, 0.90, 4.0, atomics=0, step=4),
    kernel("08_dot_product", "dot_shared", [("dot", "f32")], 0.40, 5.0, atomics=0, step=1),
    kernel("08_dot_product", "dot_fma", [("dot", "f32")], 0.85, 4.0, atomics=1, step=3),
    kernel("08_dot_product", "dot_coarsened", [("dot", "f32")], 0.84, 4.0, atomics=1, step=2),
    kernel("08_dot_product", "cublas_sdot", [("dot", "f32")], 0.84, 5.0),
    kernel("08_dot_product", "cub_transform_reduce", DOT_ALL, 0.80, 5.0),
    kernel("09_cub_comparison", "cub_sum", [("sum", "f32")], 0.92, 5.0, launches=2),
    kernel("09_cub_comparison", "cub_max", [("max", "f32")], 0.92, 5.0),
    kernel("09_cub_comparison", "cub_argmax", [("argmax", "f32")], 0.72, 5.0),
    # CUB's own Max and ArgMax as shipped: the yardstick for max and argmax (plot.baseline_for)
    kernel("09_cub_comparison", "cub_max_builtin", [("max", "f32")], 0.92, 5.0),
    kernel("09_cub_comparison", "cub_argmax_builtin", [("argmax", "f32")], 0.90, 5.0),
    kernel("09_cub_comparison", "cub_transform_reduce", [("sum", "f16"), ("sum", "bf16")], 0.85, 5.0),
    kernel("10_single_pass", "reduce_single_pass", [("sum", "f32"), ("argmax", "f32")], 0.93, 2.6,
           **SINGLE_PASS),
]
# 05's sweep of its coarsening factor, at one L2 and one DRAM size only.
KERNELS += [kernel("05_coarsened", f"reduce_coarsened_x{c}", [("sum", "f32")], fraction, 4.0,
                   [2 ** 20, 2 ** 28], "reduce_coarsened", coarsening=c)
            for c, fraction in ((64, 0.83), (1, 0.45), (8, 0.80))]
# 07's variants, each with one setting changed from the lesson's, from 2^20 on; pass 2 launched
# the ordinary way at small sizes only, where launches count.
KERNELS += [kernel("07_two_pass", name, [("sum", "f32")], fraction, 3.0, [2 ** 20, 2 ** 28],
                   "reduce_two_pass", **dict(TWO_PASS, **change))
            for name, fraction, change in (
                ("reduce_two_pass_unroll16", 0.92, {"unroll": 16}),
                ("reduce_two_pass_unroll4", 0.91, {"unroll": 4}),
                ("reduce_two_pass_unroll8_l2prefetch", 0.85, {"l2_prefetch": 1}),
                ("reduce_two_pass_scalar_loads", 0.70, {"vector_bytes": 4, "unroll": 32}),
                ("reduce_two_pass_growing_grid", 0.90, {"fixed_grid": 0}))]
KERNELS.append(kernel("07_two_pass", "reduce_two_pass_plain_launch", [("sum", "f32")], 0.93, 4.5,
                      [2 ** 10, 2 ** 14], "reduce_two_pass", launches=2,
                      **dict(TWO_PASS, early_launch=0)))
# 10's variants, each with one choice changed, at every size; the grid-wide barrier's call is
# the one left uncaptured.
KERNELS += [kernel("10_single_pass", f"reduce_single_pass_{name}", [("sum", "f32")], fraction,
                   latency_us, SIZES, "reduce_single_pass", graph=name != "grid_sync",
                   **dict(SINGLE_PASS, **change))
            for name, fraction, latency_us, change in (
                ("plain_launch", 0.93, 3.0, {"programmatic_launch": 0}),
                ("threadfence", 0.92, 2.7, {"atomic_ref": 0}),
                ("handwritten_shuffles", 0.93, 2.6, {"cooperative_groups": 0}),
                ("grid_sync", 0.90, 3.4, {"grid_sync": 1}))]

# The one run that fails its correctness check, as SkipWithError reports it.
FAILED = ("02_convergent", "reduce_convergent", "sum", "f32", 2 ** 26)
# CUB's max is not measured at 2^10, so 01_naive's max row there has no ratio to CUB.
MISSING = {("cub_max", 2 ** 10), ("cub_max_builtin", 2 ** 10)}


def entry(index, k, op, dtype, n):
    name = f"{k['chapter']}/{k['kernel']}/{op}/{dtype}/{n}/iterations:1/manual_time"
    common = {"name": name, "family_index": index, "per_family_instance_index": 0,
              "run_name": name, "run_type": "iteration", "repetitions": 1,
              "repetition_index": 0, "threads": 1, "iterations": 1}
    if (k["chapter"], k["kernel"], op, dtype, n) == FAILED:
        return dict(common, error_occurred=True,
                    error_message="wrong result: 1.0e+08 differs from the reference by 3.2e+02",
                    real_time=0.0, cpu_time=0.0, time_unit="us")
    input_bytes = n * ELEMENT_BYTES[dtype] * (2 if op == "dot" else 1)
    nbytes = input_bytes + (8 if op == "argmax" else 4)
    bandwidth = k["fraction"] * MACHINE["copy_gbps"] * (1.6 if input_bytes <= MACHINE["l2_bytes"] else 1.0)
    time_us = k["latency_us"] + nbytes / (bandwidth * 1e3)
    latency_us = time_us + 2.5  # one call from idle: the host's dispatch on top
    gbps = nbytes / (time_us * 1e3)
    reps = 200 if input_bytes <= 64 << 20 else 100 if input_bytes <= 1 << 30 else 60
    resident = input_bytes <= MACHINE["l2_bytes"]
    out = dict(common, real_time=time_us, cpu_time=time_us + 2.0, time_unit="us",
               bytes_per_second=nbytes / (time_us * 1e-6), n=float(n), bytes=float(nbytes),
               time_us=time_us, time_p10_us=0.97 * time_us, time_p90_us=1.05 * time_us,
               latency_us=latency_us, gbps=gbps, pct_peak=100.0 * gbps / MACHINE["dram_gbps"],
               l2_resident=1.0 if resident else 0.0, reps=float(reps))
    if resident:  # calls in a loop and in a graph: timed where launches matter only
        out["b2b_us"] = max(time_us, DISPATCH_US * k["launches"])
        if k["graph"]:
            out["graph_us"] = time_us - GRAPH_SAVING_US * k["launches"]
    if k["variant_of"]:
        out["label"] = "variant of " + k["variant_of"]
    out.update({"param_" + key: float(value) for key, value in k["params"].items()})
    return out


# Chapter 11: many reductions at once, in the benchmark's names and counters (layout_id,
# segments, length; param_heavy on every segments row, param_strategy_id on the rows' kernels).
# The rows' mappings at four lengths of one n: each mapping's fraction of the copy bandwidth,
# high where it suits the length; the lesson's automatic choice runs the one its plan picks, a
# little slower than that mapping forced (its variant), so that the variant is the fastest.
BATCHED_N = 2 ** 24
ROW_LENGTHS = [4, 256, 16384, 2 ** 20]
ROW_MAPPINGS = {"thread_per_row": (1, [0.80, 0.10, 0.01, 0.005]),
                "group_per_row": (2, [0.55, 0.88, 0.60, 0.05]),
                "block_per_row": (3, [0.05, 0.40, 0.93, 0.12]),
                "blocks_per_row": (4, [0.04, 0.30, 0.90, 0.92])}
AUTOMATIC = ["thread_per_row", "group_per_row", "block_per_row", "blocks_per_row"]
LAYOUT_IDS = {"rows": 1, "columns": 2, "segments": 3}
# The flat rows beside them: CUB's sum and chapter 10's, at one L2 and one DRAM size.
BATCHED_FLAT = [kernel("09_cub_comparison", "cub_sum", [("sum", "f32")], 0.92, 5.0,
                       [2 ** 20, 2 ** 28], launches=2),
                kernel("10_single_pass", "reduce_single_pass", [("sum", "f32")], 0.93, 2.6,
                       [2 ** 20, 2 ** 28], **SINGLE_PASS)]


def batched_case(name, layout, segments, length, fraction, sections=(("sum", "f32"),),
                 variant_of="", heavy=None, **params):
    """One kernel at one shape: the kernel() record, and the shape's counters and label."""
    if heavy is not None:
        params["heavy"] = heavy
    shape = (f"segments_{segments}_{'heavy' if heavy else 'uniform'}" if layout == "segments"
             else f"{layout}_{segments}x{length}")
    counters = {"layout_id": float(LAYOUT_IDS[layout]), "segments": float(segments),
                "length": float(length)}
    chapter = "12_segmented" if layout == "segments" else "11_batched"
    return (kernel(chapter, name, list(sections), fraction, 3.0, variant_of=variant_of,
                   **params), segments * length, shape, counters)


def batched_cases():
    cases = []
    for i, length in enumerate(ROW_LENGTHS):
        rows = BATCHED_N // length
        strategy, fractions = ROW_MAPPINGS[AUTOMATIC[i]]
        cases.append(batched_case("reduce_rows", "rows", rows, length, 0.97 * fractions[i],
                                  strategy_id=strategy))
        cases += [batched_case(f"reduce_rows_{mapping}", "rows", rows, length, fractions[i],
                               variant_of="reduce_rows", strategy_id=strategy)
                  for mapping, (strategy, fractions) in ROW_MAPPINGS.items()]
        cases.append(batched_case("cub_segmented_reduce", "rows", rows, length,
                                  0.30 if length < 64 else 0.75))
    # Two shapes of one n (2^24), and one that sits in L2 (2^20 elements, 4 MiB).
    for rows, length, fraction, naive in ((2 ** 14, 2 ** 10, 0.85, 0.20),
                                          (2 ** 10, 2 ** 14, 0.88, 0.60),
                                          (2 ** 10, 2 ** 10, 0.80, 0.30)):
        cases.append(batched_case("reduce_columns", "columns", rows, length, fraction))
        cases.append(batched_case("reduce_columns_naive", "columns", rows, length, naive,
                                  variant_of="reduce_columns"))
    # Uniform and heavy-tailed lengths: the same n, number and mean length, told apart by heavy.
    for length, (lesson, naive, cub) in ((64, ((0.60, 0.55), (0.50, 0.10), (0.40, 0.35))),
                                         (1024, ((0.88, 0.80), (0.70, 0.15), (0.75, 0.50)))):
        segments = BATCHED_N // length
        for heavy in (0, 1):
            cases += [batched_case("reduce_segments", "segments", segments, length, lesson[heavy],
                                   heavy=heavy),
                      batched_case("reduce_segments_naive", "segments", segments, length,
                                   naive[heavy], variant_of="reduce_segments", heavy=heavy),
                      batched_case("cub_segmented_reduce", "segments", segments, length,
                                   cub[heavy], heavy=heavy)]
    # f16 sums at one shape of each layout, and an f32 max of rows.
    f16, f32_max, shape = [("sum", "f16")], [("max", "f32")], (2 ** 10, 2 ** 14)
    cases += [batched_case("reduce_rows", "rows", *shape, 0.90, f16, strategy_id=3),
              batched_case("cub_segmented_reduce", "rows", *shape, 0.70, f16),
              batched_case("reduce_columns", "columns", *shape, 0.86, f16),
              batched_case("reduce_columns_naive", "columns", *shape, 0.50, f16,
                           variant_of="reduce_columns"),
              batched_case("reduce_segments", "segments", 2 ** 14, 2 ** 10, 0.85, f16, heavy=0),
              batched_case("cub_segmented_reduce", "segments", 2 ** 14, 2 ** 10, 0.72, f16,
                           heavy=0),
              batched_case("reduce_rows", "rows", *shape, 0.91, f32_max, strategy_id=3),
              batched_case("cub_segmented_reduce", "rows", *shape, 0.80, f32_max)]
    return cases


def batched_entries():
    """The floor, the flat rows, then the batched ones, named as the benchmark names them."""
    flat = [(k, op, dtype, n) for n in SIZES for k in BATCHED_FLAT for op, dtype in k["sections"]
            if n in k["sizes"]]
    out = [floor_entry()] + [entry(i, *case) for i, case in enumerate(flat, 1)]
    for k, n, shape, counters in batched_cases():
        for op, dtype in k["sections"]:
            e = entry(len(out), k, op, dtype, n)
            name = e["name"].replace(f"/{n}/", f"/{n}/{shape}/")
            out.append(dict(e, name=name, run_name=name, **counters))
    return out


def floor_entry():
    """The empty kernel, registered before the chapters as reduction_bench does."""
    name = "floor/empty_kernel/none/none/0/iterations:1/manual_time"
    return dict({"name": name, "family_index": 0, "per_family_instance_index": 0,
                 "run_name": name, "run_type": "iteration", "repetitions": 1,
                 "repetition_index": 0, "threads": 1, "iterations": 1,
                 "real_time": FLOOR["time_us"], "cpu_time": FLOOR["time_us"] + 2.0,
                 "time_unit": "us", "n": 0.0, "bytes": 0.0, "gbps": 0.0, "pct_peak": 0.0,
                 "l2_resident": 1.0, "reps": 200.0}, **FLOOR)


def main(out_dir):
    # Grouped by size like reduction_bench, which registers cases grouped by (dtype, n).
    cases = [(k, op, dtype, n) for n in SIZES for k in KERNELS
             for op, dtype in k["sections"] if n in k["sizes"] and (k["kernel"], n) not in MISSING]
    benchmarks = [floor_entry()] + [entry(i, *case) for i, case in enumerate(cases, 1)]
    context = {"date": "2025-01-01T00:00:00+00:00", "host_name": "gpu-node",
               "executable": "./build/bench/reduction_bench", "num_cpus": 16, "mhz_per_cpu": 2000,
               "cpu_scaling_enabled": False, "caches": [], "load_avg": [0.1, 0.1, 0.1],
               "library_version": "v1.8.3", "library_build_type": "release",
               "json_schema_version": 1}
    # Google Benchmark stores custom context (AddCustomContext) as strings.
    context.update({k: str(v) for k, v in MACHINE.items()})
    with open(os.path.join(out_dir, "bench.json"), "w", encoding="utf-8") as f:
        json.dump({"context": context, "benchmarks": benchmarks}, f, indent=2)
        f.write("\n")
    with open(os.path.join(out_dir, "batched.json"), "w", encoding="utf-8") as f:
        json.dump({"context": context, "benchmarks": batched_entries()}, f, indent=2)
        f.write("\n")
    with open(os.path.join(out_dir, "machine.txt"), "w", encoding="utf-8") as f:
        f.writelines(f"{k}: {v}\n" for k, v in MACHINE.items())
        f.write("driver: 550.54.15\ncuda_runtime: 12.4\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
