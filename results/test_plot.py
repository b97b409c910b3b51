"""Tests of results/plot.py and scripts/update_readme.py on synthetic data (results/testdata).

    python3 -m unittest discover -s results -p 'test_*.py'     (from the repository root)

The commands run as subprocesses, as a user runs them, so exit codes and stderr are tested too.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PLOT = os.path.join(HERE, "plot.py")
UPDATE_README = os.path.join(ROOT, "scripts", "update_readme.py")
TESTDATA = os.path.join(HERE, "testdata")
BENCH_JSON = os.path.join(TESTDATA, "bench.json")
MACHINE_TXT = os.path.join(TESTDATA, "machine.txt")
PUBLISHED = os.path.join(HERE, "h200")

sys.path.insert(0, HERE)
import plot  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT)


def json_entries():
    with open(BENCH_JSON, encoding="utf-8") as f:
        return json.load(f)["benchmarks"]


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="plot_test_")
        self.addCleanup(shutil.rmtree, self.dir)

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def make_results_dir(self, name="run"):
        """A results folder like results/<gpu>/: bench.csv converted from the test JSON, and
        machine.txt."""
        folder = self.path(name)
        os.makedirs(folder)
        done = run(PLOT, "csv", BENCH_JSON, os.path.join(folder, "bench.csv"))
        self.assertEqual(done.returncode, 0, done.stderr)
        shutil.copy(MACHINE_TXT, folder)
        return folder

    def assertFailsCleanly(self, done, *fragments):
        """Exit status 2, a one-line message naming the problem, and no traceback."""
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        for fragment in fragments:
            self.assertIn(fragment, done.stderr)


class TestData(TempDirTest):
    def test_testdata_matches_its_generator(self):
        # The committed inputs are what make_testdata.py writes: no hand edits drift in.
        done = run(os.path.join(TESTDATA, "make_testdata.py"), self.dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        for name in ("bench.json", "machine.txt"):
            with open(self.path(name), encoding="utf-8") as fresh, \
                    open(os.path.join(TESTDATA, name), encoding="utf-8") as committed:
                self.assertEqual(fresh.read(), committed.read(), name)


class TestCsv(TempDirTest):
    def convert(self):
        out = self.path("bench.csv")
        done = run(PLOT, "csv", BENCH_JSON, out)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(out, newline="", encoding="utf-8") as f:
            return done, list(csv.reader(f))

    def test_header_and_row_count(self):
        _, lines = self.convert()
        self.assertEqual(lines[0], plot.CSV_COLUMNS)
        good = [e for e in json_entries() if not e.get("error_occurred")]
        self.assertEqual(len(lines) - 1, len(good))

    def test_error_rows_are_reported_and_left_out(self):
        done, lines = self.convert()
        failed = [e["name"] for e in json_entries() if e.get("error_occurred")]
        self.assertEqual(len(failed), 1)
        self.assertIn("warning", done.stderr)
        self.assertIn(failed[0], done.stderr)
        chapter, kernel, op, dtype, n = failed[0].split("/")[:5]
        self.assertNotIn([chapter, kernel, dtype, op, n], [line[:5] for line in lines])

    def test_rows_are_sorted_and_typed(self):
        _, lines = self.convert()
        rows = [dict(zip(lines[0], line)) for line in lines[1:]]
        keys = [(r["chapter"], plot.natural_key(r["kernel"]), r["op"], r["dtype"], int(r["n"]))
                for r in rows]
        self.assertEqual(keys, sorted(keys))
        self.assertTrue(all(r["l2_resident"] in ("true", "false") for r in rows))
        # The L2 flag follows the counter: 2^20 f32 (4 MiB) sits in L2, 2^28 (1 GiB) does not.
        flag = {(r["chapter"], r["kernel"], r["op"], r["dtype"], r["n"]): r["l2_resident"]
                for r in rows}
        self.assertEqual(flag[("01_naive", "reduce_naive", "sum", "f32", str(2 ** 20))], "true")
        self.assertEqual(flag[("01_naive", "reduce_naive", "sum", "f32", str(2 ** 28))], "false")

    def test_ratio_to_cub(self):
        _, lines = self.convert()
        rows = {(r["chapter"], r["kernel"], r["op"], r["dtype"], int(r["n"])): r
                for r in (dict(zip(lines[0], line)) for line in lines[1:])}
        gbps = {}
        for e in json_entries():
            if not e.get("error_occurred"):
                chapter, kernel, op, dtype, n = e["name"].split("/")[:5]
                gbps[(chapter, kernel, op, dtype, int(n))] = e["gbps"]

        def expected(key, baseline):
            chapter, kernel, op, dtype, n = key
            return gbps[key] / gbps[(*baseline, op, dtype, n)]

        def ratio(key):
            return float(rows[key]["ratio_to_cub"])

        n = 2 ** 28
        # f32 sum against cub_sum; the baseline's own row is 1.
        key = ("05_coarsened", "reduce_coarsened", "sum", "f32", n)
        self.assertAlmostEqual(ratio(key), expected(key, ("09_cub_comparison", "cub_sum")), 6)
        self.assertAlmostEqual(ratio(("09_cub_comparison", "cub_sum", "sum", "f32", n)), 1.0, 9)
        # max against cub_max; half-precision sums against cub_transform_reduce; dot against
        # cuBLAS.
        key = ("01_naive", "reduce_naive", "max", "f32", 2 ** 20)
        self.assertAlmostEqual(ratio(key), expected(key, ("09_cub_comparison", "cub_max")), 6)
        for dtype in ("f16", "bf16"):
            key = ("05_coarsened", "reduce_coarsened", "sum", dtype, n)
            self.assertAlmostEqual(
                ratio(key), expected(key, ("09_cub_comparison", "cub_transform_reduce")), 6)
        key = ("08_dot_product", "dot_two_pass", "dot", "f32", n)
        self.assertAlmostEqual(ratio(key), expected(key, ("08_dot_product", "cublas_sdot")), 6)
        # A 16-bit dot product has no cuBLAS Sdot row: it is compared with CUB's TransformReduce.
        key = ("08_dot_product", "dot_two_pass", "dot", "bf16", n)
        self.assertAlmostEqual(ratio(key), expected(key, ("08_dot_product", "cub_transform_reduce")), 6)
        # No cub_max row at 2^10: the ratio is empty, not zero or a guess.
        self.assertEqual(rows[("01_naive", "reduce_naive", "max", "f32", 2 ** 10)]["ratio_to_cub"], "")
        # Every ratio present is consistent with the rows' own gbps.
        for key, r in rows.items():
            if r["ratio_to_cub"]:
                base = plot.baseline_for(key[2], key[3])
                self.assertAlmostEqual(float(r["ratio_to_cub"]), expected(key, base), 6)

    def test_machine_from_context(self):
        out = self.path("machine.txt")
        done = run(PLOT, "csv", BENCH_JSON, self.path("bench.csv"), "--machine", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        machine = plot.read_machine(out)
        self.assertEqual(machine["gpu"], "NVIDIA H200")
        self.assertEqual(float(machine["l2_bytes"]), 62914560)

    def test_benchmark_name_parsing(self):
        self.assertEqual(
            plot.parse_benchmark_name("01_naive/reduce_naive/sum/f32/1048576/iterations:1/manual_time"),
            ("01_naive", "reduce_naive", "sum", "f32", 1048576))
        with self.assertRaises(plot.InputError):
            plot.parse_benchmark_name("BM_something/1024")


class TestCharts(TempDirTest):
    def test_every_chart_and_the_tables(self):
        folder = self.make_results_dir()
        done = run(PLOT, "charts", folder)
        self.assertEqual(done.returncode, 0, done.stderr)
        for name, _ in plot.CHARTS:
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            self.assertGreater(len(data), 1000, name)
            self.assertEqual(data[:8], PNG_SIGNATURE, name)

        with open(os.path.join(folder, "tables.md"), encoding="utf-8") as f:
            tables = f.read()
        rows = plot.read_csv(os.path.join(folder, "bench.csv"))
        for r in rows:  # every measured GB/s shows up, one decimal, starred when in L2
            self.assertIn(f"| {r['gbps']:.1f}{'*' if r['l2_resident'] else ''} |", tables)
        self.assertIn(plot.L2_FOOTNOTE, tables)
        for section in ("## sum, f32", "## sum, f16", "## sum, bf16", "## max, f32", "## dot, f32"):
            self.assertIn(section, tables)
        self.assertIn("Time per call (µs), n ≤ 2^22", tables)
        r = next(r for r in rows if (r["kernel"], r["dtype"], r["n"]) == ("reduce_naive", "f32", 2 ** 28))
        self.assertIn(f"| {r['pct_peak']:.1f} |", tables)
        self.assertIn(f"| {r['ratio_to_cub']:.3f} |", tables)

    def test_sweep_variants_stay_out_of_the_charts(self):
        # 05_coarsened's coarsening sweep (two sizes only) is in the tables, not the charts.
        folder = self.make_results_dir()
        done = run(PLOT, "charts", folder)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("05_coarsened/reduce_coarsened_x1, 05_coarsened/reduce_coarsened_x64",
                      done.stdout)
        with open(os.path.join(folder, "tables.md"), encoding="utf-8") as f:
            self.assertIn("| 05_coarsened | `reduce_coarsened_x64` |", f.read())
        kernels = {k for _, k in plot.kernels_of(plot.headline(
            plot.read_csv(os.path.join(folder, "bench.csv"))))}
        self.assertIn("reduce_coarsened", kernels)
        self.assertNotIn("reduce_coarsened_x1", kernels)
        self.assertIn("cublas_sdot", kernels)

    def test_placeholders_when_rows_are_missing(self):
        # Only f32 sums at one size, all L2-resident: the dtype and dot charts say there is
        # nothing to show, the bar chart falls back to the largest n.
        folder = self.make_results_dir()
        rows = [r for r in plot.read_csv(os.path.join(folder, "bench.csv"))
                if r["op"] == "sum" and r["dtype"] == "f32" and r["n"] == 2 ** 20]
        plot.write_csv(rows, os.path.join(folder, "bench.csv"))
        done = run(PLOT, "charts", folder)
        self.assertEqual(done.returncode, 0, done.stderr)
        for name, _ in plot.CHARTS:
            with open(os.path.join(folder, name), "rb") as f:
                self.assertEqual(f.read(8), PNG_SIGNATURE, name)
        self.assertEqual(plot.pick_dram_n(rows)[0], 2 ** 20)
        self.assertIn("2^28 not in bench.csv", plot.pick_dram_n(rows)[1])

    @unittest.skipUnless(os.path.exists(os.path.join(PUBLISHED, "bench.csv")),
                         "no published results/h200/bench.csv yet")
    def test_published_h200_results(self):
        # Into a copy, so the test never rewrites the published charts.
        folder = self.path("h200")
        shutil.copytree(PUBLISHED, folder)
        done = run(PLOT, "charts", folder)
        self.assertEqual(done.returncode, 0, done.stderr)
        for name, _ in plot.CHARTS:
            with open(os.path.join(folder, name), "rb") as f:
                self.assertEqual(f.read(8), PNG_SIGNATURE, name)


class TestCompare(TempDirTest):
    def test_compare(self):
        this = self.make_results_dir("this")
        other = self.make_results_dir("other")
        # The other run: every row at 80% of this run's bandwidth, and one row fewer.
        rows = plot.read_csv(os.path.join(other, "bench.csv"))
        for r in rows:
            r["gbps"] *= 0.8
        plot.write_csv(rows[1:], os.path.join(other, "bench.csv"))

        done = run(PLOT, "compare", this, other)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(this, "compare.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(done.stdout.strip(), text.strip())
        self.assertIn("# this vs. other", text)
        self.assertIn("| 1.25 |", text)   # 1 / 0.8
        self.assertNotIn("| 1.00 |", text)
        self.assertIn("Rows only in this: 1; only in other: 0.", text)

        # The same through charts --compare.
        os.remove(os.path.join(this, "compare.md"))
        done = run(PLOT, "charts", this, "--compare", other)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(os.path.exists(os.path.join(this, "compare.md")))

    def test_compare_needs_the_other_csv(self):
        this = self.make_results_dir("this")
        self.assertFailsCleanly(run(PLOT, "compare", this, self.path("nowhere")), "cannot read")


class TestMalformedInput(TempDirTest):
    def charts_on(self, csv_text):
        folder = self.path("bad")
        os.makedirs(folder)
        with open(os.path.join(folder, "bench.csv"), "w", encoding="utf-8") as f:
            f.write(csv_text)
        shutil.copy(MACHINE_TXT, folder)
        return run(PLOT, "charts", folder)

    def good_csv_lines(self):
        folder = self.make_results_dir()
        with open(os.path.join(folder, "bench.csv"), encoding="utf-8") as f:
            return f.read().splitlines()

    def test_empty_csv(self):
        self.assertFailsCleanly(self.charts_on(""), "empty")

    def test_header_only(self):
        self.assertFailsCleanly(self.charts_on(",".join(plot.CSV_COLUMNS) + "\n"), "no data rows")

    def test_missing_column(self):
        lines = self.good_csv_lines()
        cut = [",".join(line.split(",")[:-1]) for line in lines]  # drop ratio_to_cub
        self.assertFailsCleanly(self.charts_on("\n".join(cut) + "\n"), "ratio_to_cub")

    def test_non_numeric_value(self):
        lines = self.good_csv_lines()
        fields = lines[1].split(",")
        fields[plot.CSV_COLUMNS.index("gbps")] = "fast"
        self.assertFailsCleanly(self.charts_on("\n".join([lines[0], ",".join(fields)]) + "\n"),
                                "gbps", "not a number")

    def test_missing_files(self):
        self.assertFailsCleanly(run(PLOT, "charts", self.path("nowhere")), "cannot read")
        self.assertFailsCleanly(run(PLOT, "csv", self.path("none.json"), self.path("o.csv")),
                                "cannot read")
        folder = self.make_results_dir()
        os.remove(os.path.join(folder, "machine.txt"))
        self.assertFailsCleanly(run(PLOT, "charts", folder), "machine.txt")

    def test_bad_json(self):
        for text, message in (("{not json", "not valid JSON"),
                              ('{"context": {}}', "no 'benchmarks' list"),
                              ('{"benchmarks": []}', "no successful benchmark rows")):
            with open(self.path("b.json"), "w", encoding="utf-8") as f:
                f.write(text)
            self.assertFailsCleanly(run(PLOT, "csv", self.path("b.json"), self.path("o.csv")),
                                    message)

    def test_machine_without_dram_bandwidth(self):
        folder = self.make_results_dir()
        with open(os.path.join(folder, "machine.txt"), "w", encoding="utf-8") as f:
            f.write("gpu: NVIDIA H200\nl2_bytes: 62914560\n")
        self.assertFailsCleanly(run(PLOT, "charts", folder), "dram_gbps")


class TestUpdateReadme(TempDirTest):
    def readme(self, text):
        path = self.path("README.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_replaces_the_section(self):
        folder = self.make_results_dir(os.path.join("results", "h200"))
        self.assertEqual(run(PLOT, "charts", folder).returncode, 0)
        path = self.readme("# Reductions\n\nBefore.\n\n<!-- results:begin -->\nstale numbers\n"
                           "<!-- results:end -->\n\nAfter.\n")
        done = run(UPDATE_README, path, folder)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("# Reductions\n\nBefore.\n\n<!-- results:begin -->\n"))
        self.assertTrue(text.endswith("<!-- results:end -->\n\nAfter.\n"))
        self.assertNotIn("stale numbers", text)
        self.assertIn("NVIDIA H200", text)
        self.assertIn("results/h200/bench.csv", text)            # relative to the README
        self.assertIn("](results/h200/bandwidth_vs_n.png)", text)
        self.assertIn("](results/h200/roofline.png)", text)
        self.assertIn("n = 2^20 (L2-resident)", text)
        rows = {(r["kernel"], r["n"]): r for r in plot.read_csv(os.path.join(folder, "bench.csv"))
                if r["op"] == "sum" and r["dtype"] == "f32"}
        big, small = rows[("reduce_shuffle", 2 ** 28)], rows[("reduce_shuffle", 2 ** 20)]
        self.assertIn(f"| `reduce_shuffle` | {big['gbps']:.1f} | {big['pct_peak']:.1f} | "
                      f"{big['ratio_to_cub']:.3f} | {small['gbps']:.1f}* |", text)

        # Running it again changes nothing.
        self.assertEqual(run(UPDATE_README, path, folder).returncode, 0)
        with open(path, encoding="utf-8") as f:
            self.assertEqual(f.read(), text)

    def test_without_markers(self):
        folder = self.make_results_dir()
        path = self.readme("# Reductions\n\nNo markers here.\n")
        self.assertFailsCleanly(run(UPDATE_README, path, folder), "results:begin")
        with open(path, encoding="utf-8") as f:
            self.assertEqual(f.read(), "# Reductions\n\nNo markers here.\n")

    def test_markers_in_the_wrong_order(self):
        folder = self.make_results_dir()
        path = self.readme("<!-- results:end -->\n<!-- results:begin -->\n")
        self.assertFailsCleanly(run(UPDATE_README, path, folder), "comes before")


class TestUpdateChapterReadme(TempDirTest):
    """scripts/update_readme.py --chapter and --all, in a temporary tree shaped like the
    repository: results/h200/ and NN_name/ chapter folders side by side."""

    MARKED = ("# Chapter\n\nThe idea.\n\n<!-- results:begin -->\nstale\n<!-- results:end -->\n\n"
              "After.\n")

    def setUp(self):
        super().setUp()
        self.results = self.make_results_dir(os.path.join("results", "h200"))
        self.rows = plot.read_csv(os.path.join(self.results, "bench.csv"))

    def chapter(self, name, text=MARKED, coarsen=None):
        folder = self.path(name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "README.md"), "w", encoding="utf-8") as f:
            f.write(text)
        if coarsen is not None:
            with open(os.path.join(folder, "reduce.cuh"), "w", encoding="utf-8") as f:
                f.write(f"namespace ch {{\nconstexpr unsigned kCoarsen = {coarsen};\n}}\n")
        return folder

    def update(self, folder):
        done = run(UPDATE_README, "--chapter", folder, self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(folder, "README.md"), encoding="utf-8") as f:
            return done, f.read()

    def row(self, chapter, kernel, op, n):
        return next(r for r in self.rows if (r["chapter"], r["kernel"], r["op"], r["dtype"], r["n"])
                    == (chapter, kernel, op, "f32", n))

    @staticmethod
    def table_after(text, title):
        """The Markdown table lines that follow a bold title line."""
        lines = text[text.index(title):].splitlines()[2:]
        return lines[:next(i for i, line in enumerate(lines) if not line.startswith("|"))]

    def test_chapter_tables(self):
        folder = self.chapter("03_shared")
        _, text = self.update(folder)
        self.assertTrue(text.startswith("# Chapter\n\nThe idea.\n\n<!-- results:begin -->\n"))
        self.assertTrue(text.endswith("<!-- results:end -->\n\nAfter.\n"))
        self.assertNotIn("stale", text)
        for op, cub in (("sum", "cub_sum"), ("max", "cub_max")):
            table = self.table_after(text, f"**f32 {op}**, `reduce_shared`")
            self.assertEqual(table[0], "| n | input | memory | time per call (µs) | GB/s | "
                                       "% of DRAM peak | vs. 02_convergent (GB/s ratio) | "
                                       f"× `{cub}` |")
            self.assertEqual(len(table), 2 + 5)  # header, alignment, 2^20, 2^24, 2^26, 2^28, 2^30
            for line, n, memory, size in zip(table[2:], (2 ** 20, 2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30),
                                             ("L2-resident", "L2-resident", "DRAM", "DRAM", "DRAM"),
                                             ("4 MiB", "64 MiB", "256 MiB", "1 GiB", "4 GiB")):
                r = self.row("03_shared", "reduce_shared", op, n)
                # 02's sum at 2^26 failed its check in the synthetic run: no ratio there.
                prev = next((p for p in self.rows if (p["chapter"], p["op"], p["dtype"], p["n"])
                             == ("02_convergent", op, "f32", n)), None)
                vs_prev = f"{r['gbps'] / prev['gbps']:.3f}" if prev else "—"
                self.assertEqual(r["l2_resident"], memory == "L2-resident")  # as the CSV says
                self.assertEqual(line, f"| 2^{n.bit_length() - 1} | {size} | {memory} | "
                                       f"{r['time_us']:.2f} | {r['gbps']:.1f} | "
                                       f"{r['pct_peak']:.1f} | {vs_prev} | "
                                       f"{r['ratio_to_cub']:.3f} |")
        # Under every table: the GPU, the CSV (linked relative to the chapter) and the command.
        self.assertEqual(text.count("*NVIDIA H200. Generated from [`results/h200/bench.csv`]"
                                    "(../results/h200/bench.csv) by `scripts/update_readme.py "
                                    "--chapter`"), 2)
        self.assertNotIn("Coarsening", text)
        # Running it again changes nothing.
        self.assertEqual(self.update(folder)[1], text)

    def test_first_chapter_has_no_previous_column(self):
        _, text = self.update(self.chapter("01_naive"))
        self.assertNotIn("vs. ", text)
        table = self.table_after(text, "**f32 sum**, `reduce_naive`")
        r = self.row("01_naive", "reduce_naive", "sum", 2 ** 28)
        self.assertIn(f"| 2^28 | 1 GiB | DRAM | {r['time_us']:.2f} | {r['gbps']:.1f} | "
                      f"{r['pct_peak']:.1f} | {r['ratio_to_cub']:.3f} |", table)

    def test_only_the_sections_the_chapter_measured(self):
        # 06_warp_shuffle has f32 sums only: no max table; its previous chapter is 05.
        _, text = self.update(self.chapter("06_warp_shuffle"))
        self.assertIn("**f32 sum**, `reduce_shuffle`", text)
        self.assertNotIn("**f32 max**", text)
        self.assertIn("vs. 05_coarsened (GB/s ratio)", text)

    def test_coarsening_sweep(self):
        folder = self.chapter("05_coarsened", coarsen=16)
        _, text = self.update(folder)
        # The main tables hold the main kernel only, the variants form the sweep.
        main = self.table_after(text, "**f32 sum**, `reduce_coarsened`")
        self.assertFalse(any("_x" in line for line in main))
        self.assertIn("**f32 max**, `reduce_coarsened`", text)
        self.assertIn("vs. 04_multiblock_atomic (GB/s ratio)", main[0])
        sweep = self.table_after(text, "**Coarsening factor sweep**")
        self.assertIn("`reduce_coarsened` itself is factor 16", text)
        self.assertEqual(sweep[0], "| factor | kernel | GB/s, n = 2^20 (L2-resident) | "
                                   "% of DRAM peak | GB/s, n = 2^28 (DRAM) | % of DRAM peak |")
        # Ordered by factor, the main kernel in its place among the variants.
        self.assertEqual([line.split(" | ")[0] for line in sweep[2:]],
                         ["| 1", "| 8", "| 16 (main)", "| 64"])
        for line, kernel in zip(sweep[2:], ("reduce_coarsened_x1", "reduce_coarsened_x8",
                                            "reduce_coarsened", "reduce_coarsened_x64")):
            small = self.row("05_coarsened", kernel, "sum", 2 ** 20)
            big = self.row("05_coarsened", kernel, "sum", 2 ** 28)
            self.assertTrue(line.endswith(f" | `{kernel}` | {small['gbps']:.1f} | "
                                          f"{small['pct_peak']:.1f} | {big['gbps']:.1f} | "
                                          f"{big['pct_peak']:.1f} |"), line)
        # f32 sum, f32 max, f16 sum, bf16 sum, and the sweep
        self.assertEqual(text.count("by `scripts/update_readme.py --chapter`"), 5)
        self.assertIn("**f16 sum**, `reduce_coarsened`", text)
        self.assertNotIn("**Small n**", text)  # chapters before 06 have none

    def test_variants_and_small_n(self):
        _, text = self.update(self.chapter("06_warp_shuffle"))
        main = self.table_after(text, "**f32 sum**, `reduce_shuffle`")
        self.assertFalse(any("unroll8" in line or "plain_launch" in line for line in main))
        variants = self.table_after(text, "**Variants of `reduce_shuffle`**")
        self.assertEqual(variants[0], "| kernel | GB/s, n = 2^20 (L2-resident) | % of peak | × CUB | "
                                      "GB/s, n = 2^28 (DRAM) | % of peak | × CUB |")
        self.assertEqual(len(variants), 2 + 2)  # the main kernel and reduce_shuffle_unroll8
        r = self.row("06_warp_shuffle", "reduce_shuffle_unroll8", "sum", 2 ** 28)
        self.assertTrue(variants[3].startswith("| `reduce_shuffle_unroll8` |"))
        self.assertTrue(variants[3].endswith(f" | {r['gbps']:.1f} | {r['pct_peak']:.1f} | "
                                             f"{r['ratio_to_cub']:.3f} |"), variants[3])
        small = self.table_after(text, "**Small n**")
        self.assertEqual(small[0], "| n | `reduce_shuffle` (µs) | `reduce_shuffle_plain_launch` (µs) | "
                                   "`cub_sum` (µs) | CUB time ÷ this chapter's |")
        mine = self.row("06_warp_shuffle", "reduce_shuffle", "sum", 2 ** 14)
        plain = self.row("06_warp_shuffle", "reduce_shuffle_plain_launch", "sum", 2 ** 14)
        cub = self.row("09_cub_comparison", "cub_sum", "sum", 2 ** 14)
        self.assertIn(f"| 2^14 | {mine['time_us']:.2f} | {plain['time_us']:.2f} | {cub['time_us']:.2f} | "
                      f"{cub['time_us'] / mine['time_us']:.3f} |", small)
        self.assertIn("| 2^20 | ", "\n".join(small))  # sizes without the variant show a dash
        self.assertIn(" | — | ", next(line for line in small if line.startswith("| 2^20 ")))

    def test_dot_chapter_steps_table(self):
        folder = self.chapter("08_dot_product")
        with open(os.path.join(folder, "reduce.cuh"), "w", encoding="utf-8") as f:
            f.write("// dot_shared, then dot_fma, then dot_two_pass\n")
        _, text = self.update(folder)
        self.assertIn("GB/s: the bytes of both vectors read once", text)
        self.assertIn("`× cublas_sdot` and `× cub_transform_reduce`: this chapter's GB/s divided by "
                      "that library kernel's in the same run", text)
        self.assertNotIn("vs. ", text)  # 07 measured no dot product
        steps = self.table_after(text, "**f32 dot, every step**")
        # The steps in the order reduce.cuh names them, then the libraries.
        self.assertEqual([line.split(" | ")[0] for line in steps[2:]],
                         ["| `dot_shared`", "| `dot_fma`", "| `dot_two_pass`", "| `cub_transform_reduce`",
                          "| `cublas_sdot`"])
        self.assertTrue(steps[0].startswith("| kernel | GB/s, n = 2^20 (L2-resident) | % of peak | "
                                            "× `cublas_sdot` |"), steps[0])
        for line, kernel in zip(steps[2:], ("dot_shared", "dot_fma", "dot_two_pass")):
            r = self.row("08_dot_product", kernel, "dot", 2 ** 28)
            self.assertIn(f" | {r['gbps']:.1f} | {r['pct_peak']:.1f} | {r['ratio_to_cub']:.3f} | ", line + " ")
        # The last step, measured for f32 and bf16, gets the detailed tables; the others do not.
        self.assertIn("**f32 dot**, `dot_two_pass`", text)
        self.assertIn("**bf16 dot**, `dot_two_pass`", text)
        self.assertNotIn("**f32 dot**, `dot_fma`", text)
        self.assertNotIn("**f32 dot**, `cublas_sdot`", text)
        detail = self.table_after(text, "**f32 dot**, `dot_two_pass`")
        self.assertEqual(detail[0], "| n | input | memory | time per call (µs) | GB/s | % of DRAM peak | "
                                    "× `cublas_sdot` |")
        r = self.row("08_dot_product", "dot_two_pass", "dot", 2 ** 28)
        self.assertIn(f"| 2^28 | 2 GiB | DRAM | {r['time_us']:.2f} | {r['gbps']:.1f} | {r['pct_peak']:.1f} | "
                      f"{r['ratio_to_cub']:.3f} |", detail)

    def test_cub_chapter_compares_every_chapter(self):
        _, text = self.update(self.chapter("09_cub_comparison"))
        table = self.table_after(text, "**f32 sum** against `cub_sum`")
        sizes = sorted({r["n"] for r in self.rows if r["kernel"] == "cub_sum"})
        self.assertEqual(table[0], "| chapter | kernel | " + " | ".join(
            f"2^{n.bit_length() - 1}" + ("*" if self.row("09_cub_comparison", "cub_sum", "sum", n)["l2_resident"]
                                         else "") for n in sizes) + " |")
        five = next(line for line in table if line.startswith("| 05_coarsened | `reduce_coarsened` |"))
        r = self.row("05_coarsened", "reduce_coarsened", "sum", 2 ** 28)
        self.assertEqual(five.split(" | ")[2 + sizes.index(2 ** 28)], f"{r['ratio_to_cub']:.3f}")
        self.assertFalse(any("_x" in line for line in table))  # main kernels only
        last = table[-1]
        cub = self.row("09_cub_comparison", "cub_sum", "sum", 2 ** 28)
        self.assertTrue(last.startswith("| 09_cub_comparison | `cub_sum`: GB/s |"))
        self.assertIn(f" {cub['gbps']:.1f} ", last)
        self.assertIn("**f16 sum** against `cub_transform_reduce`", text)

    def test_sweep_reads_the_factor_from_the_chapter_source(self):
        folder = self.chapter("05_coarsened", coarsen=8 * 4)
        _, text = self.update(folder)
        self.assertIn("| 32 (main) | `reduce_coarsened` |", text)
        # The repository's own chapter 05 names its factor where the script looks for it.
        shutil.copy(os.path.join(ROOT, "05_coarsened", "reduce.cuh"), folder)
        _, text = self.update(folder)
        self.assertRegex(text, r"\| \d+ \(main\) \| `reduce_coarsened` \|")

    def test_sweep_without_the_factor(self):
        done, text = self.update(self.chapter("05_coarsened"))  # no reduce.cuh
        self.assertIn("kCoarsen", done.stderr)
        sweep = self.table_after(text, "**Coarsening factor sweep**")
        self.assertEqual(len(sweep), 2 + 3)
        self.assertNotIn("(main)", text)

    def test_chapter_errors(self):
        folder = self.chapter("07_two_pass")  # no rows in bench.csv
        self.assertFailsCleanly(run(UPDATE_README, "--chapter", folder, self.results),
                                "no rows of chapter 07_two_pass")
        folder = self.chapter("01_naive", "# No markers\n")
        self.assertFailsCleanly(run(UPDATE_README, "--chapter", folder, self.results),
                                "results:begin")
        with open(os.path.join(folder, "README.md"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "# No markers\n")
        self.assertFailsCleanly(run(UPDATE_README, "--chapter", self.path("nowhere"), self.results),
                                "cannot read")
        self.assertEqual(run(UPDATE_README, "--chapter", folder).returncode, 2)

    def test_all(self):
        top = self.path("README.md")
        with open(top, "w", encoding="utf-8") as f:
            f.write(self.MARKED)
        self.chapter("01_naive")
        self.chapter("05_coarsened", coarsen=16)
        self.chapter("03_shared", "# Not written yet\n")
        done = run(UPDATE_README, "--all", top, self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("skipped", done.stdout)
        with open(top, encoding="utf-8") as f:
            self.assertIn("| 06_warp_shuffle | `reduce_shuffle` |", f.read())
        for name, kernel in (("01_naive", "reduce_naive"), ("05_coarsened", "reduce_coarsened")):
            with open(self.path(name, "README.md"), encoding="utf-8") as f:
                chapter_text = f.read()
            self.assertEqual(chapter_text, self.update(self.path(name))[1])
            self.assertIn(f"**f32 sum**, `{kernel}`", chapter_text)
        with open(self.path("03_shared", "README.md"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "# Not written yet\n")

    def test_all_writes_nothing_when_a_chapter_fails(self):
        top = self.path("README.md")
        with open(top, "w", encoding="utf-8") as f:
            f.write(self.MARKED)
        self.chapter("01_naive")
        self.chapter("07_two_pass")  # markers, but no rows
        done = run(UPDATE_README, "--all", top, self.results)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        self.assertIn("error: ", done.stderr)
        self.assertIn("no rows of chapter 07_two_pass", done.stderr)
        for path in (top, self.path("01_naive", "README.md")):
            with open(path, encoding="utf-8") as f:
                self.assertEqual(f.read(), self.MARKED)


if __name__ == "__main__":
    unittest.main()
