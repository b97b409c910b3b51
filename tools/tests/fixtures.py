"""What the tests of the jobs csv, charts, tables, compare, readmes and diagrams share: the synthetic
inputs (tools/tests/testdata), ways to run a job, the results folder each test gets, and the chart
sets drawn once for every test module of a run.

Each job has a test that runs it as a subprocess, as a user runs it (run()); the others call the
same entry point in this process (job()), which gives the same exit status, stdout and stderr
without starting Python and matplotlib again. The JSON is converted once per class. A chart set is
drawn once for the whole run, whichever module asks first (drawn()). The slowest jobs, `charts` on
the test JSON's rows and `diagrams`, run as a user runs them in the background (user_run()),
beside the tests. A chart drawn in this process is saved only where a test
reads the file (saves()): drawing, not saving, is what the tests look at, and saving is most of a
chart's time.
"""

import atexit
import contextlib
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
FLOOR_NAME = "floor/empty_kernel/none/none/0/iterations:1/manual_time"
MAX_SERIES = 6  # what a chart's panel may draw (results/README's rule: one story at a glance)

from tools import (__main__ as cli, chart_labels, chart_style, charts_batched, charts_dtypes,  # noqa: E402
                   charts_n, results, tables)

CHART_MODULES = (chart_style, charts_n, charts_dtypes, charts_batched)


# ---- Running a job ----------------------------------------------------------------------------

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


# ---- Files ------------------------------------------------------------------------------------

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


def copy_files(source, target, names):
    for name in names:
        shutil.copy(os.path.join(source, name), target)


def copy_drawn(folder, target):
    """The charts and tables.md a `charts` run wrote in folder, copied into target."""
    copy_files(folder, target, [name for name in os.listdir(folder) if name.endswith(".png") or name == "tables.md"])


# ---- Tables -----------------------------------------------------------------------------------

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


# ---- Charts drawn in this process -------------------------------------------------------------

@contextlib.contextmanager
def saves_caught(catch):
    """chart_style.save, as each chart module calls it, replaced by catch(fig, path)."""
    with contextlib.ExitStack() as stack:
        for module in CHART_MODULES:
            stack.enter_context(mock.patch.object(module, "save", catch))
        yield


@contextlib.contextmanager
def saves(files=(), figures=None):
    """The charts drawn meanwhile are saved as the job saves them where their file name is one of
    files (a test reads that file); the others are not written. figures: a dict that keeps each
    chart's figure open under its file name, for a look (closed by the caller); else each is
    closed."""
    save, plt = chart_style.save, chart_style.pyplot()

    def save_or_keep(fig, path):
        name = os.path.basename(path)
        if name in files:
            with mock.patch.object(plt, "close"):
                save(fig, path)
        if figures is None:
            plt.close(fig)
        else:
            figures[name] = fig

    with saves_caught(save_or_keep):
        yield


def draw_chart(draw, *args):
    """A chart function's figure, chart_style.save caught so that it stays open for a look."""
    figures = []
    with saves_caught(lambda fig, path: figures.append(fig)):
        draw(*args)
    return figures[0]


def draw_kept(*args, figures, files=()):
    """`python3 -m tools charts ARGS` in this process, each chart's figure kept open in
    figures[file name] for a look (closed by the caller); the charts named in files saved as the
    job saves them, the others not written."""
    with saves(files, figures):
        return job("charts", *args)


def labelled(ax):
    """{label: line} of a panel's labelled lines (its series; furniture is unlabelled)."""
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}


def text_boxes(fig):
    """(text, box in pixels) of every direct label of the figure, its text alone (no leader), as
    the figure is drawn (its layout computed, nothing rendered)."""
    from matplotlib.text import Text
    fig.draw_without_rendering()
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


# ---- Chart sets drawn once for the run --------------------------------------------------------

_DRAWN = {}  # key: (folder, what fill returned)


def drawn(key, fill):
    """A results folder whose charts were drawn once for the run: fill(folder) converts and draws
    into it (returning what the tests look at), the first time key is asked for; later callers get
    the same (folder, what fill returned). Tests copy the files they need."""
    if key not in _DRAWN:
        folder = tempfile.mkdtemp(prefix=f"plot_{key}_")
        atexit.register(shutil.rmtree, folder, True)
        _DRAWN[key] = folder, fill(folder)
    return _DRAWN[key]


def kept_charts(key, converted, files=()):
    """The charts of a class's converted folder, drawn once for the run in this process, their
    figures kept: (folder, (the run, {file name: figure})). files: the charts saved as the job
    saves them (the others are not written)."""
    def fill(folder):
        copy_files(converted, folder, os.listdir(converted))
        figures = {}
        atexit.register(lambda: [chart_style.pyplot().close(f) for f in figures.values()])
        return draw_kept(folder, figures=figures, files=files), figures
    return drawn(key, fill)


# ---- The slowest jobs as a user runs them, in the background ----------------------------------

def _charts_of(entries):
    """A user run's preparation: the entries (a function of none) converted by `python3 -m tools
    csv` into the folder, beside machine.txt, for `charts` to draw."""
    def prepare(folder):
        source = os.path.join(folder, "bench.json")
        write_json(source, entries())
        done = run("csv", source, os.path.join(folder, "bench.csv"))
        assert done.returncode == 0, done.stderr
        shutil.copy(MACHINE_TXT, folder)
    return prepare


# name: (the job, what prepares its folder). The charts of the test JSON's rows ("charts_flat"), and
# of the same with chapter 11's batched rows beside them ("charts_both"); the diagrams, and the
# diagrams again where a test needs a second run.
USER_RUNS = {"charts_flat": ("charts", _charts_of(json_entries)),
             "charts_both": ("charts", _charts_of(lambda: json_entries() + batched_json_entries())),
             "diagrams": ("diagrams", None),
             "diagrams_again": ("diagrams", None)}
EARLY = ["charts_flat", "charts_both", "diagrams"]  # what the first test class of a run starts
_STARTED = {}  # name: [folder, the process, its CompletedProcess once it ended]


def start_user_runs(*names):
    """Starts the runs of USER_RUNS named (EARLY if none), each `python3 -m tools JOB FOLDER` as a
    user runs it, once for the whole test run, and returns at once: they run beside the tests, at
    a lower priority, on the cores the tests leave idle. The first test class of a run starts them
    (Results.setUpClass); the runs that no test waited for are stopped when the tests end."""
    for name in names or EARLY:
        if name in _STARTED:
            continue
        command, prepare = USER_RUNS[name]
        folder = tempfile.mkdtemp(prefix=f"user_{name}_")
        if prepare:
            prepare(folder)
        process = subprocess.Popen([sys.executable, "-m", "tools", command, folder], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT, preexec_fn=lambda: os.nice(5))
        _STARTED[name] = [folder, process, None]


def user_run(name):
    """A run of USER_RUNS, once it has ended: (its folder, the run)."""
    start_user_runs(name)
    entry = _STARTED[name]
    if entry[2] is None:
        stdout, stderr = entry[1].communicate()
        entry[2] = subprocess.CompletedProcess(entry[1].args, entry[1].returncode, stdout, stderr)
    return entry[0], entry[2]


def user_charts(rows="flat"):
    """`python3 -m tools csv` and `charts` as a user runs them on the test JSON's rows ("flat"), or
    on the same with chapter 11's batched rows beside them ("both"): (folder, the charts run)."""
    return user_run(f"charts_{rows}")


@atexit.register
def _end_user_runs():
    for folder, process, _ in _STARTED.values():
        if process.poll() is None:
            process.kill()
        process.communicate()
        shutil.rmtree(folder, True)


# ---- The results folder of a test -------------------------------------------------------------

class Results(unittest.TestCase):
    """A temporary tree shaped like the repository: results/h200/ holds bench.csv converted from
    the test JSON and machine.txt; chapter folders go next to it. The JSON is converted once per
    class, by `python3 -m tools csv` (csv_run, in this process: convert), into the class's folder
    `converted`; each test gets a copy of that folder and of its rows."""
    bench_json = BENCH_JSON
    convert = staticmethod(job)

    @classmethod
    def prepare(cls, folder):
        """What a class puts in the results folder before the conversion."""

    @classmethod
    def setUpClass(cls):
        start_user_runs()  # the first class of a run: they draw while its tests go on
        cls.converted = tempfile.mkdtemp(prefix="plot_class_")
        cls.addClassCleanup(shutil.rmtree, cls.converted)
        cls.prepare(cls.converted)
        cls.csv_run = cls.convert("csv", cls.bench_json, os.path.join(cls.converted, "bench.csv"))
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
        # A copy of each row and of its params (a row's other values are numbers and strings).
        self.rows = [dict(r, params=dict(r["params"])) for r in self.converted_rows]

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
