"""Tests of chapter 13's rows (custom operators, with their checks) through the jobs csv, tables,
charts and readmes.

    python3 -m unittest tools.tests.test_custom_ops        (ctest: plot_tests)
"""

import os
import shutil
import tempfile
import unittest

from tools import readme_custom_ops, results, schema
from tools.tests.fixtures import (MACHINE_TXT, MARKED, Results, cells, job, json_entries, read, run, saves,
                                  table_after, write, write_json)


def custom_entry(kernel, op, dtype, n, gbps, error=None, bound=None, passed=None, variant_of="",
                 values=None, reads_unknown=False, **params):
    """A chapter 13 row as common/bench.cpp writes one: the flat counters, and the check's (values:
    the result and its float64 value). reads_unknown: an early exit's row, which carries no GB/s
    (its time is that of `gbps` over 1 GiB)."""
    e = {"name": f"13_custom_ops/{kernel}/{op}/{dtype}/{n}/iterations:1/manual_time", "run_type": "iteration",
         "n": float(n), "bytes": float(2 ** 30), "time_us": 2 ** 30 / gbps / 1e3, "gbps": gbps,
         "pct_peak": gbps / 48.0, "l2_resident": 0.0, "latency_us": 300.0, "reps": 20.0}
    e.update(time_p10_us=e["time_us"] * 0.98, time_p90_us=e["time_us"] * 1.02)
    if reads_unknown:
        e.update(gbps=0.0, pct_peak=0.0, reads_unknown=1.0)
    if error is not None:
        e.update(error=error, error_bound=bound, passed=float(passed))
    if values is not None:
        e.update(result=values[0], true_value=values[1])
    if variant_of:
        e["label"] = "variant of " + variant_of
    e.update({"param_" + k: float(v) for k, v in params.items()})
    return e


class TestCustomOps(Results):
    """Chapter 13's rows: flat, with the check's counters (error, error_bound, passed) beside the
    time, set against chapter 07's f32 sum of the same bytes and CUB's TransformReduce."""

    early_exit_read = 5e7

    @classmethod
    def setUpClass(cls):
        cls.bench_json = os.path.join(tempfile.mkdtemp(prefix="plot_custom_"), "bench.json")
        cls.addClassCleanup(shutil.rmtree, os.path.dirname(cls.bench_json))
        write_json(cls.bench_json, json_entries() + [
            custom_entry("reduce", "lse", "f32", 2 ** 28, 4300.0, 1.5e-6, 4e-5, 1),
            custom_entry("reduce_ordered", "lse", "f32", 2 ** 28, 3200.0, 2e-6, 4e-5, 1, "reduce"),
            custom_entry("cub_transform_reduce", "lse", "f32", 2 ** 28, 2700.0),
            custom_entry("reduce", "lse_naive", "f32", 2 ** 28, 4400.0, 1e300, 4e-5, 0),
            custom_entry("reduce", "any", "u8", 2 ** 30, 4100.0, 0.0, 0.0, 1, true_at=2),
            custom_entry("reduce_early_exit", "any", "u8", 2 ** 30, 9900.0, 0.0, 0.0, 1, "reduce",
                         reads_unknown=True, true_at=0),
            custom_entry("cub_transform_reduce", "any", "u8", 2 ** 30, 3300.0, true_at=2),
            custom_entry("reduce", "product", "f32", 2 ** 28, 4400.0, 1e300, 1.0, 0, values=(1e300, 6.7e52)),
            custom_entry("reduce", "product", "f32", 2 ** 28, 4410.0, 2e-3, -1, -1, in_range=1),
            custom_entry("reduce", "mean_variance_naive", "f32", 2 ** 28, 4500.0, 1.0, 1.96, 0,
                         values=(0.0, 1.0))])
        super().setUpClass()

    @classmethod
    def prepare(cls, folder):
        # The early exit's bytes, counted, and machine.txt beside bench.csv before it is converted.
        shutil.copy(MACHINE_TXT, folder)
        write(os.path.join(folder, schema.EARLY_EXIT_BYTES),
              f"op,true_at,n,dram_bytes_read\nany,0,{2 ** 30},{cls.early_exit_read:.0f}\n")

    def test_early_exit_gbps_from_the_bytes_it_read(self):
        early = self.custom("reduce_early_exit", "any", true_at=0)
        self.assertEqual(early["bytes"], self.early_exit_read)
        self.assertAlmostEqual(early["gbps"], self.early_exit_read / (early["time_us"] * 1e3), places=4)
        self.assertAlmostEqual(early["pct_peak"], 100 * early["gbps"] / results.Machine(MACHINE_TXT).dram_gbps)
        self.assertLess(early["pct_peak"], 100)
        # Without the count the row is left out, said so: no GB/s of bytes not read.
        os.remove(os.path.join(self.results, schema.EARLY_EXIT_BYTES))
        done = job("csv", self.bench_json, self.csv)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("its reads are not counted", done.stderr)
        self.assertFalse(any(r["kernel"] == "reduce_early_exit" for r in results.read_csv(self.csv)))

    def custom(self, kernel, op, **params):
        return next(r for r in self.rows if (r["chapter"], r["kernel"], r["op"]) == ("13_custom_ops", kernel, op)
                    and all(r["params"].get(k) == v for k, v in params.items()))

    def test_check_columns_and_ratio_to_cub(self):
        lse = self.custom("reduce", "lse")
        self.assertEqual((lse["error"], lse["error_bound"], lse["passed"]), (1.5e-6, 4e-5, 1))
        self.assertAlmostEqual(lse["ratio_to_cub"], 4300.0 / 2700.0)
        self.assertIsNone(self.custom("cub_transform_reduce", "lse")["error"])
        self.assertAlmostEqual(self.custom("reduce", "any", true_at=2)["ratio_to_cub"], 4100.0 / 3300.0)
        # Every other row leaves the check's columns empty.
        self.assertTrue(all(r["error"] is None for r in self.rows if r["chapter"] != "13_custom_ops"))
        # The tables and charts of every op and dtype take chapter 13's rows too.
        done = run("tables", self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        with saves():
            done = job("charts", self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("lse", read(os.path.join(self.results, "tables.md")))

    def test_chapter_readme(self):
        write(self.path("13_custom_ops", "README.md"), MARKED)
        done = job("readmes", "--chapter", self.path("13_custom_ops"), self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        text = read(self.path("13_custom_ops", "README.md"))
        two_pass = self.row("reduce_two_pass", 2 ** 28)
        lse = table_after(text, "**lse** (f32, 1 GiB)")
        self.assertEqual(lse[0], ["kernel", "data", "µs", "GiB read", "GB/s", "% of DRAM peak",
                                  "× 07_two_pass f32 sum", "× `cub_transform_reduce`", "error vs. float64",
                                  "bound", "check"])
        self.assertEqual([line[0] for line in lse[1:]], ["`reduce`", "`reduce_ordered`", "`cub_transform_reduce`"])
        reduce, cub = self.custom("reduce", "lse"), self.custom("cub_transform_reduce", "lse")
        self.assertEqual(lse[1], ["`reduce`", "", f"{reduce['time_us']:.1f}", "1", "4300.0",
                                  cells(reduce, "pct_peak")[0], f"{two_pass['time_us'] / reduce['time_us']:.3f}",
                                  f"{cub['time_us'] / reduce['time_us']:.3f}", "1.5e-06", "4e-05", "pass"])
        self.assertEqual(lse[3][-3:], ["—", "—", "—"])
        naive = table_after(text, "**lse_naive** (f32, 1 GiB)")
        self.assertEqual(naive[1][-3:], ["not finite", "4e-05", "**fails**"])
        product = table_after(text, "**product** (f32, 1 GiB)")
        # Past float's range: the true product beside the result. In float's range at 2^28 no
        # bound below 10^-4 is left: not checked (passed -1), never a pass.
        self.assertEqual([(line[1], line[-3], line[-2], line[-1]) for line in product[1:]],
                         [("", "not finite (result inf, float64 6.7e+52)", "1", "**fails**"),
                          ("in float's range", "0.002", "none", "unbounded: not checked")])
        # A loss of the whole answer within a loose bound fails, and says why.
        variance = table_after(text, "**mean_variance_naive** (f32, 1 GiB)")
        self.assertEqual(variance[1][-3:], ["1 (result 0, float64 1)", "1.96",
                                            "**fails**: the whole answer lost, the bound (1.96) above the loss"])
        any_ = table_after(text, "**any** (u8, 1 GiB)")
        self.assertEqual([line[:2] for line in any_[1:]], [["`reduce`", "no deciding byte"],
                                                           ["`reduce_early_exit`", "deciding byte first"],
                                                           ["`cub_transform_reduce`", "no deciding byte"]])
        # The early exit: the bytes it read, and its speed-up over CUB reading everything.
        early, cub_any = self.custom("reduce_early_exit", "any"), self.custom("cub_transform_reduce", "any")
        self.assertEqual(any_[2][3], f"{self.early_exit_read / 2 ** 30:.3g}")
        self.assertEqual(any_[2][7], f"{cub_any['time_us'] / early['time_us']:.3f}")
        self.assertLess(float(any_[2][5]), 100)
        # An early exit of a run that never counted its reads (the whole input as its bytes): no
        # GB/s, rather than one of bytes it did not read.
        old_row = dict(early, bytes=float(2 ** 30), gbps=2 ** 30 / (early["time_us"] * 1e3))
        self.assertTrue(readme_custom_ops.reads_uncounted(old_row))
        self.assertFalse(readme_custom_ops.reads_uncounted(early))

    def test_check_cells(self):
        # The check column of the chapter's tables, for results the synthetic run does not hold.
        # A log product off by a factor of e^13 (ln|p| -1.86 read as 11.47) within a bound of 47: the
        # whole answer lost, whatever the run's own check said; ln|p| = 4.2e7 off by 6.7 is not, but
        # a bound of 47 (10^-4 or more) checks nothing: not checked, never a pass.
        lost = {"op": "log_product", "passed": 1, "error": 13.3, "error_bound": 47.0, "result": 11.47,
                "true_value": -1.86}
        self.assertEqual(readme_custom_ops.check_cell(lost), "**fails**: the whole answer lost, and no bound at this n")
        self.assertEqual(readme_custom_ops.error_with_values_cell(lost), "13.3 (result 11.5, float64 -1.86)")
        kept = dict(lost, error=6.72, error_bound=1.2e4, result=41666876.0, true_value=41666869.3)
        self.assertEqual(readme_custom_ops.check_cell(kept), "unbounded: not checked")
        self.assertEqual(readme_custom_ops.check_cell(dict(lost, op="lse")), "pass")  # not a product's log
        # A product's pass rests on a bound below 10^-4, in a run from before the rule too.
        scaled = {"op": "scaled_product", "passed": 1, "error": 3e-9, "error_bound": 2e-8, "result": -1.86,
                  "true_value": -1.86}
        self.assertEqual(readme_custom_ops.check_cell(scaled), "pass")
        self.assertEqual(readme_custom_ops.check_cell(dict(scaled, error_bound=2e-4)), "unbounded: not checked")
        self.assertEqual(readme_custom_ops.check_cell(dict(scaled, passed=-1, error_bound=-1.0)), "unbounded: not checked")
        # Unbounded and not lost, with passed 0: its exact-data gate failed.
        self.assertEqual(readme_custom_ops.check_cell(dict(scaled, passed=0, error_bound=-1.0)), "**fails**: exact data")
        self.assertEqual(readme_custom_ops.error_cell(-1.0), "none")
        # The plain product by the factor alone: 0.09 against 0.155 keeps a digit, 0.07 does not.
        # passed 1 with no bound: a run from before the rule, its exact-data gate passed.
        plain = {"op": "product", "passed": 1, "error": 0.42, "error_bound": -1.0, "result": 0.0903,
                 "true_value": 0.1553}
        self.assertEqual(readme_custom_ops.check_cell(plain), "unbounded: not checked")
        self.assertEqual(readme_custom_ops.check_cell(dict(plain, passed=-1)), "unbounded: not checked")
        self.assertEqual(readme_custom_ops.check_cell(dict(plain, result=0.07, error=0.55)),
                         "**fails**: the whole answer lost, and no bound at this n")
        # Lost past the bound (none at this n, 1e300): fails, and says there was no bound.
        self.assertEqual(readme_custom_ops.check_cell(dict(lost, passed=0, error=0.9, error_bound=1e300, true_value=0.1)),
                         "**fails**: the whole answer lost, and no bound at this n")

    def test_top_readme(self):
        write(self.path("README.md"), MARKED)
        done = job("readmes", self.path("README.md"), self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        summary = table_after(read(self.path("README.md")), "Any associative operator")
        self.assertEqual(summary[0], ["Chapter", "Kernel", "operator", "GB/s", "× 07_two_pass f32 sum",
                                      "× `cub_transform_reduce`", "error vs. float64", "check"])
        self.assertEqual([line[:3] for line in summary[1:]], [["13_custom_ops", "`reduce`", "lse"],
                                                              ["13_custom_ops", "`reduce`", "lse_naive"],
                                                              ["13_custom_ops", "`reduce`", "mean_variance_naive"],
                                                              ["13_custom_ops", "`reduce`", "product"],
                                                              ["13_custom_ops", "`reduce`", "any"]])
        self.assertEqual(summary[4][-1], "**fails**")  # the product's trap, not its in-range row


if __name__ == "__main__":
    unittest.main()
