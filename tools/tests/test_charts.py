"""Tests of the job charts: each chart's series, labels and message, on the test JSON's rows and on
the published results/h200.

    python3 -m unittest tools.tests.test_charts        (ctest: plot_tests)
"""

import os
import unittest

from tools import bench_csv, chart_labels, chart_style, charts, charts_dtypes, charts_n, results, schema
from tools.tests.fixtures import (MACHINE_TXT, MAX_SERIES, PUBLISHED, Results, copy_files, draw_chart,
                                  draw_kept, job, labelled, overlapping_labels, read, saves, saves_caught,
                                  title, without_columns)


class TestCharts(Results):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.figures = {}  # the charts of the test JSON's rows, drawn once for the class
        cls.addClassCleanup(lambda: [chart_style.pyplot().close(f) for f in cls.figures.values()])

    def test_one_colour_per_chapter_neighbours_apart(self):
        from matplotlib.colors import to_rgb
        colors = chart_style.kernel_colors([r for r in self.rows if not r["variant_of"]])
        leads = dict(results.lesson_kernels(self.rows))  # chapter -> its last lesson kernel
        self.assertEqual(len(leads), 9)
        for chapter, kernel in leads.items():  # the lead kernel in the chapter's colour
            self.assertEqual(to_rgb(colors[chapter, kernel]), to_rgb(chart_style.chapter_color(chapter, 0)))
        # Consecutive chapters (01..10) far apart in RGB, and from the libraries' black and grey.
        palette = [to_rgb(c) for c in chart_style.CHAPTER_PALETTE]
        for a, b in zip(palette, palette[1:] + [to_rgb("black"), to_rgb("dimgray")]):
            self.assertGreater(sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5, 0.5, (a, b))
        self.assertEqual(colors["09_cub_comparison", "cub_sum"], "black")
        self.assertEqual(colors["08_dot_product", "cublas_sdot"], "dimgray")
        # 08's steps: in its colour in kernel_colors; dot.png gives each step before the lead
        # kernel a colour of its own (step_colors), far from the others, and a marker of its own.
        steps = [("08_dot_product", k) for k in ("dot_shared", "dot_coarsened", "dot_fma", "dot_two_pass")]
        self.assertEqual({to_rgb(colors[k]) for k in steps}, {to_rgb(chart_style.chapter_color("08_dot_product", 0))})
        own = [to_rgb(charts_dtypes.step_colors(self.rows, colors)[k]) for k in steps]
        self.assertEqual(own[-1], to_rgb(chart_style.chapter_color("08_dot_product", 0)))
        for i, a in enumerate(own):
            for b in own[i + 1:]:
                self.assertGreater(sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5, 0.3, (a, b))
        self.assertEqual(sorted(charts_dtypes.step_markers(self.rows).values()), sorted(charts_dtypes.STEP_MARKERS[:3]))
        self.assertNotIn("roofline.png", [name for name, _ in schema.CHARTS])

    def test_placeholders_when_rows_are_missing(self):
        # Only f32 sums at one size, all L2-resident: the dtype and dot charts say there is
        # nothing to show, the bar chart falls back to the largest n.
        rows = [r for r in self.rows if (r["op"], r["dtype"], r["n"]) == ("sum", "f32", 2 ** 20)]
        bench_csv.write_csv(rows, self.csv)
        done = job("charts", self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        for name in charts.CHART_DRAWERS:
            self.assertGreater(os.path.getsize(os.path.join(self.results, name)), 1000, name)
        self.assertEqual(results.pick_dram_n(rows), (2 ** 20, "largest measured; 2^28 not in bench.csv"))

    def chart(self, name, rows=None):
        """One chart of CHART_DRAWERS, drawn as `charts` draws it (no variant), kept open (that of
        the class's own rows drawn once, the first time a test asks for it)."""
        if rows is None and name in self.figures:
            return self.figures[name]
        shown = [r for r in (self.rows if rows is None else rows) if not r["variant_of"]]
        fig = draw_chart(charts.CHART_DRAWERS[name], shown, results.Machine(MACHINE_TXT),
                         chart_style.kernel_colors(shown), os.path.join(self.results, name))
        if rows is None:
            self.figures[name] = fig
        else:
            self.addCleanup(chart_style.pyplot().close, fig)
        return fig

    def test_every_chart_tells_its_story_at_a_glance(self):
        for name in charts.CHART_DRAWERS:
            fig = self.chart(name)
            for ax in fig.axes:  # at most 6 series a panel, named on the chart, not in a legend
                self.assertLessEqual(chart_style.series_count(ax), MAX_SERIES, name)
                if name != "launch_cost.png":
                    self.assertLessEqual(len(ax.get_legend().texts) if ax.get_legend() else 0, 2, name)
            self.assertEqual(overlapping_labels(fig, others=True), [], name)
            self.assertIn(": ", title(fig), name)  # a message, not a caption
        self.assertEqual(chart_labels.chapter_numbers(["05_a", "06_b", "07_c", "10_d"]), "05–07 and 10")
        self.assertEqual(chart_labels.group_names(["01_a", "09_cub_comparison", "02_b"]), "chapters 01, 02 and CUB")

    def test_bandwidth_chart(self):
        fig = self.chart("bandwidth_vs_n.png")
        top, ratios = fig.axes
        self.assertEqual((top.get_yscale(), ratios.get_yscale()), ("log", "linear"))
        # The chapters at CUB's bandwidth at 2^28 (≥ 0.9× CUB) are a band in the log panel and
        # lines in the linear one, their GB/s divided by cub_sum's at the same n.
        sums = [r for r in results.select(self.rows, "sum", "f32") if not r["variant_of"]]
        cub = {r["n"]: r for r in sums if r["kernel"] == "cub_sum"}
        close = [k for k in results.lesson_kernels(sums) if self.row(k[1], 2 ** 28)["gbps"] >= 0.9 * cub[2 ** 28]["gbps"]]
        self.assertEqual([c for c, _ in close], ["05_coarsened", "06_warp_shuffle", "07_two_pass", "10_single_pass"])
        self.assertEqual(list(labelled(top)), [chart_style.legend_label(c, k) for c, k in results.lesson_kernels(sums)
                                               if (c, k) not in close] + ["09_cub_comparison: cub_sum (baseline)"])
        band, = [c for c in top.collections if not c.get_label().startswith("_")]
        self.assertEqual(band.get_label(), "chapters 05–07 and 10")
        edges = band.get_paths()[0].vertices
        for n in cub:
            ys = [y for x, y in edges if x == n]
            gbps = [self.row(k, n)["gbps"] for _, k in close]
            self.assertAlmostEqual(min(ys), min(gbps))
            self.assertAlmostEqual(max(ys), max(gbps))
        self.assertEqual(list(labelled(ratios)), [chart_style.legend_label(*k) for k in close])
        for (_, kernel), line in zip(close, labelled(ratios).values()):
            self.assertEqual(list(line.get_xdata()), sorted(cub))
            for n, y in zip(line.get_xdata(), line.get_ydata()):
                self.assertAlmostEqual(y, self.row(kernel, n)["gbps"] / cub[n]["gbps"])
        self.assertIn([1.0, 1.0], [list(line.get_ydata()) for line in ratios.get_lines()])  # CUB = 1
        self.assertEqual({t.get_text() for t in chart_labels.direct_labels(top)},
                         {"01_naive", "02_convergent", "03_shared", "04_multiblock_atomic",
                          "cub_sum (baseline)", "05–07 and 10: × CUB below"})
        self.assertLessEqual({"05_coarsened", "06_warp_shuffle", "07_two_pass", "10_single_pass"},
                             {t.get_text() for t in chart_labels.direct_labels(ratios)})
        at = [self.row(k, 2 ** 28)["gbps"] / cub[2 ** 28]["gbps"] for _, k in close]
        self.assertIn(f"f32 sum at n = 2^28: chapters 05–07 and 10 run at {min(at):.2f}–{max(at):.2f}× CUB",
                      title(fig))
        # Without CUB's rows, one panel of every kernel.
        fig = self.chart("bandwidth_vs_n.png", [r for r in self.rows if r["kernel"] != "cub_sum"])
        self.assertEqual(len(fig.axes), 1)

    def test_time_chart(self):
        ax = self.chart("time_vs_n.png").axes[0]
        lines = labelled(ax)
        self.assertEqual(list(lines), ["03_shared: reduce_shared", "07_two_pass: reduce_two_pass",
                                       "09_cub_comparison: cub_sum (baseline)",
                                       "10_single_pass: reduce_single_pass", "empty kernel"])
        ns = [2 ** 10, 2 ** 14, 2 ** 20, 2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30]
        self.assertEqual(list(lines["07_two_pass: reduce_two_pass"].get_ydata()),
                         [self.row("reduce_two_pass", n)["time_us"] for n in ns])
        floor = results.read_floor(self.results)
        self.assertEqual(list(lines["empty kernel"].get_ydata()), [floor["time_us"]] * 2)
        dotted = [line for line in ax.get_lines() if line.get_linestyle() == ":"]  # one call from idle
        self.assertIn([self.row("reduce_single_pass", n)["latency_us"] for n in ns],
                      [list(line.get_ydata()) for line in dotted])
        self.assertIn([floor["latency_us"]] * 2, [list(line.get_ydata()) for line in dotted])
        self.assertEqual({t.get_text() for t in chart_labels.direct_labels(ax)},
                         {"03_shared", "07_two_pass", "cub_sum (baseline)", "10_single_pass"})

    def test_dtypes_chart(self):
        ax = self.chart("dtypes.png").axes[0]
        bars = {c.get_label(): c for c in ax.containers}
        self.assertEqual(list(bars), ["f32", "f16", "bf16"])
        # One group per chapter with 16-bit rows, at 2^28: 05's lead kernel, and CUB's baseline
        # call of each type.
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()],
                         ["05_coarsened\nreduce_coarsened", "09_cub_comparison\ncub_sum / cub_transform_reduce"])
        for dtype, kernels in (("f32", ["reduce_coarsened", "cub_sum"]),
                               ("f16", ["reduce_coarsened", "cub_transform_reduce"]),
                               ("bf16", ["reduce_coarsened", "cub_transform_reduce"])):
            self.assertEqual([patch.get_height() for patch in bars[dtype]],
                             [self.row(k, 2 ** 28, dtype=dtype)["gbps"] for k in kernels])
        texts = [t.get_text() for t in ax.texts]
        f16, f32 = (self.row("reduce_coarsened", 2 ** 28, dtype=d)["gbps"] for d in ("f16", "f32"))
        self.assertIn(f"f16  {f16 / f32:.2f}× f32", texts)
        self.assertEqual(chart_style.series_count(ax), 3)

    def test_dot_chart(self):
        from matplotlib.colors import to_rgb
        fig = self.chart("dot.png")
        upper, lower = fig.axes
        self.assertEqual((upper.get_yscale(), lower.get_yscale()), ("linear", "log"))
        steps = ["dot_shared", "dot_coarsened", "dot_fma", "dot_two_pass"]
        lines = labelled(upper)
        self.assertEqual(list(lines), [f"08_dot_product: {k}, f32" for k in steps])
        self.assertEqual(len({to_rgb(line.get_color()) for line in lines.values()}), 4)
        for kernel, line in zip(steps, lines.values()):  # × cuBLAS at the same n
            for n, y in zip(line.get_xdata(), line.get_ydata()):
                self.assertAlmostEqual(y, self.row(kernel, n, "dot")["gbps"]
                                       / self.row("cublas_sdot", n, "dot")["gbps"])
        self.assertIn([1.0, 1.0], [list(line.get_ydata()) for line in upper.get_lines()])
        self.assertEqual(list(labelled(lower)), ["08_dot_product: dot_two_pass, bf16",
                                                 "08_dot_product: dot_two_pass, f32",
                                                 "08_dot_product: cub_transform_reduce (baseline), bf16"])
        # The bf16 line's annotation: its GB/s where it is furthest below its comparison (no f16
        # here: CUB's bf16 call).
        bf16 = [self.row("dot_two_pass", n, "dot", "bf16") for n in (2 ** 24, 2 ** 26, 2 ** 28, 2 ** 30)]
        worst = min(bf16, key=lambda r: r["ratio_to_cub"])
        note, = [t.get_text() for t in chart_labels.direct_labels(lower) if t.get_text().startswith("bf16")]
        self.assertIn(f"{worst['gbps']:.0f} GB/s at n = {schema.pow2_label(worst['n'])}", note)
        self.assertIn(f"{worst['ratio_to_cub']:.2f}× CUB", note)
        # With f16 rows, the drop is measured against them.
        rows = [dict(r, dtype="f16", gbps=(4 if r is bf16[1] else 2) * r["gbps"]) for r in bf16] + bf16
        row, f16, _ = charts_dtypes.bf16_drop(rows)
        self.assertEqual((row["n"], f16), (bf16[1]["n"], 0.25))

    def test_tick_labels_never_collide(self):
        plt = chart_style.pyplot()
        fig, ax = plt.subplots()
        self.addCleanup(plt.close, fig)
        chart_style.log2_n_axis(ax, [8, 32, 34, 128, 1023, 1024, 1067, 3000], plt)
        self.assertEqual(list(ax.get_xticks()), [8, 32, 128, 1024, 3000])

    def draw_launch_cost(self, rows):
        """The launch-cost chart of rows into the results folder, its figure kept for a look."""
        figures = []
        shown = [r for r in rows if not r["variant_of"]]
        with saves_caught(lambda fig, path: figures.append(fig)):
            charts_n.chart_launch_cost(shown, results.Machine(os.path.join(self.results, "machine.txt")),
                                   chart_style.kernel_colors(shown),
                                   os.path.join(self.results, "launch_cost.png"))
        self.addCleanup(chart_style.pyplot().close, figures[0])
        return figures[0]

    def test_launch_cost_chart(self):
        fig = self.draw_launch_cost(self.rows)
        left, right = fig.axes
        floor = results.read_floor(self.results)
        small = [2 ** 10, 2 ** 14, 2 ** 20]  # the sizes measured up to 2^22
        single, cub = "10_single_pass: reduce_single_pass", "09_cub_comparison: cub_sum (baseline)"

        def lines(ax):
            return {line.get_label(): line for line in ax.get_lines()
                    if not line.get_label().startswith("_")}

        self.assertEqual(list(lines(left)), ["07_two_pass: reduce_two_pass", cub, single])
        self.assertEqual(list(lines(right)), list(lines(left)) + [
            f"{cub}, in a CUDA graph", f"{single}, in a CUDA graph"])
        for ax, field, label, kernel in ((left, "latency_us", single, "reduce_single_pass"),
                                         (right, "b2b_us", single, "reduce_single_pass"),
                                         (right, "graph_us", f"{cub}, in a CUDA graph", "cub_sum")):
            line = lines(ax)[label]
            self.assertEqual(list(line.get_xdata()), small)
            self.assertEqual(list(line.get_ydata()), [self.row(kernel, n)[field] for n in small])
        self.assertEqual(lines(right)[f"{single}, in a CUDA graph"].get_linestyle(), "--")
        # The floor: a dotted horizontal line per way of timing it, labelled "empty kernel".
        for ax, fields in ((left, ["latency_us"]), (right, ["b2b_us", "graph_us"])):
            flat = [line.get_ydata()[0] for line in ax.get_lines()
                    if line.get_linestyle() == ":" and line.get_label().startswith("_")]
            self.assertEqual(flat, [floor[field] for field in fields])
            self.assertTrue(all(t.get_text().startswith("empty kernel") for t in ax.texts))
            self.assertEqual(len(ax.texts), len(fields))

    def test_launch_cost_chart_without_a_floor_or_chapter_10(self):
        os.remove(self.floor_csv)
        self.assertEqual([len(ax.texts) for ax in self.draw_launch_cost(self.rows).axes], [0, 0])
        fig = self.draw_launch_cost([r for r in self.rows if r["chapter"] != "10_single_pass"])
        self.assertEqual(len(fig.axes), 1)  # the placeholder
        self.assertIn("No f32 sum rows of 10_single_pass", fig.axes[0].texts[0].get_text())
        # Neither stops `charts`, nor does a bench.csv from before the loop and graph columns.
        without_columns(self.csv, {"b2b_us", "graph_us"})
        with saves({"launch_cost.png"}):
            done = job("charts", self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertGreater(os.path.getsize(os.path.join(self.results, "launch_cost.png")), 1000)
        self.assertNotIn("200 calls in a loop", read(os.path.join(self.results, "tables.md")))

    @unittest.skipUnless(os.path.exists(os.path.join(PUBLISHED, "bench.csv")), "no results/h200")
    def test_published_h200_results(self):
        folder = self.path("published")
        os.makedirs(folder)  # a copy of what `charts` reads: the test never rewrites the published files
        copy_files(PUBLISHED, folder, ["bench.csv", "machine.txt", "floor.csv"])
        drawn_figures = {}  # each chart's figure, as `charts` drew it
        done = draw_kept(folder, figures=drawn_figures)
        for fig in drawn_figures.values():
            self.addCleanup(chart_style.pyplot().close, fig)
        self.assertEqual(done.returncode, 0, done.stderr)
        # Its charts keep the rules too: at most 6 series a panel, no label over another.
        figures = {name: drawn_figures[name] for name in list(charts.CHART_DRAWERS) + ["batched.png"]}
        for name, fig in figures.items():
            for ax in fig.axes:
                self.assertLessEqual(chart_style.series_count(ax), MAX_SERIES, name)
            self.assertEqual(overlapping_labels(fig, others=True), [], name)
        # The batched chart's ticks: 2^5 and a mean length of 34 no longer share a place.
        ticks = figures["batched.png"].axes[-1].get_xticks()
        self.assertTrue(all(b / a >= 1.5 for a, b in zip(ticks, ticks[1:])), ticks)


if __name__ == "__main__":
    unittest.main()
