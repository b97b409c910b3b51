"""Tests of the job tables (tables.md), and of the tables by bytes and their chart.

    python3 -m unittest tools.tests.test_tables        (ctest: plot_tests)
"""

import os
import shutil
import tempfile
import unittest

from tools import chart_style, charts, charts_dtypes, results, schema, tables
from tools.tests.fixtures import (MACHINE_TXT, MAX_SERIES, Results, cells, job, json_entries, kept_charts,
                                  overlapping_labels, read, table_after, title, user_charts,
                                  write_json)



class TestTables(Results):
    def test_charts_and_tables(self):
        self.assertEqual(job("tables", self.results).returncode, 0)
        tables = read(os.path.join(self.results, "tables.md"))
        folder, done = user_charts()  # `python3 -m tools charts` on the same bench.csv
        self.assertEqual(read(os.path.join(folder, "bench.csv")), read(self.csv))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(read(os.path.join(folder, "tables.md")), tables)  # the same tables
        self.assertLessEqual(set(charts.CHART_DRAWERS), {name for name, _ in schema.CHARTS})
        for name in charts.CHART_DRAWERS:
            with open(os.path.join(folder, name), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
        # The variants (rows with variant_of) stay out of the charts, and are named; lessons are not.
        self.assertIn("charts leave out the variants (tables.md has them): "
                      "05_coarsened/reduce_coarsened_x1, 05_coarsened/reduce_coarsened_x8, "
                      "05_coarsened/reduce_coarsened_x64, 07_two_pass/", done.stdout)
        self.assertNotIn("dot_fma", done.stdout)
        for r in self.rows:  # every measured GB/s shows up, one decimal, starred when in L2
            self.assertIn(f"| {r['gbps']:.1f}{'*' if r['l2_resident'] else ''} |", tables)
        sections = [line for line in tables.splitlines() if line.startswith("## ")]
        self.assertEqual(sections, ["## sum, f32", "## max, f32", "## argmax, f32", "## dot, f32",
                                    "## sum, f16", "## sum, bf16", "## dot, bf16"])
        for heading, field in (("### Latency of one call from idle", "latency_us"),
                               ("### Time per call, 200 calls in a loop", "b2b_us"),
                               ("### Time per call, 200 calls in one CUDA graph", "graph_us")):
            table = table_after(tables, heading)
            self.assertEqual(table[0][2:], ["2^10", "2^14", "2^20"])
            line = next(line for line in table if line[1] == "`cub_sum`")
            self.assertEqual(line[table[0].index("2^14")], cells(self.row("cub_sum", 2 ** 14), field)[0] + "*")
        ratios = table_after(tables, "### Ratio to `cub_sum`")
        line = next(line for line in ratios if line[1] == "`reduce_coarsened_x8`")
        self.assertEqual(line[ratios[0].index("2^28")],
                         cells(self.row("reduce_coarsened_x8", 2 ** 28), "ratio_to_cub")[0])


def flat_entry(chapter, kernel, dtype, n, gbps):
    """A flat sum row as common/bench.cpp writes one, DRAM-resident."""
    size = tables.ELEMENT_BYTES[dtype]
    e = {"name": f"{chapter}/{kernel}/sum/{dtype}/{n}/iterations:1/manual_time", "run_type": "iteration",
         "n": float(n), "bytes": float(n * size), "time_us": n * size / gbps / 1e3, "gbps": gbps,
         "pct_peak": gbps / 48.0, "l2_resident": 0.0, "latency_us": 300.0, "reps": 20.0}
    e.update(time_p10_us=e["time_us"] * 0.98, time_p90_us=e["time_us"] * 1.02)
    return e


class TestEqualBytes(Results):
    """The sums at equal bytes in every element type: tables.md's view by bytes and its chart."""
    gbps = {"f32": 4500.0, "f64": 4490.0, "f16": 4300.0, "bf16": 4250.0, "i32": 4480.0,
            "i64": 4470.0, "u8": 3100.0}

    @classmethod
    def setUpClass(cls):
        cls.bench_json = os.path.join(tempfile.mkdtemp(prefix="plot_bytes_"), "bench.json")
        cls.addClassCleanup(shutil.rmtree, os.path.dirname(cls.bench_json))
        entries = [e for e in json_entries() if "/sum/" not in e["name"] or "/f32/" in e["name"]]
        for dtype, gbps in cls.gbps.items():
            n = 2 ** 30 // tables.ELEMENT_BYTES[dtype]
            if dtype != "f32":
                entries += [flat_entry("07_two_pass", "reduce_two_pass", dtype, n, gbps),
                            flat_entry("10_single_pass", "reduce_single_pass", dtype, n, gbps * 0.99),
                            flat_entry("09_cub_comparison", "cub_transform_reduce", dtype, n, gbps * 0.9)]
        write_json(cls.bench_json, entries)
        super().setUpClass()

    def test_table_by_bytes(self):
        self.assertEqual(schema.baseline_for("sum", "u8"), ("09_cub_comparison", "cub_transform_reduce"))
        self.assertEqual(schema.baseline_for("sum", "f32"), ("09_cub_comparison", "cub_sum"))
        folder, (done, _) = kept_charts("equal_bytes", self.converted)
        self.assertEqual(done.returncode, 0, done.stderr)
        table = table_after(read(os.path.join(folder, "tables.md")), "(CUB's: by `cub_sum`'s).")
        self.assertEqual(table[0], ["Chapter", "Kernel", "dtype", "16 MiB", "64 MiB", "256 MiB", "1 GiB",
                                    "× its f32 at 1 GiB"])
        u8 = next(line for line in table if line[:3] == ["07_two_pass", "`reduce_two_pass`", "u8"])
        two_pass_f32 = self.row("reduce_two_pass", 2 ** 28)
        self.assertEqual(u8[6], "3100.0")
        self.assertEqual(u8[7], f"{3100.0 / two_pass_f32['gbps']:.3f}")
        cub_u8 = next(line for line in table if line[1:3] == ["`cub_transform_reduce`", "u8"])
        self.assertEqual(cub_u8[7], f"{3100.0 * 0.9 / self.row('cub_sum', 2 ** 28)['gbps']:.3f}")
        self.assertEqual([line[2] for line in table[1:] if line[0] == "07_two_pass"],
                         list(tables.ELEMENT_BYTES))

    def test_chart(self):
        machine = results.Machine(MACHINE_TXT)
        shown = [r for r in self.rows if not r["variant_of"]]
        # chart_dtypes_equal_bytes's figure of the rows shown, as `charts` drew it
        fig = kept_charts("equal_bytes", self.converted)[1][1][schema.EQUAL_BYTES_CHART]
        ax = fig.axes[0]
        self.assertLessEqual(chart_style.series_count(ax), MAX_SERIES)
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], list(tables.ELEMENT_BYTES))
        self.assertIn(": ", title(fig))
        f32 = self.row("reduce_two_pass", 2 ** 28)["gbps"]
        ratios = [g / f32 for dtype, g in self.gbps.items() if dtype != "f32"]
        self.assertIn(f"07_two_pass {min(ratios):.2f}–{max(ratios):.2f}×", title(fig))
        self.assertEqual(overlapping_labels(fig, others=True), [])
        # Without rows beyond f32 nothing is drawn, and `charts` removes an older file.
        f32_only = [r for r in shown if r["dtype"] == "f32"]
        self.assertFalse(charts_dtypes.chart_dtypes_equal_bytes(f32_only, machine, {}, self.path("x.png")))


if __name__ == "__main__":
    unittest.main()
