"""Tests of the jobs csv, charts, tables, compare and readmes on synthetic data (tools/tests/testdata).

    python3 -m unittest tools.tests.test_plot        (ctest: plot_tests)

One test of each job runs it as a subprocess, as a user runs it; the others call the same entry
point in this process (job()), which gives the same exit status, stdout and stderr without starting
Python and matplotlib again. The JSON is converted once per class, and each chart set drawn once
where several tests look at it (drawn()), so that the tests stay quick.
"""

import contextlib
import copy
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TESTDATA = os.path.join(HERE, "testdata")
BENCH_JSON = os.path.join(TESTDATA, "bench.json")
BATCHED_JSON = os.path.join(TESTDATA, "batched.json")  # chapter 11's rows, a few flat ones, the floor
MACHINE_TXT = os.path.join(TESTDATA, "machine.txt")
PUBLISHED = os.path.join(ROOT, "results", "h200")
MARKED = "# Chapter\n\nThe idea.\n\n<!-- results:begin -->\nstale\n<!-- results:end -->\n\nAfter.\n"
# The f32 sum lead kernel of every chapter that has one, in chapter order.
F32_SUM_LEADS = ["`reduce_naive`", "`reduce_convergent`", "`reduce_shared`", "`reduce_atomic`",
                 "`reduce_coarsened`", "`reduce_warp_shuffle`", "`reduce_two_pass`",
                 "`reduce_single_pass`"]
FLOOR_NAME = "floor/empty_kernel/none/none/0/iterations:1/manual_time"

from tools import (__main__ as cli, bench_csv, chart_labels, chart_style, charts, charts_batched,  # noqa: E402
                   charts_dtypes, charts_n, readme_custom_ops, results, schema, tables)

CHART_MODULES = (chart_style, charts_n, charts_dtypes, charts_batched)


def run(job, *args):
    """python3 -m tools JOB ARGS, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "tools", job, *args], capture_output=True, text=True, cwd=ROOT)


def job(name, *args):
    """python3 -m tools JOB ARGS in this process: its exit status and what it printed, as run()
    returns them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([name, *args])
        except SystemExit as e:  # argparse's usage errors
            code = e.code
    return subprocess.CompletedProcess([name, *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def saves_caught(catch):
    """chart_style.save, as each chart module calls it, replaced by catch(fig, path)."""
    with contextlib.ExitStack() as stack:
        for module in CHART_MODULES:
            stack.enter_context(mock.patch.object(module, "save", catch))
        yield


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def json_entries():
    return json.loads(read(BENCH_JSON))["benchmarks"]


def kernel_entries():
    """The test JSON's entries of the chapters' and the libraries' kernels: all but the floor."""
    return [e for e in json_entries() if e["name"] != FLOOR_NAME]


def batched_json_entries():
    """batched.json's entries of chapter 11's batched rows (those with a layout_id)."""
    return [e for e in json.loads(read(BATCHED_JSON))["benchmarks"] if "layout_id" in e]


def write_json(path, entries):
    write(path, json.dumps({"context": {}, "benchmarks": entries}))


def without_columns(path, dropped):
    """Rewrites the CSV at path without the columns `dropped`, as an older benchmark wrote it."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        columns = [c for c in reader.fieldnames if c not in dropped]
        rows = list(reader)
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, columns, extrasaction="ignore", lineterminator="\n")
        out.writeheader()
        out.writerows(rows)


def table_after(text, title):
    """The cells of the Markdown table that follows a title line: header, then body rows."""
    lines = text[text.index(title):].splitlines()[2:]
    lines = lines[:next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[:1] + lines[2:]]


def cells(row, *fields):
    """A row's fields as the tables print them."""
    return [tables.CELL_FORMATS[field].format(row[field]) for field in fields]


def ratio(row, other):
    return f"{row['gbps'] / other['gbps']:.3f}"


MAX_SERIES = 6  # what a chart's panel may draw (results/README's rule: one story at a glance)


def draw_chart(draw, *args):
    """A chart function's figure, chart_style.save caught so that it stays open for a look."""
    figures = []
    with saves_caught(lambda fig, path: figures.append(fig)):
        draw(*args)
    return figures[0]


def draw_kept(*args, figures):
    """`python3 -m tools charts ARGS` in this process, each chart saved as the job saves it and its
    figure kept open in figures[file name] for a look (closed by the caller)."""
    save = chart_style.save

    def save_and_keep(fig, path):
        figures[os.path.basename(path)] = fig
        with mock.patch.object(chart_style.pyplot(), "close"):
            save(fig, path)

    with saves_caught(save_and_keep):
        return job("charts", *args)


_DRAWN = {}


def drawn(key, fill):
    """A results folder whose charts were drawn once for the whole module: fill(folder) converts
    and draws into it (returning what the tests look at), the first time key is asked for; later
    callers get the same (folder, what fill returned). Tests copy the files they need."""
    if key not in _DRAWN:
        folder = tempfile.mkdtemp(prefix=f"plot_{key}_")
        unittest.addModuleCleanup(shutil.rmtree, folder)
        _DRAWN[key] = folder, fill(folder)
    return _DRAWN[key]


def copy_files(source, target, names):
    for name in names:
        shutil.copy(os.path.join(source, name), target)


def default_charts():
    """The test JSON's charts and tables.md, drawn by `python3 -m tools charts` once for the
    module: (folder, that run)."""
    def fill(folder):
        done = run("csv", BENCH_JSON, os.path.join(folder, "bench.csv"))
        assert done.returncode == 0, done.stderr
        shutil.copy(MACHINE_TXT, folder)
        return run("charts", folder)
    return drawn("default", fill)


def kept_charts(key, converted):
    """The charts of a class's converted folder, drawn once for the module in this process, their
    figures kept: (folder, (the run, {file name: figure}))."""
    def fill(folder):
        copy_files(converted, folder, os.listdir(converted))
        figures = {}
        unittest.addModuleCleanup(lambda: [chart_style.pyplot().close(f) for f in figures.values()])
        return draw_kept(folder, figures=figures), figures
    return drawn(key, fill)


def copy_drawn(folder, target):
    """The charts and tables.md a `charts` run wrote in folder, copied into target."""
    copy_files(folder, target, [name for name in os.listdir(folder) if name.endswith(".png") or name == "tables.md"])


def labelled(ax):
    """{label: line} of a panel's labelled lines (its series; furniture is unlabelled)."""
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}


def text_boxes(fig):
    """(text, box in pixels) of every direct label of the figure, its text alone (no leader)."""
    from matplotlib.text import Text
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [(t.get_text(), Text.get_window_extent(t, renderer))
            for ax in fig.axes for t in chart_labels.direct_labels(ax)]


def overlapping_labels(fig, others=False):
    """Pairs of direct labels whose boxes overlap (others: also any other text of the axes: the
    roofs' and floors' labels, notes, the L2 marks)."""
    from matplotlib.text import Text
    boxes = text_boxes(fig)
    if others:
        renderer = fig.canvas.get_renderer()
        boxes += [(t.get_text(), Text.get_window_extent(t, renderer)) for ax in fig.axes
                  for t in ax.texts if t.get_gid() != chart_labels.DIRECT_LABEL and t.get_text().strip()]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
            if box_a.overlaps(box_b)]


def title(fig):
    """A chart's message: the figure's title, else its one panel's."""
    return fig._suptitle.get_text() if fig._suptitle else fig.axes[0].get_title()


class Results(unittest.TestCase):
    """A temporary tree shaped like the repository: results/h200/ holds bench.csv converted from
    the test JSON and machine.txt; chapter folders go next to it. The JSON is converted once per
    class, by `python3 -m tools csv` (csv_run), into the class's folder `converted`; each test gets
    a copy of that folder and of its rows."""
    bench_json = BENCH_JSON

    @classmethod
    def prepare(cls, folder):
        """What a class puts in the results folder before the conversion."""

    @classmethod
    def setUpClass(cls):
        cls.converted = tempfile.mkdtemp(prefix="plot_class_")
        cls.addClassCleanup(shutil.rmtree, cls.converted)
        cls.prepare(cls.converted)
        cls.csv_run = run("csv", cls.bench_json, os.path.join(cls.converted, "bench.csv"))
        shutil.copy(MACHINE_TXT, cls.converted)
        cls.converted_rows = results.read_csv(os.path.join(cls.converted, "bench.csv")) \
            if cls.csv_run.returncode == 0 else None

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="plot_test_")
        self.addCleanup(shutil.rmtree, self.dir)
        self.results = self.path("results", "h200")
        self.csv = os.path.join(self.results, "bench.csv")
        self.floor_csv = os.path.join(self.results, "floor.csv")
        self.assertEqual(self.csv_run.returncode, 0, self.csv_run.stderr)
        shutil.copytree(self.converted, self.results)
        self.rows = copy.deepcopy(self.converted_rows)

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def row(self, kernel, n, op="sum", dtype="f32"):
        return next(r for r in self.rows
                    if (r["kernel"], r["op"], r["dtype"], r["n"]) == (kernel, op, dtype, n))

    def assertFailsCleanly(self, done, *fragments):
        """Exit status 2, a one-line message naming the problem, and no traceback."""
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        for fragment in fragments:
            self.assertIn(fragment, done.stderr)


class TestCsv(Results):
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


class TestCharts(Results):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.figures = {}  # the charts of the test JSON's rows, drawn once for the class
        cls.addClassCleanup(lambda: [chart_style.pyplot().close(f) for f in cls.figures.values()])

    def test_charts_and_tables(self):
        self.assertEqual(job("tables", self.results).returncode, 0)
        tables = read(os.path.join(self.results, "tables.md"))
        folder, done = default_charts()  # `python3 -m tools charts` on the same bench.csv
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
        for title, field in (("### Latency of one call from idle", "latency_us"),
                             ("### Time per call, 200 calls in a loop", "b2b_us"),
                             ("### Time per call, 200 calls in one CUDA graph", "graph_us")):
            table = table_after(tables, title)
            self.assertEqual(table[0][2:], ["2^10", "2^14", "2^20"])
            line = next(line for line in table if line[1] == "`cub_sum`")
            self.assertEqual(line[table[0].index("2^14")], cells(self.row("cub_sum", 2 ** 14), field)[0] + "*")
        ratios = table_after(tables, "### Ratio to `cub_sum`")
        line = next(line for line in ratios if line[1] == "`reduce_coarsened_x8`")
        self.assertEqual(line[ratios[0].index("2^28")],
                         cells(self.row("reduce_coarsened_x8", 2 ** 28), "ratio_to_cub")[0])

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
        done = job("charts", self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertGreater(os.path.getsize(os.path.join(self.results, "launch_cost.png")), 1000)
        self.assertNotIn("200 calls in a loop", read(os.path.join(self.results, "tables.md")))

    @unittest.skipUnless(os.path.exists(os.path.join(PUBLISHED, "bench.csv")), "no results/h200")
    def test_published_h200_results(self):
        folder = self.path("published")
        shutil.copytree(PUBLISHED, folder)  # a copy: the test never rewrites the published charts
        drawn_figures = {}  # each chart's figure, as `charts` drew and saved it
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


class TestCompare(Results):
    def other_run(self, scale, columns=schema.CSV_COLUMNS):
        """Another results folder: the first row left out, every GB/s times scale, only `columns`."""
        with open(self.csv, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))[1:]
        os.makedirs(self.path("other"))
        with open(self.path("other", "bench.csv"), "w", newline="", encoding="utf-8") as f:
            out = csv.DictWriter(f, columns, extrasaction="ignore")
            out.writeheader()
            out.writerows(dict(r, gbps=float(r["gbps"]) * scale, pct_peak=float(r["pct_peak"]) * scale)
                          for r in rows)
        return self.path("other")

    def test_compare(self):
        done = run("compare", self.results, self.other_run(0.8))
        self.assertEqual(done.returncode, 0, done.stderr)
        text = read(os.path.join(self.results, "compare.md"))
        self.assertEqual(done.stdout.strip(), text.strip())
        self.assertIn("# h200 vs. other", text)
        # Every size of the f32 sum (x8: 2^20 and 2^28 only), then the geometric mean.
        self.assertIn("| 05_coarsened | `reduce_coarsened_x8` | — | — | 1.250* | — | — | 1.250 | — "
                      "| 1.25 |", text)
        self.assertNotIn("| 1.00 |", text)
        self.assertIn("Rows only in h200: 1; only in other: 0.", text)
        # Each chapter's lead kernel and the libraries at 2^28, as % of each run's own DRAM peak.
        self.assertIn("| chapter | kernel | op | h200 | other |", text)
        self.assertIn("| 07_two_pass | `reduce_two_pass` | sum | 77.1 | 61.7 |", text)
        self.assertIn("| 08_dot_product | `cublas_sdot` | dot | 69.8 | 55.8 |", text)
        self.assertNotIn("`reduce_coarsened_x8` | sum |", text)  # a variant, not a lead

    def test_compare_with_a_run_from_before_variant_of_and_params(self):
        other = self.other_run(0.5, [c for c in schema.CSV_COLUMNS if c not in schema.OPTIONAL_COLUMNS])
        self.assertNotIn("variant_of", read(os.path.join(other, "bench.csv")))
        done = job("compare", self.results, other)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("| 09_cub_comparison | `cub_sum` | 2.000* |", done.stdout)
        self.assertFailsCleanly(job("compare", self.results, self.path("nowhere")), "cannot read")


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


class TestTopReadme(Results):
    def test_replaces_the_section(self):
        folder, done = default_charts()  # the charts of the same bench.csv
        self.assertEqual(read(os.path.join(folder, "bench.csv")), read(self.csv))
        self.assertEqual(done.returncode, 0)
        copy_drawn(folder, self.results)
        path = self.path("README.md")
        write(path, "# Reductions\n\n<!-- results:begin -->\nstale\n<!-- results:end -->\n\nAfter.\n")
        done = run("readmes", path, self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        text = read(path)
        self.assertTrue(text.startswith("# Reductions\n\n<!-- results:begin -->\nMeasured on "
                                        "**NVIDIA H200**. Generated by `python3 -m tools readmes` from "
                                        "[`results/h200/bench.csv`](results/h200/bench.csv)"))
        self.assertTrue(text.endswith("[`results/h200/tables.md`](results/h200/tables.md).\n"
                                      "<!-- results:end -->\n\nAfter.\n"))
        for name, alt in schema.CHARTS:  # those drawn: the lessons job's chart needs a profile
            if name in charts.CHART_DRAWERS:
                self.assertIn(f"![{alt}](results/h200/{name})", text)
        self.assertNotIn("bytes_in_flight.png", text)
        # One line per chapter's lead kernel, the library last; no variant.
        table = table_after(text, "f32 sum per chapter")
        self.assertEqual(table[0][2:], ["GB/s, n = 2^28", "% of peak", "× CUB",
                                        "GB/s, n = 2^20 (L2-resident)", "% of peak", "× CUB"])
        self.assertEqual([line[1] for line in table[1:]], F32_SUM_LEADS + ["`cub_sum`"])
        fields = ("gbps", "pct_peak", "ratio_to_cub")
        self.assertEqual(table[6][2:], cells(self.row("reduce_warp_shuffle", 2 ** 28), *fields) +
                         [c + "*" for c in cells(self.row("reduce_warp_shuffle", 2 ** 20), *fields)])
        self.assertEqual(run("readmes", path, self.results).returncode, 0)
        self.assertEqual(read(path), text)  # running it again changes nothing

    def test_markers(self):
        for text, message in (("# No markers here.\n", "results:begin"),
                              ("<!-- results:end -->\n<!-- results:begin -->\n", "comes before")):
            write(self.path("README.md"), text)
            self.assertFailsCleanly(job("readmes", self.path("README.md"), self.results), message)
            self.assertEqual(read(self.path("README.md")), text)


class TestChapterReadme(Results):
    def chapter(self, name, text=MARKED):
        write(self.path(name, "README.md"), text)
        return self.path(name)

    def update(self, name):
        done = job("readmes", "--chapter", self.chapter(name), self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        return read(self.path(name, "README.md"))

    def test_lead_table(self):
        text = self.update("03_shared")
        self.assertTrue(text.startswith("# Chapter\n\nThe idea.\n\n<!-- results:begin -->\nMeasured on "))
        self.assertTrue(text.endswith(" rerun the script instead.*\n<!-- results:end -->\n\nAfter.\n"))
        # Under the f32 sum and max tables: the GPU and the CSV, linked relative to the chapter.
        self.assertEqual(text.count("*NVIDIA H200. Generated from [`results/h200/bench.csv`]"
                                    "(../results/h200/bench.csv) by `python3 -m tools readmes --chapter`"), 2)
        for op, cub in (("sum", "cub_sum"), ("max", "cub_max_builtin")):
            table = table_after(text, f"**f32 {op}**, `reduce_shared`")
            self.assertEqual(table[0], ["n", "input", "memory", "µs per call, back to back", "µs, one call",
                                        "GB/s", "% of DRAM peak", "vs. 02_convergent (GB/s ratio)", f"× `{cub}`"])
            # L2-resident means no larger than L2 (60 MiB): 64 MiB is measured cold.
            self.assertEqual([line[:3] for line in table[1:]],
                             [["2^20", "4 MiB", "L2-resident"], ["2^24", "64 MiB", "DRAM"],
                              ["2^26", "256 MiB", "DRAM"], ["2^28", "1 GiB", "DRAM"],
                              ["2^30", "4 GiB", "DRAM"]])
            for line in table[1:]:
                r = self.row("reduce_shared", 2 ** int(line[0][2:]), op)
                prev = next((p for p in self.rows if (p["kernel"], p["op"], p["n"])
                             == ("reduce_convergent", op, r["n"])), None)
                # 02's sum at 2^26 failed its check in the synthetic run: no ratio there.
                self.assertEqual(line[3:], cells(r, "time_us", "latency_us", "gbps", "pct_peak") +
                                 [ratio(r, prev) if prev else "—"] + cells(r, "ratio_to_cub"))
        self.assertEqual(self.update("03_shared"), text)  # running it again changes nothing

    def test_first_chapter_has_no_previous_column(self):
        text = self.update("01_naive")
        self.assertNotIn("vs. ", text)
        self.assertEqual(table_after(text, "**f32 sum**, `reduce_naive`")[0][-1], "× `cub_sum`")
        self.assertNotIn("**Small n**", text)  # chapters before 06 have none

    def test_variants_table_sorted_by_the_param_that_varies(self):
        text = self.update("05_coarsened")
        self.assertEqual([line for line in text.splitlines() if line.startswith("**")],
                         ["**f32 sum**, `reduce_coarsened`", "**f32 max**, `reduce_coarsened`",
                          "**f16 sum**, `reduce_coarsened`", "**bf16 sum**, `reduce_coarsened`",
                          "**Variants of `reduce_coarsened`**, f32 sum: the settings in which they "
                          "differ, and their GB/s against `reduce_coarsened`'s and `cub_sum`'s at the "
                          "same n."])
        table = table_after(text, "**Variants of")
        self.assertEqual(table[0], ["kernel", "coarsening"] + [
            cell for n in ("2^20 (L2-resident)", "2^28 (DRAM)")
            for cell in (f"GB/s, n = {n}", "× `reduce_coarsened`", "× `cub_sum`")])
        self.assertEqual([line[:2] for line in table[1:]],
                         [["`reduce_coarsened_x1`", "1"], ["`reduce_coarsened_x8`", "8"],
                          ["`reduce_coarsened`", "16"], ["`reduce_coarsened_x64`", "64"]])
        for line in table[1:]:
            for i, n in enumerate((2 ** 20, 2 ** 28)):
                r, lead = self.row(line[0].strip("`"), n), self.row("reduce_coarsened", n)
                self.assertEqual(line[2 + 3 * i:5 + 3 * i],
                                 cells(r, "gbps") + [ratio(r, lead)] + cells(r, "ratio_to_cub"))
        # The lead kernel's own tables hold the lead kernel only.
        self.assertNotIn("_x", text[:text.index("**Variants of")])

    def test_variants_table_columns_are_the_params_that_differ(self):
        text = self.update("07_two_pass")
        table = table_after(text, "**Variants of `reduce_two_pass`**")
        # early_launch is 1 in every kernel shown: no column. The plain launch, measured at
        # small n only, is in the small-n table instead.
        self.assertEqual(table[0][:5], ["kernel", "fixed_grid", "l2_prefetch", "unroll", "vector_bytes"])
        self.assertEqual(table[0][5:], [cell for n in ("2^20 (L2-resident)", "2^28 (DRAM)") for cell in
                                        (f"GB/s, n = {n}", "× `reduce_two_pass`", "× `cub_sum`")])
        self.assertEqual([line[:5] for line in table[1:]],
                         [["`reduce_two_pass_growing_grid`", "0", "0", "8", "16"],
                          ["`reduce_two_pass_unroll4`", "1", "0", "4", "16"],
                          ["`reduce_two_pass`", "1", "0", "8", "16"],
                          ["`reduce_two_pass_unroll16`", "1", "0", "16", "16"],
                          ["`reduce_two_pass_scalar_loads`", "1", "0", "32", "4"],
                          ["`reduce_two_pass_unroll8_l2prefetch`", "1", "1", "8", "16"]])
        small = table_after(text, "**Small n**")
        self.assertEqual(small[0], ["n", "`reduce_two_pass` (µs)", "`reduce_two_pass_plain_launch` (µs)",
                                    "`cub_sum` (µs)", "CUB time ÷ this chapter's"])
        mine, plain, cub = (self.row(k, 2 ** 14) for k in
                            ("reduce_two_pass", "reduce_two_pass_plain_launch", "cub_sum"))
        # Small sizes show one call's latency, the host's dispatch included.
        self.assertIn(["2^14"] + [c for r in (mine, plain, cub) for c in cells(r, "latency_us")] +
                      [f"{cub['latency_us'] / mine['latency_us']:.3f}"], small)
        lead = self.row("reduce_two_pass", 2 ** 20)
        self.assertEqual(small[-1][:3], ["2^20"] + cells(lead, "latency_us") + ["—"])
        self.assertIn("**f32 argmax**, `reduce_two_pass`", text)

    def test_small_n_without_variants(self):
        text = self.update("06_warp_shuffle")
        self.assertNotIn("**f32 max**", text)  # 06 measured f32 sums only
        self.assertNotIn("Variants", text)
        self.assertIn("vs. 05_coarsened (GB/s ratio)", text)
        small = table_after(text, "**Small n**")
        self.assertEqual(small[0], ["n", "`reduce_warp_shuffle` (µs)", "`cub_sum` (µs)",
                                    "CUB time ÷ this chapter's"])
        self.assertEqual([line[0] for line in small[1:]], ["2^10", "2^14", "2^20"])  # those measured

    def test_launch_cost_and_large_n(self):
        text = self.update("10_single_pass")
        self.assertNotIn("**Small n**", text)  # the launch-cost table takes its place
        self.assertIn("÷ CUB`: `reduce_single_pass`'s time divided by `cub_sum`'s, a ratio of times, "
                      "so < 1: this chapter is faster", text)
        cost = table_after(text, "**Launch cost**")
        self.assertEqual(cost[0], ["n"] + [cell for what in ("one call", "in a loop") for cell in (
            f"`reduce_single_pass`, {what} (µs)", f"`cub_sum`, {what} (µs)", "÷ CUB")] + [
            "`reduce_single_pass`, in a graph (µs)", "`cub_sum`, in a graph (µs)",
            "one call − floor (µs)", "in a loop − floor (µs)"])
        self.assertEqual([line[0] for line in cost[1:]], ["2^10", "2^14", "2^20"])
        floor = results.read_floor(self.results)
        for line in cost[1:]:
            n = 2 ** int(line[0][2:])
            mine, cub = self.row("reduce_single_pass", n), self.row("cub_sum", n)
            expected = []
            for field in ("latency_us", "b2b_us"):  # the lead's time divided by CUB's
                expected += cells(mine, field) + cells(cub, field) + [f"{mine[field] / cub[field]:.3f}"]
            expected += cells(mine, "graph_us") + cells(cub, "graph_us")
            expected += [f"{mine[field] - floor[field]:.2f}" for field in ("latency_us", "b2b_us")]
            self.assertEqual(line[1:], expected)
            self.assertLess(float(line[3]), 1)  # faster than CUB in the synthetic run: a ratio < 1
        large = table_after(text, "**Large n**")
        self.assertEqual(large[0], ["n", "memory", "`reduce_single_pass` (GB/s)",
                                    "07_two_pass: `reduce_two_pass` (GB/s)", "× `reduce_two_pass`"])
        self.assertEqual([line[:2] for line in large[1:]],
                         [["2^26", "DRAM"], ["2^28", "DRAM"], ["2^30", "DRAM"]])
        for line in large[1:]:
            n = 2 ** int(line[0][2:])
            mine, two = self.row("reduce_single_pass", n), self.row("reduce_two_pass", n)
            self.assertEqual(line[2:], cells(mine, "gbps") + cells(two, "gbps") + [ratio(mine, two)])
        # The variants measured at every size are in the variants table, not among the lessons.
        self.assertIn("| `reduce_single_pass_grid_sync` | 1 | 1 | 1 | 1 |", text)
        self.assertEqual(self.update("10_single_pass"), text)  # running it again changes nothing

    def test_launch_cost_without_a_floor(self):
        os.remove(self.floor_csv)
        text = self.update("10_single_pass")
        self.assertNotIn("floor", text)
        cost = table_after(text, "**Launch cost**")
        self.assertEqual(cost[0][-2:], ["`reduce_single_pass`, in a graph (µs)",
                                        "`cub_sum`, in a graph (µs)"])
        self.assertTrue(all(len(line) == 9 for line in cost))

    def test_chapter_10_from_an_old_bench_csv(self):
        # Without loop times chapter 10 gets the small-n table as 06 to 09 do; and those keep
        # theirs whatever the run measured.
        without_columns(self.csv, {"b2b_us", "graph_us"})
        text = self.update("10_single_pass")
        self.assertNotIn("**Launch cost**", text)
        self.assertEqual(table_after(text, "**Small n**")[0][:2], ["n", "`reduce_single_pass` (µs)"])
        self.assertIn("**Large n**", text)  # GB/s only: every bench.csv has them
        self.assertEqual(table_after(self.update("07_two_pass"), "**Small n**")[0][1],
                         "`reduce_two_pass` (µs)")

    def test_steps_in_the_order_of_param_step(self):
        text = self.update("08_dot_product")
        self.assertIn("GB/s: the bytes of both vectors read once", text)
        self.assertNotIn("vs. ", text)  # 07 measured no dot product
        steps = table_after(text, "**f32 dot, every step**")
        self.assertEqual(steps[0][:6], ["kernel", "atomics", "step", "GB/s, n = 2^20 (L2-resident)",
                                        "× `dot_two_pass`", "× `cublas_sdot`"])
        self.assertEqual([line[:3] for line in steps[1:]],
                         [["`dot_shared`", "0", "1"], ["`dot_coarsened`", "1", "2"], ["`dot_fma`", "1", "3"],
                          ["`dot_two_pass`", "0", "4"], ["`cub_transform_reduce`", "—", "—"],
                          ["`cublas_sdot`", "—", "—"]])
        r, lead = self.row("dot_fma", 2 ** 30, "dot"), self.row("dot_two_pass", 2 ** 30, "dot")
        self.assertEqual(steps[3][-3:], cells(r, "gbps") + [ratio(r, lead)] + cells(r, "ratio_to_cub"))
        # The last step is the lead kernel: its own table for each dtype; the others get none.
        self.assertEqual([line for line in text.splitlines() if line.startswith("**")],
                         ["**f32 dot, every step**, and the libraries measured beside them",
                          "**f32 dot**, `dot_two_pass`", "**bf16 dot**, `dot_two_pass`"])
        detail = table_after(text, "**bf16 dot**, `dot_two_pass`")
        r = self.row("dot_two_pass", 2 ** 28, "dot", "bf16")
        self.assertIn(["2^28", "1 GiB", "DRAM"] + cells(r, "time_us", "latency_us", "gbps", "pct_peak",
                                                          "ratio_to_cub"),
                      detail)
        self.assertEqual(detail[0][-1], "× `cub_transform_reduce`")

    def test_cub_chapter_compares_every_lead_kernel(self):
        text = self.update("09_cub_comparison")
        table = table_after(text, "**f32 sum** against `cub_sum`")
        sizes = sorted(r["n"] for r in self.rows if r["kernel"] == "cub_sum")
        self.assertEqual(table[0], ["chapter", "kernel"] + [
            schema.pow2_label(n) + ("*" if self.row("cub_sum", n)["l2_resident"] else "") for n in sizes])
        self.assertEqual([line[1] for line in table[1:]], F32_SUM_LEADS + ["`cub_sum`: GB/s"])
        r = self.row("reduce_coarsened", 2 ** 28)
        self.assertEqual(table[5][2 + sizes.index(2 ** 28)], cells(r, "ratio_to_cub")[0])
        self.assertEqual(table[-1][2:], [cells(self.row("cub_sum", n), "gbps")[0] for n in sizes])
        dot = table_after(text, "**f32 dot** against `cublas_sdot`")
        self.assertEqual([line[:2] for line in dot[1:]], [["08_dot_product", "`dot_two_pass`"],
                                                          ["08_dot_product", "`cublas_sdot`: GB/s"]])
        self.assertIn("**bf16 sum** against `cub_transform_reduce`", text)

    def test_chapter_errors(self):
        self.assertFailsCleanly(run("readmes", "--chapter", self.chapter("10_new"), self.results),
                                "no rows of chapter 10_new")
        folder = self.chapter("01_naive", "# No markers\n")
        self.assertFailsCleanly(run("readmes", "--chapter", folder, self.results), "results:begin")
        self.assertEqual(read(os.path.join(folder, "README.md")), "# No markers\n")
        self.assertFailsCleanly(run("readmes", "--chapter", self.path("nowhere"), self.results),
                                "cannot read")
        self.assertEqual(run("readmes", "--chapter", folder).returncode, 2)

    def test_all(self):
        write(self.path("README.md"), MARKED)
        for name in ("01_naive", "05_coarsened"):
            self.chapter(name)
        self.chapter("03_shared", "# Not written yet\n")
        done = job("readmes", "--all", self.path("README.md"), self.results)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("skipped", done.stdout)
        self.assertIn("| 06_warp_shuffle | `reduce_warp_shuffle` |", read(self.path("README.md")))
        for name, lead in (("01_naive", "reduce_naive"), ("05_coarsened", "reduce_coarsened")):
            text = read(self.path(name, "README.md"))
            self.assertIn(f"**f32 sum**, `{lead}`", text)
            self.assertEqual(self.update(name), text)  # as --chapter writes it
        self.assertEqual(read(self.path("03_shared", "README.md")), "# Not written yet\n")

    def test_all_writes_nothing_when_a_chapter_fails(self):
        write(self.path("README.md"), MARKED)
        self.chapter("01_naive")
        self.chapter("10_new")  # markers, but no rows
        done = job("readmes", "--all", self.path("README.md"), self.results)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("error: " + self.csv + " has no rows of chapter 10_new", done.stderr)
        for path in (self.path("README.md"), self.path("01_naive", "README.md")):
            self.assertEqual(read(path), MARKED)


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
            if name == "flat":  # the test JSON's rows: the module's charts of them
                default, drawn_run = default_charts()
                self.assertEqual(read(os.path.join(folder, "bench.csv")), read(os.path.join(default, "bench.csv")))
                self.assertEqual(drawn_run.returncode, 0)
                copy_drawn(default, folder)
            else:
                self.assertEqual(job("charts", folder).returncode, 0)
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
        """The class's charts, drawn once for the module, copied into this test's results folder:
        (the `charts` run, {file name: figure})."""
        folder, (done, figures) = kept_charts("batched", self.converted)
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
        for command in ("tables", "charts"):
            done = run(command, self.results)
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
