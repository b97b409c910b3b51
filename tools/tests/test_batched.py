"""Tests of chapters 11 and 12's rows (many reductions at once) through the jobs csv, tables,
charts, compare and readmes.

    python3 -m unittest tools.tests.test_batched        (ctest: plot_tests)
"""

import csv
import json
import os
import shutil
import unittest

from tools import bench_csv, chart_labels, chart_style, charts, results, schema
from tools.tests.fixtures import (BATCHED_JSON, MACHINE_TXT, MARKED, MAX_SERIES, Results, batched_json_entries,
                                  cells, copy_drawn, job, json_entries, kept_charts, labelled,
                                  overlapping_labels, ratio, read, saves, table_after,
                                  title, user_charts, write, write_json)



class TestBatched(Results):
    """Chapter 11's rows: many reductions at once, marked by the counters layout_id, segments and
    length (batched.json, beside a few flat rows and the floor)."""
    bench_json = BATCHED_JSON

    def batched(self, kernel, layout, segments, length, op="sum", dtype="f32", heavy=None):
        return next(r for r in self.rows if (r["kernel"], r["layout"], r["segments"], r["length"],
                                             r["op"], r["dtype"], r["params"].get("heavy"))
                    == (kernel, layout, segments, length, op, dtype, heavy))

    def chapter(self, name="11_batched"):
        write(self.path(name, "README.md"), MARKED)
        return self.path(name)

    def update(self, name="11_batched"):
        done = job("readmes", "--chapter", self.chapter(name), self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        return read(self.path(name, "README.md")), done

    def test_shape_columns_come_from_the_counters(self):
        self.assertEqual(len(self.rows), len(json.loads(read(BATCHED_JSON))["benchmarks"]) - 1)
        with open(self.csv, newline="", encoding="utf-8") as f:
            got = {(r["kernel"], r["dtype"], r["op"], r["params"], r["layout"], r["segments"], r["length"])
                   for r in csv.DictReader(f)}
        self.assertIn(("cub_sum", "f32", "sum", "", "flat", "1", str(2 ** 28)), got)
        self.assertIn(("reduce_rows", "f32", "sum", "strategy_id=2", "rows", str(2 ** 16), "256"), got)
        self.assertIn(("reduce_columns_naive", "f32", "sum", "", "columns", str(2 ** 14), "1024"), got)
        self.assertIn(("reduce_segments", "f32", "sum", "heavy=1", "segments", str(2 ** 18), "64"), got)
        self.assertIn(("cub_segmented_reduce", "f32", "sum", "heavy=0", "segments", str(2 ** 18), "64"), got)
        self.assertEqual(self.batched("reduce_rows_blocks_per_row", "rows", 16, 2 ** 20)["variant_of"],
                         "reduce_rows")
        self.assertTrue(self.batched("reduce_columns", "columns", 2 ** 10, 2 ** 10)["l2_resident"])

    def test_equal_n_shapes_do_not_merge(self):
        # Every entry is a row of its own: the shapes of one n, and the two distributions of
        # segments of one number and mean length.
        n = 2 ** 24
        columns = [r for r in self.rows if (r["kernel"], r["dtype"], r["n"]) == ("reduce_columns", "f32", n)]
        self.assertEqual(sorted((r["segments"], r["length"]) for r in columns),
                         [(2 ** 10, 2 ** 14), (2 ** 14, 2 ** 10)])
        uniform, heavy = (self.batched("reduce_segments", "segments", 2 ** 14, 2 ** 10, heavy=h)
                          for h in (0, 1))
        self.assertEqual(uniform["n"], heavy["n"])
        self.assertGreater(uniform["gbps"], heavy["gbps"])
        # Repetitions of one shape still give one row, the median run.
        entries = json.loads(read(BATCHED_JSON))["benchmarks"]
        again = next(e for e in entries if e["name"].startswith("12_segmented/reduce_segments/sum/f32/"))
        write_json(self.path("b.json"), entries + [dict(again, time_us=scale * again["time_us"],
                                                        repetition_index=i)
                                                   for i, scale in ((1, 2.0), (2, 0.5))])
        self.assertEqual(job("csv", self.path("b.json"), self.csv).returncode, 0)
        self.assertEqual(results.read_csv(self.csv), self.rows)

    def test_ratio_to_cub(self):
        for r in results.batched_rows(self.rows):  # CUB's segmented reduction at the same shape
            cub = [c for c in self.rows if c["kernel"] == "cub_segmented_reduce"
                   and schema.batched_key(c) == schema.batched_key(r)]
            if r["layout"] == "columns":
                self.assertEqual(cub, [])
                self.assertIsNone(r["ratio_to_cub"])
            else:
                self.assertEqual(len(cub), 1, r)
                self.assertAlmostEqual(r["ratio_to_cub"], r["gbps"] / cub[0]["gbps"])
        heavy = self.batched("reduce_segments", "segments", 2 ** 18, 64, heavy=1)
        self.assertAlmostEqual(heavy["ratio_to_cub"], heavy["gbps"] / self.batched(
            "cub_segmented_reduce", "segments", 2 ** 18, 64, heavy=1)["gbps"])
        # The flat rows keep theirs: against cub_sum at the same n.
        single, cub = (next(r for r in self.rows if (r["kernel"], r["n"]) == (k, 2 ** 28))
                       for k in ("reduce_single_pass", "cub_sum"))
        self.assertAlmostEqual(single["ratio_to_cub"], single["gbps"] / cub["gbps"])

    def test_bad_layout(self):
        entries = json.loads(read(BATCHED_JSON))["benchmarks"]
        write_json(self.path("b.json"), entries + [dict(batched_json_entries()[0], layout_id=7.0)])
        self.assertFailsCleanly(job("csv", self.path("b.json"), self.path("o.csv")),
                                "layout_id 7", "rows, columns, segments")
        write(self.csv, read(self.csv).replace(",rows,", ",tiles,", 1))
        self.assertFailsCleanly(job("tables", self.results), "layout 'tiles'")

    def test_flat_tables_charts_and_readmes_unchanged_by_batched_rows(self):
        # One folder of the flat rows, one of the same with batched rows beside them.
        folders = {}
        for name, entries in (("flat", json_entries()), ("both", json_entries() + batched_json_entries())):
            folder = folders[name] = self.path(name, "results", "h200")
            os.makedirs(folder)
            write_json(self.path(name, "bench.json"), entries)
            self.assertEqual(job("csv", self.path(name, "bench.json"),
                                 os.path.join(folder, "bench.csv")).returncode, 0)
            shutil.copy(MACHINE_TXT, folder)
            write(self.path(name, "README.md"), MARKED)
            for chapter in ("05_coarsened", "09_cub_comparison", "10_single_pass"):
                write(self.path(name, chapter, "README.md"), MARKED)
            done = job("readmes", "--all", self.path(name, "README.md"), folder)
            self.assertEqual(done.returncode, 0, done.stderr)
            # Its charts and tables.md: those `charts` drew of the same bench.csv, as a user runs it.
            drawn_folder, drawn_run = user_charts(name)
            self.assertEqual(read(os.path.join(folder, "bench.csv")), read(os.path.join(drawn_folder, "bench.csv")))
            self.assertEqual(drawn_run.returncode, 0, drawn_run.stderr)
            copy_drawn(drawn_folder, folder)
        flat, both = (read(os.path.join(folders[name], "tables.md")) for name in ("flat", "both"))
        self.assertTrue(both.startswith(flat + "## Batched reductions\n"))
        for name in charts.CHART_DRAWERS:
            with open(os.path.join(folders["flat"], name), "rb") as a, \
                    open(os.path.join(folders["both"], name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)
        self.assertFalse(os.path.exists(os.path.join(folders["flat"], "batched.png")))
        self.assertTrue(os.path.exists(os.path.join(folders["both"], "batched.png")))
        for readme in ("05_coarsened/README.md", "09_cub_comparison/README.md", "10_single_pass/README.md"):
            self.assertEqual(read(self.path("flat", readme)), read(self.path("both", readme)), readme)
        # The top README gains the batched summary after the flat table, and nothing else changes.
        top_flat, top_both = (read(self.path(name, "README.md")) for name in ("flat", "both"))
        self.assertNotIn("Many reductions at once", top_flat)
        start = top_both.index("Many reductions at once")
        end = top_both.index("\n\n", top_both.index("| 11_batched |", start)) + 2
        self.assertEqual(top_both[:start] + top_both[end:], top_flat)
        summary = table_after(top_both[start:], "Many reductions at once")
        self.assertEqual(summary[0][:4], ["Chapter", "Kernel", "layout", "shapes"])
        for line in summary[1:]:
            mine = [r for r in results.batched_rows(self.rows) if (r["kernel"], r["layout"], r["op"], r["dtype"])
                    == (line[1].strip("`"), line[2], "sum", "f32")]
            self.assertEqual(line[3], str(len(mine)))
            self.assertEqual(line[4], cells(min(mine, key=lambda r: r["gbps"]), "gbps")[0].rstrip("*"))
            self.assertEqual(line[6], cells(max(mine, key=lambda r: r["gbps"]), "gbps")[0].rstrip("*"))
        self.assertEqual([line[2] for line in summary[1:]], ["rows", "columns", "segments"])
        compare = job("compare", folders["both"], folders["flat"])
        self.assertEqual(compare.returncode, 0, compare.stderr)
        self.assertRegex(compare.stdout, r"Rows only in \S+: 0; only in \S+: 0\.")
        self.assertNotIn("11_batched", compare.stdout)

    def test_batched_tables(self):
        self.assertEqual(job("tables", self.results).returncode, 0)
        tables = read(os.path.join(self.results, "tables.md"))
        self.assertEqual([line for line in tables.splitlines() if line.startswith("## ")],
                         ["## sum, f32", "## Batched reductions"])  # the flat rows' before
        batched = tables[tables.index("## Batched reductions"):]
        self.assertEqual([line for line in batched.splitlines() if line.startswith("### ")],
                         ["### sum, f32", "### max, f32", "### sum, f16"])
        table = table_after(batched, "### sum, f32")
        self.assertEqual(table[0], ["Layout", "B or segments", "L or mean length", "Lengths", "Kernel",
                                    "GB/s", "% of DRAM peak", "× `cub_segmented_reduce`",
                                    "× naive mapping"])
        self.assertEqual(len(table) - 1, len([r for r in self.rows if r["layout"] != "flat"
                                              and (r["op"], r["dtype"]) == ("sum", "f32")]))
        columns, naive = (self.batched(k, "columns", 2 ** 14, 2 ** 10)
                          for k in ("reduce_columns", "reduce_columns_naive"))
        shape = ["columns", "2^14", "2^10", ""]
        self.assertIn(shape + ["`reduce_columns`"] + cells(columns, "gbps", "pct_peak")
                      + ["—", ratio(columns, naive)], table)
        self.assertIn(shape + ["`reduce_columns_naive`"] + cells(naive, "gbps", "pct_peak") + ["—", "—"],
                      table)
        heavy, heavy_naive = (self.batched(k, "segments", 2 ** 18, 64, heavy=1)
                              for k in ("reduce_segments", "reduce_segments_naive"))
        self.assertIn(["segments", "2^18", "64", "heavy-tailed", "`reduce_segments`"]
                      + cells(heavy, "gbps", "pct_peak", "ratio_to_cub") + [ratio(heavy, heavy_naive)], table)
        # Layouts in reading order, shapes by length, the lesson before its variants and CUB.
        self.assertEqual([line[0] for line in table[1:]],
                         sorted((line[0] for line in table[1:]), key=schema.LAYOUTS.index))
        self.assertEqual([line[4] for line in table[1:7]],
                         ["`reduce_rows`", "`reduce_rows_thread_per_row`", "`reduce_rows_group_per_row`",
                          "`reduce_rows_block_per_row`", "`reduce_rows_blocks_per_row`",
                          "`cub_segmented_reduce`"])
        # The L2-resident shape is starred, with its footnote.
        small = self.batched("reduce_columns", "columns", 2 ** 10, 2 ** 10)
        self.assertIn(cells(small, "gbps")[0] + "*", sum(table, []))

    def charts(self):
        """The class's charts, drawn once for the run (batched.png saved, the file the tests read),
        copied into this test's results folder: (the `charts` run, {file name: figure})."""
        folder, (done, figures) = kept_charts("batched", self.converted, files={"batched.png"})
        copy_drawn(folder, self.results)
        return done, figures

    def test_batched_chart(self):
        done, figures = self.charts()
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("batched.png", done.stdout)
        with open(os.path.join(self.results, "batched.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        fig = figures["batched.png"]  # chart_batched's figure of the batched rows
        top, ratios = fig.axes
        # Upper panel: the lessons' GB/s (chapters 11 and 12) on a linear axis, under the roofs.
        self.assertEqual((top.get_yscale(), ratios.get_yscale()), ("linear", "log"))
        lines = labelled(top)
        self.assertEqual(list(lines), ["reduce_rows", "reduce_columns", "reduce_segments, uniform",
                                       "reduce_segments, heavy-tailed"])
        self.assertEqual({t.get_text() for t in chart_labels.direct_labels(top)} - {
            "measured device-to-device copy: 4020 GB/s", "theoretical DRAM: 4800 GB/s"}, set(lines))
        rows = lines["reduce_rows"]
        self.assertEqual(list(rows.get_xdata()), [4, 256, 2 ** 14, 2 ** 20])
        self.assertEqual(list(rows.get_ydata()),
                         [self.batched("reduce_rows", "rows", 2 ** 24 // length, length)["gbps"]
                          for length in (4, 256, 2 ** 14, 2 ** 20)])
        # Two shapes of columns have L = 2^10: the chart draws the larger n.
        columns = lines["reduce_columns"]
        self.assertEqual(list(columns.get_xdata()), [2 ** 10, 2 ** 14])
        self.assertEqual(columns.get_ydata()[0],
                         self.batched("reduce_columns", "columns", 2 ** 14, 2 ** 10)["gbps"])
        heavy = lines["reduce_segments, heavy-tailed"]
        self.assertEqual(list(heavy.get_xdata()), [64, 1024])
        self.assertIn(4800.0, [line.get_ydata()[0] for line in top.get_lines()])  # the DRAM roof
        # Lower panel: each as a multiple of CUB's segmented reduction at the same shape; the
        # columns, which CUB cannot reduce, are left out.
        lines = labelled(ratios)
        self.assertEqual(list(lines), ["reduce_rows", "reduce_segments, uniform", "reduce_segments, heavy-tailed"])
        for label, layout, heavy in (("reduce_rows", "rows", None), ("reduce_segments, uniform", "segments", 0),
                                     ("reduce_segments, heavy-tailed", "segments", 1)):
            kernel = label.split(",")[0]
            for length, y in zip(lines[label].get_xdata(), lines[label].get_ydata()):
                segments = 2 ** 24 // length
                self.assertAlmostEqual(y, self.batched(kernel, layout, segments, length, heavy=heavy)["gbps"]
                                       / self.batched("cub_segmented_reduce", layout, segments, length,
                                                      heavy=heavy)["gbps"])
        self.assertIn([1.0, 1.0], [list(line.get_ydata()) for line in ratios.get_lines()])  # CUB = 1
        self.assertIn("columns: CUB has none", ratios.get_title())
        for ax in fig.axes:
            self.assertLessEqual(chart_style.series_count(ax), MAX_SERIES)
        self.assertEqual(overlapping_labels(fig, others=True), [])
        self.assertTrue(title(fig).startswith("Batched f32 sums: the lessons run at "))
        # A run without batched rows leaves no batched chart behind.
        bench_csv.write_csv(results.flat_rows(self.rows), self.csv)
        with saves():
            done = job("charts", self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("removed", done.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.results, "batched.png")))
        self.assertNotIn("Batched", read(os.path.join(self.results, "tables.md")))

    def test_teaching_kernels_beside_the_tuned_ones(self):
        # A teaching kernel of the rows, at one shape, at 0.8 of the tuned kernel's GB/s.
        entries = json.loads(read(BATCHED_JSON))["benchmarks"]
        tuned = next(e for e in entries if e["name"].startswith("11_batched/reduce_rows/sum/f32/")
                     and e.get("label", "") == "")
        teaching = dict(tuned, name=tuned["name"].replace("reduce_rows/", "reduce_rows_teaching/"),
                        label="variant of reduce_rows", param_teaching=1.0, gbps=tuned["gbps"] * 0.8,
                        time_us=tuned["time_us"] / 0.8)
        teaching.pop("param_strategy_id", None)
        write_json(self.path("t.json"), entries + [teaching])
        self.assertEqual(job("csv", self.path("t.json"), self.csv).returncode, 0)
        self.rows = results.read_csv(self.csv)
        text, _ = self.update()
        table = table_after(text, "**The teaching kernels against the tuned ones**")
        self.assertEqual(table[0], ["teaching kernel", "tuned kernel", "B", "L", "memory", "teaching GB/s",
                                    "tuned GB/s", "teaching ÷ tuned"])
        self.assertEqual(len(table), 2)
        self.assertEqual(table[1][:2], ["`reduce_rows_teaching`", "`reduce_rows`"])
        self.assertEqual(table[1][-1], "0.800")
        # The teaching kernel is not one of the forced mappings.
        self.assertNotIn("reduce_rows_teaching", "".join(sum(table_after(text, "**Rows, f32 sum"), [])))

    def test_chapter_readme(self):
        self.assertEqual(self.charts()[0].returncode, 0)
        text, _ = self.update()
        self.assertTrue(text.startswith("# Chapter\n\nThe idea.\n\n<!-- results:begin -->\nMeasured on "
                                        "**NVIDIA H200**. Many reductions in one call"))
        self.assertTrue(text.endswith(f"![{dict(schema.CHARTS)['batched.png']}](../results/h200/batched.png)\n"
                                      "<!-- results:end -->\n\nAfter.\n"))
        self.assertEqual([line for line in text.splitlines() if line.startswith("**")], [
            "**f32 sum**, the lessons: each layout at every shape measured",
            "**f16 sum**, the lessons: each layout at every shape measured",
            "**Rows, f32 sum: the measured alternatives**: the lesson's automatic choice of mapping "
            "against each mapping forced (its variants), GB/s; the fastest of each line in bold."])
        self.assertEqual(text.count("*NVIDIA H200. Generated from [`results/h200/bench.csv`]"
                                    "(../results/h200/bench.csv) by `python3 -m tools readmes "
                                    "--chapter`"), 3)
        lessons = table_after(text, "**f32 sum**, the lessons")
        self.assertEqual(lessons[0], ["layout", "B", "L", "kernel", "memory", "GB/s", "% of DRAM peak",
                                      "× `cub_segmented_reduce`", "× naive mapping"])
        self.assertEqual([line[3] for line in lessons[1:]], ["`reduce_rows`"] * 4 + ["`reduce_columns`"] * 3)
        rows = self.batched("reduce_rows", "rows", 2 ** 16, 256)
        self.assertIn(["rows", "2^16", "256", "`reduce_rows`", "DRAM"]
                      + cells(rows, "gbps", "pct_peak", "ratio_to_cub") + ["—"], lessons)
        columns, naive = (self.batched(k, "columns", 2 ** 10, 2 ** 10)
                          for k in ("reduce_columns", "reduce_columns_naive"))
        self.assertIn(["columns", "2^10", "2^10", "`reduce_columns`", "L2-resident"]
                      + cells(columns, "gbps", "pct_peak") + ["—", ratio(columns, naive)], lessons)
        self.assertNotIn("segments", "".join(sum(lessons, [])))
        self.assertEqual(len(table_after(text, "**f16 sum**, the lessons")), 3)
        mappings = table_after(text, "**Rows, f32 sum")
        self.assertEqual(mappings[0], ["B", "L", "memory", "automatic choice", "`reduce_rows` (automatic)",
                                       "`reduce_rows_thread_per_row`", "`reduce_rows_group_per_row`",
                                       "`reduce_rows_block_per_row`", "`reduce_rows_blocks_per_row`"])
        self.assertEqual([line[:4] for line in mappings[1:]],
                         [["2^22", "4", "DRAM", "`thread_per_row`"],
                          ["2^16", "256", "DRAM", "`group_per_row`"],
                          ["2^10", "2^14", "DRAM", "`block_per_row`"],
                          ["16", "2^20", "DRAM", "`blocks_per_row`"]])
        kernels = [k.replace(" (automatic)", "").strip("`") for k in mappings[0][4:]]
        for line in mappings[1:]:
            length = int(line[1]) if "^" not in line[1] else 2 ** int(line[1][2:])
            measured = [self.batched(k, "rows", 2 ** 24 // length, length) for k in kernels]
            best = max(r["gbps"] for r in measured)
            self.assertEqual(line[4:], [f"**{c}**" if r["gbps"] == best else c
                                        for r, c in zip(measured, (cells(r, "gbps")[0] for r in measured))])
            self.assertEqual(sum(cell.startswith("**") for cell in line), 1)
        self.assertEqual(self.update()[0], text)  # running it again changes nothing

    def test_segmented_chapter_readme(self):
        self.assertEqual(self.charts()[0].returncode, 0)
        text, _ = self.update("12_segmented")
        self.assertIn("Many reductions in one call: a result per segment", text)
        self.assertEqual([line for line in text.splitlines() if line.startswith("**")], [
            "**f32 sum**, the lessons: each layout at every shape measured",
            "**f16 sum**, the lessons: each layout at every shape measured"])
        lessons = table_after(text, "**f32 sum**, the lessons")
        self.assertEqual(lessons[0], ["layout", "segments", "mean length", "lengths", "kernel", "memory",
                                      "GB/s", "% of DRAM peak", "× `cub_segmented_reduce`",
                                      "× naive mapping"])
        self.assertEqual([line[4] for line in lessons[1:]], ["`reduce_segments`"] * 4)
        uniform, naive = (self.batched(k, "segments", 2 ** 14, 2 ** 10, heavy=0)
                          for k in ("reduce_segments", "reduce_segments_naive"))
        self.assertIn(["segments", "2^14", "2^10", "uniform", "`reduce_segments`", "DRAM"]
                      + cells(uniform, "gbps", "pct_peak", "ratio_to_cub") + [ratio(uniform, naive)], lessons)
        self.assertEqual(len(table_after(text, "**f16 sum**, the lessons")), 2)

    def test_rows_of_the_old_numbering_read_under_the_new(self):
        # A bench.csv from before segments had a chapter of their own names its segments rows
        # chapter 11's and its custom operators chapter 12's; they read under today's names.
        rows = results.read_csv(self.csv)
        with open(self.csv, newline="", encoding="utf-8") as f:
            lines = list(csv.reader(f))
        self.assertIn("12_segmented", {line[0] for line in lines[1:]})
        with open(self.csv, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([lines[0]] + [["11_batched" if line[0] == "12_segmented" else line[0]]
                                                  + line[1:] for line in lines[1:]])
        self.assertEqual(results.read_csv(self.csv), rows)
        self.assertEqual(results.chapter_of("12_custom_ops", "flat"), "13_custom_ops")
        self.assertEqual(results.chapter_of("11_batched", "rows"), "11_batched")

    def test_chapter_readme_without_the_chart_or_the_rows(self):
        text, done = self.update()
        self.assertNotIn("batched.png", text)
        self.assertIn("no batched.png", done.stderr)
        # The other chapters see the flat rows only: 11 has none; the top README leaves it out.
        self.assertFailsCleanly(job("readmes", "--chapter", self.chapter("12_next"), self.results),
                                "no rows of chapter 12_next")
        write(self.path("README.md"), MARKED)
        done = job("readmes", self.path("README.md"), self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        table = table_after(read(self.path("README.md")), "f32 sum per chapter")
        self.assertEqual([line[1] for line in table[1:]], ["`reduce_single_pass`", "`cub_sum`"])
        # Without batched rows, chapter 11 is a chapter without rows.
        bench_csv.write_csv(results.flat_rows(self.rows), self.csv)
        self.assertFailsCleanly(job("readmes", "--chapter", self.chapter(), self.results),
                                "no rows of chapter 11_batched")


if __name__ == "__main__":
    unittest.main()
