"""Tests of the job csv (Google Benchmark's JSON -> bench.csv and floor.csv), and of the jobs'
refusals of a malformed bench.csv or machine.txt.

    python3 -m unittest tools.tests.test_bench_csv        (ctest: plot_tests)
"""

import csv
import os
import subprocess
import sys
import unittest

from tools import results, schema
from tools.tests.fixtures import (FLOOR_NAME, TESTDATA, Results, job, json_entries, kernel_entries, read, run,
                                  without_columns, write, write_json)


class TestCsv(Results):
    convert = staticmethod(run)  # the test of the job as a user runs it
    def test_testdata_matches_its_generator(self):
        # The committed inputs are what make_testdata.py writes: no hand edits drift in.
        done = subprocess.run([sys.executable, os.path.join(TESTDATA, "make_testdata.py"), self.dir],
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        for name in ("bench.json", "batched.json", "machine.txt"):
            self.assertEqual(read(self.path(name)), read(os.path.join(TESTDATA, name)), name)

    def test_rows_and_the_failed_run(self):
        self.assertEqual(read(self.csv).splitlines()[0], ",".join(schema.CSV_COLUMNS))
        failed = [e["name"] for e in json_entries() if e.get("error_occurred")]
        self.assertEqual(len(failed), 1)
        self.assertEqual(len(self.rows), len(kernel_entries()) - 1)
        self.assertIn(failed[0], self.csv_run.stderr)
        self.assertNotIn(("reduce_convergent", "sum", 2 ** 26),
                         [(r["kernel"], r["op"], r["n"]) for r in self.rows])
        # The L2 flag follows the counter: 2^20 f32 (4 MiB) sits in L2, 2^24 (64 MiB, more than
        # the 60 MiB L2) and 2^28 (1 GiB) do not.
        self.assertTrue(self.row("reduce_naive", 2 ** 20)["l2_resident"])
        self.assertFalse(self.row("reduce_naive", 2 ** 24)["l2_resident"])
        self.assertFalse(self.row("reduce_naive", 2 ** 28)["l2_resident"])

    def test_steady_state_spread_and_latency_columns(self):
        # Each comes from its own counter, unchanged; the steady state is what GB/s is made of.
        # The loop and graph times are there where the benchmark measured them, else empty.
        for e in kernel_entries():
            if e.get("error_occurred"):
                continue
            chapter, kernel, op, dtype, n = e["name"].split("/")[:5]
            r = next(r for r in self.rows if (r["chapter"], r["kernel"], r["op"], r["dtype"], r["n"])
                     == (chapter, kernel, op, dtype, int(n)))
            for column in ("time_us", "time_p10_us", "time_p90_us", "latency_us", "b2b_us", "graph_us"):
                if column in e:
                    self.assertAlmostEqual(r[column], e[column], delta=1e-6 * e[column], msg=column)
                else:
                    self.assertIsNone(r[column], column)
            self.assertAlmostEqual(r["gbps"], r["bytes"] / (r["time_us"] * 1e3), delta=1e-6 * r["gbps"])

    def test_loop_and_graph_columns(self):
        header = read(self.csv).splitlines()[0].split(",")
        self.assertEqual(header[header.index("latency_us") + 1:][:2], ["b2b_us", "graph_us"])
        # Measured on L2-resident inputs only; graph_us absent where the call was not captured.
        r = self.row("reduce_single_pass", 2 ** 14)
        self.assertGreater(r["b2b_us"], 0)
        self.assertGreater(r["graph_us"], 0)
        self.assertIsNone(self.row("reduce_single_pass", 2 ** 28)["b2b_us"])
        self.assertIsNone(self.row("reduce_single_pass", 2 ** 28)["graph_us"])
        grid_sync = self.row("reduce_single_pass_grid_sync", 2 ** 14)
        self.assertGreater(grid_sync["b2b_us"], 0)
        self.assertIsNone(grid_sync["graph_us"])
        with open(self.csv, newline="", encoding="utf-8") as f:
            raw = next(r for r in csv.DictReader(f) if (r["kernel"], r["n"]) ==
                       ("reduce_single_pass_grid_sync", str(2 ** 14)))
        self.assertEqual(raw["graph_us"], "")

    def test_the_floor_goes_to_floor_csv(self):
        floor = next(e for e in json_entries() if e["name"] == FLOOR_NAME)
        self.assertEqual(read(self.floor_csv).splitlines()[0], ",".join(schema.FLOOR_COLUMNS))
        self.assertEqual(len(read(self.floor_csv).splitlines()), 2)
        self.assertIn(f"to {os.path.join(self.converted, 'floor.csv')}", self.csv_run.stdout)
        got = results.read_floor(self.results)
        self.assertEqual(got["kernel"], "empty_kernel")
        for column in schema.FLOOR_COLUMNS[1:]:
            self.assertAlmostEqual(got[column], floor[column], msg=column)
        # No chapter of its own in bench.csv, so in no table, chart, lesson list or comparison.
        self.assertNotIn("floor", {r["chapter"] for r in self.rows})
        self.assertNotIn("empty_kernel", read(self.csv))
        self.assertNotIn("floor", {chapter for chapter, _ in results.lesson_kernels(self.rows)})

    def test_without_a_floor(self):
        # An older results folder has no floor.csv; a new run without the floor leaves none behind.
        self.assertIsNone(results.read_floor(self.path("nowhere")))
        write_json(self.path("b.json"), kernel_entries())
        done = job("csv", self.path("b.json"), self.csv)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertFalse(os.path.exists(self.floor_csv))
        self.assertIsNone(results.read_floor(self.results))
        self.assertEqual(results.read_csv(self.csv), self.rows)

    def test_bad_floor(self):
        text = read(self.floor_csv)
        write(self.floor_csv, text.replace("empty_kernel,", "other_kernel,"))
        with self.assertRaisesRegex(schema.InputError, "no empty_kernel row"):
            results.read_floor(self.results)
        write(self.floor_csv, text.replace(",1.1\n", ",fast\n"))
        with self.assertRaisesRegex(schema.InputError, "graph_us 'fast' is not a number"):
            results.read_floor(self.results)
        write(self.floor_csv, "kernel,time_us\nempty_kernel,1.6\n")
        with self.assertRaisesRegex(schema.InputError, "lacks column"):
            results.read_floor(self.results)

    def test_an_old_bench_csv_without_loop_and_graph_columns(self):
        without_columns(self.csv, {"b2b_us", "graph_us"})
        self.assertNotIn("b2b_us", read(self.csv))
        rows = results.read_csv(self.csv)
        self.assertEqual(len(rows), len(self.rows))
        self.assertTrue(all(r["b2b_us"] is None and r["graph_us"] is None for r in rows))
        self.assertEqual([dict(r, b2b_us=None, graph_us=None) for r in self.rows], rows)

    def test_flat_rows_have_one_segment_of_n(self):
        header = read(self.csv).splitlines()[0].split(",")
        self.assertEqual(header[-8:-5], ["layout", "segments", "length"])  # after params
        # chapter 13's check, last
        self.assertEqual(header[-5:], ["error", "error_bound", "passed", "result", "true_value"])
        self.assertTrue(all((r["layout"], r["segments"], r["length"]) == ("flat", 1, r["n"])
                            for r in self.rows))
        # A bench.csv from before the shape columns reads the same.
        without_columns(self.csv, {"layout", "segments", "length"})
        self.assertEqual(results.read_csv(self.csv), self.rows)

    def test_variant_of_and_params_come_from_the_label_and_counters(self):
        with open(self.csv, newline="", encoding="utf-8") as f:
            got = {(r["kernel"], r["op"], int(r["n"])): (r["variant_of"], r["params"])
                   for r in csv.DictReader(f)}
        n = 2 ** 28
        self.assertEqual(got["reduce_coarsened_x8", "sum", n], ("reduce_coarsened", "coarsening=8"))
        self.assertEqual(got["reduce_coarsened", "max", n], ("", "coarsening=16"))
        self.assertEqual(got["dot_fma", "dot", n], ("", "atomics=1;step=3"))
        self.assertEqual(got["cub_sum", "sum", n], ("", ""))
        # Keys sorted; a boolean is 0 or 1.
        self.assertEqual(got["reduce_two_pass_plain_launch", "sum", 2 ** 14],
                         ("reduce_two_pass",
                          "early_launch=0;fixed_grid=1;l2_prefetch=0;unroll=8;vector_bytes=16"))

    def test_ratio_to_cub(self):
        gbps = {tuple(e["name"].split("/")[:5]): e["gbps"] for e in json_entries() if "gbps" in e}
        for r in self.rows:  # every row against its library's row at the same op, dtype and n
            chapter, base = schema.baseline_for(r["op"], r["dtype"])
            key = (chapter, base, r["op"], r["dtype"], str(r["n"]))
            if key in gbps:
                self.assertAlmostEqual(r["ratio_to_cub"], r["gbps"] / gbps[key], 6)
            else:
                self.assertIsNone(r["ratio_to_cub"])
        self.assertEqual(schema.baseline_for("sum", "bf16"), ("09_cub_comparison", "cub_transform_reduce"))
        self.assertEqual(schema.baseline_for("dot", "f32"), ("08_dot_product", "cublas_sdot"))
        self.assertEqual(schema.baseline_for("dot", "bf16"), ("08_dot_product", "cub_transform_reduce"))
        for op in ("max", "min", "argmax"):  # CUB's shipped calls, not 09's with our semantics
            self.assertEqual(schema.baseline_for(op, "f32"), ("09_cub_comparison", f"cub_{op}_builtin"))
        r, cub = self.row("reduce_coarsened", 2 ** 28, "max"), self.row("cub_max_builtin", 2 ** 28, "max")
        self.assertAlmostEqual(r["ratio_to_cub"], r["gbps"] / cub["gbps"])
        self.assertIsNone(self.row("reduce_naive", 2 ** 10, "max")["ratio_to_cub"])  # no CUB max there
        self.assertEqual(self.row("cub_sum", 2 ** 28)["ratio_to_cub"], 1.0)

    def test_kernels_ordered_by_params_libraries_last(self):
        order = [k for c, k in results.kernels_of(self.rows) if c in ("05_coarsened", "08_dot_product")]
        self.assertEqual(order, ["reduce_coarsened_x1", "reduce_coarsened_x8", "reduce_coarsened",
                                 "reduce_coarsened_x64", "dot_shared", "dot_coarsened", "dot_fma",
                                 "dot_two_pass", "cub_transform_reduce", "cublas_sdot"])

    def test_bad_json(self):
        for text, message in (("{not json", "not valid JSON"),
                              ('{"context": {}}', "no 'benchmarks' list"),
                              ('{"benchmarks": []}', "no successful benchmark rows"),
                              ('{"benchmarks": [{"name": "BM_x/1024"}]}', "<chapter>/<kernel>"),
                              ('{"benchmarks": [{"name": "floor"}]}', "floor/<kernel>"),
                              ('{"benchmarks": [{"name": "a/b/sum/f32/1", "n": 1}]}', "'bytes'")):
            write(self.path("b.json"), text)
            self.assertFailsCleanly(job("csv", self.path("b.json"), self.path("o.csv")), message)
        self.assertFailsCleanly(job("csv", self.path("none.json"), self.path("o.csv")),
                                "cannot read")


class TestMalformedInput(Results):
    def charts_on(self, lines):
        write(self.csv, "\n".join(lines) + "\n")
        return job("charts", self.results)

    def test_bad_csv(self):
        lines = read(self.csv).splitlines()

        def with_field(column, value):
            fields = lines[1].split(",")
            fields[schema.CSV_COLUMNS.index(column)] = value
            return [lines[0], ",".join(fields)]

        self.assertFailsCleanly(self.charts_on([""]), "empty")
        self.assertFailsCleanly(self.charts_on(lines[:1]), "no data rows")
        end = schema.CSV_COLUMNS.index("ratio_to_cub")
        cut = [",".join(line.split(",")[:end]) for line in lines]  # no ratio_to_cub and after
        self.assertFailsCleanly(self.charts_on(cut), "lacks column(s): ratio_to_cub")
        self.assertFailsCleanly(self.charts_on(with_field("gbps", "fast")), "gbps", "not a number")
        self.assertFailsCleanly(self.charts_on(with_field("params", "unroll")), "params", "key=number")
        self.assertFailsCleanly(self.charts_on(lines[:2] + lines[1:2]), "duplicate row")

    def test_bad_machine(self):
        os.remove(os.path.join(self.results, "machine.txt"))
        self.assertFailsCleanly(job("charts", self.results), "cannot read", "machine.txt")
        write(os.path.join(self.results, "machine.txt"), "gpu: NVIDIA H200\nl2_bytes: 62914560\n")
        self.assertFailsCleanly(job("charts", self.results), "dram_gbps")
        self.assertFailsCleanly(job("charts", self.path("nowhere")), "cannot read")


if __name__ == "__main__":
    unittest.main()
