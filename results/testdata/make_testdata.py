#!/usr/bin/env python3
"""Writes the synthetic inputs of results/test_plot.py: bench.json (shaped like Google Benchmark's
JSON output of reduction_bench) and machine.txt (an H200-like description).

The numbers come from a simple model, time = launch latency + bytes / bandwidth, with a higher
bandwidth while the input fits in L2; they are plausible, not measured. Rerun after changing it:

    python3 results/testdata/make_testdata.py results/testdata
"""

import json
import os
import sys

MACHINE = {"gpu": "NVIDIA H200", "dram_gbps": 4800.0, "copy_gbps": 4020.5,
           "l2_bytes": 62914560, "fp32_gflops": 66908.2, "sm_count": 132}
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
SIZES = [2 ** 10, 2 ** 14, 2 ** 20, 2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30]

# (chapter, kernel, op, dtype, fraction of the copy bandwidth reached, launch latency in µs)
KERNELS = [
    ("01_naive", "reduce_naive", "sum", "f32", 0.08, 6.0),
    ("01_naive", "reduce_naive", "max", "f32", 0.07, 6.0),
    ("02_convergent", "reduce_convergent", "sum", "f32", 0.20, 6.0),
    ("02_convergent", "reduce_convergent", "max", "f32", 0.17, 6.0),
    ("03_shared", "reduce_shared", "sum", "f32", 0.40, 5.0),
    ("03_shared", "reduce_shared", "max", "f32", 0.30, 5.0),
    ("04_multiblock_atomic", "reduce_atomic", "sum", "f32", 0.25, 4.0),
    ("04_multiblock_atomic", "reduce_atomic", "max", "f32", 0.29, 4.0),
    ("05_coarsened", "reduce_coarsened", "sum", "f32", 0.86, 4.0),
    ("05_coarsened", "reduce_coarsened", "max", "f32", 0.50, 4.0),
    ("05_coarsened", "reduce_coarsened", "sum", "f16", 0.80, 4.0),
    ("05_coarsened", "reduce_coarsened", "sum", "bf16", 0.79, 4.0),
    ("06_warp_shuffle", "reduce_shuffle", "sum", "f32", 0.91, 3.5),
    ("08_dot_product", "dot_shared", "dot", "f32", 0.40, 5.0),
    ("08_dot_product", "dot_fma", "dot", "f32", 0.85, 4.0),
    ("08_dot_product", "dot_two_pass", "dot", "f32", 0.90, 4.0),
    ("08_dot_product", "dot_two_pass", "dot", "bf16", 0.88, 4.0),
    ("08_dot_product", "cublas_sdot", "dot", "f32", 0.84, 5.0),
    ("08_dot_product", "cub_transform_reduce", "dot", "f32", 0.80, 5.0),
    ("08_dot_product", "cub_transform_reduce", "dot", "bf16", 0.75, 5.0),
    ("09_cub_comparison", "cub_sum", "sum", "f32", 0.93, 5.0),
    ("09_cub_comparison", "cub_max", "max", "f32", 0.92, 5.0),
    ("09_cub_comparison", "cub_transform_reduce", "sum", "f16", 0.85, 5.0),
    ("09_cub_comparison", "cub_transform_reduce", "sum", "bf16", 0.85, 5.0),
]
# Chapter 05 also sweeps its coarsening factor at one L2 and one DRAM size only; its main kernel,
# reduce_coarsened, is factor 16 (kCoarsen in 05_coarsened/reduce.cuh).
SWEEP = [("05_coarsened", f"reduce_coarsened_x{c}", "sum", "f32", fraction, 4.0)
         for c, fraction in ((1, 0.45), (8, 0.80), (64, 0.83))]
SWEEP_SIZES = [2 ** 20, 2 ** 28]
# Chapter 06 (standing in for 07's layout variants) has an unroll variant at the sweep sizes and a
# plain-launch variant at the small sizes, which update_readme.py turns into two more tables.
VARIANTS = [("06_warp_shuffle", "reduce_shuffle_unroll8", "sum", "f32", 0.92, 3.5)]
PLAIN = [("06_warp_shuffle", "reduce_shuffle_plain_launch", "sum", "f32", 0.91, 4.5)]
PLAIN_SIZES = [2 ** 10, 2 ** 14]
# The one run that fails its correctness check, as SkipWithError reports it.
FAILED = ("02_convergent", "reduce_convergent", "sum", "f32", 2 ** 26)
# cub_max is not measured at 2^10, so 01_naive's max row there has no ratio to CUB.
MISSING = {("09_cub_comparison", "cub_max", 2 ** 10)}


def entry(index, chapter, kernel, op, dtype, n, fraction, latency_us):
    name = f"{chapter}/{kernel}/{op}/{dtype}/{n}/iterations:1/manual_time"
    common = {"name": name, "family_index": index, "per_family_instance_index": 0,
              "run_name": name, "run_type": "iteration", "repetitions": 1,
              "repetition_index": 0, "threads": 1, "iterations": 1}
    if (chapter, kernel, op, dtype, n) == FAILED:
        return dict(common, error_occurred=True,
                    error_message="wrong result: 1.0e+08 differs from the reference by 3.2e+02",
                    real_time=0.0, cpu_time=0.0, time_unit="us")
    input_bytes = n * ELEMENT_BYTES[dtype] * (2 if op == "dot" else 1)
    output_bytes = 4 if op != "argmax" else 8
    nbytes = input_bytes + output_bytes
    l2_resident = input_bytes < 4 * MACHINE["l2_bytes"]
    bandwidth = fraction * MACHINE["copy_gbps"] * (1.6 if input_bytes < MACHINE["l2_bytes"] else 1.0)
    time_us = latency_us + nbytes / (bandwidth * 1e3)
    gbps = nbytes / (time_us * 1e3)
    reps = 200 if input_bytes <= 64 << 20 else 50 if input_bytes <= 1 << 30 else 15
    return dict(common, real_time=time_us, cpu_time=time_us + 2.0, time_unit="us",
                bytes_per_second=nbytes / (time_us * 1e-6), n=float(n), bytes=float(nbytes),
                time_us=time_us, gbps=gbps, pct_peak=100.0 * gbps / MACHINE["dram_gbps"],
                l2_resident=1.0 if l2_resident else 0.0, reps=float(reps))


def main(out_dir):
    benchmarks = []
    # Ordered by size like reduction_bench, which registers cases grouped by (dtype, n).
    for n in SIZES:
        for chapter, kernel, op, dtype, fraction, latency in KERNELS:
            if (chapter, kernel, n) not in MISSING:
                benchmarks.append(entry(len(benchmarks), chapter, kernel, op, dtype, n,
                                        fraction, latency))
    for sizes, kernels in ((SWEEP_SIZES, SWEEP + VARIANTS), (PLAIN_SIZES, PLAIN)):
        for n in sizes:
            for chapter, kernel, op, dtype, fraction, latency in kernels:
                benchmarks.append(entry(len(benchmarks), chapter, kernel, op, dtype, n, fraction,
                                        latency))
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
    with open(os.path.join(out_dir, "machine.txt"), "w", encoding="utf-8") as f:
        f.writelines(f"{k}: {v}\n" for k, v in MACHINE.items())
        f.write("driver: 550.54.15\ncuda_runtime: 12.4\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
