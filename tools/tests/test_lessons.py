"""Tests of the lessons job on synthetic inputs: a profile of three cases, a latency table and
a small bench.csv. The commands run as subprocesses, as a user runs them.

    python3 -m unittest tools.tests.test_lessons        (ctest: plot_tests)
"""

import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PUBLISHED = os.path.join(ROOT, "results", "h200")

from tools import chart_labels, chart_style, lessons, littles_law, profile, results, schema  # noqa: E402

N = 2 ** 28
MACHINE = "gpu: NVIDIA H200\ndram_gbps: 4800.0\ncopy_gbps: 4200.0\nl2_bytes: 62914560\nsm_count: 132\n"
LATENCY = ("# device: NVIDIA H200\npattern,region_bytes,loads,ns_per_load\nl2,2097152,16384,250.0\n"
           "dram,16777216,16384,600.0\ndram,67108864,16384,640.0\n")


def bench_row(chapter, kernel, gbps, n=N, dtype="f32", variant_of="", params="", resident=False):
    nbytes = 4 * n + 4
    time_us = nbytes / (gbps * 1e3)
    return {"chapter": chapter, "kernel": kernel, "dtype": dtype, "op": "sum", "n": n, "bytes": nbytes,
            "time_us": time_us, "time_p10_us": time_us, "time_p90_us": time_us, "latency_us": time_us,
            "gbps": gbps, "pct_peak": 100 * gbps / 4800, "l2_resident": "true" if resident else "false",
            "ratio_to_cub": "", "variant_of": variant_of, "params": params}


BENCH = [
    bench_row("01_naive", "reduce_naive", 600),
    bench_row("03_shared", "reduce_shared", 1800, params="elements_per_thread=2"),
    bench_row("03_shared", "harris1_interleaved_divergent", 900, variant_of="reduce_shared",
              params="elements_per_thread=1;harris_step=1"),
    bench_row("03_shared", "harris1_interleaved_divergent", 300, n=2 ** 22, dtype="i32",
              variant_of="reduce_shared", params="elements_per_thread=1;harris_step=1", resident=True),
    bench_row("07_two_pass", "reduce_two_pass", 4470, params="unroll=8;vector_bytes=16"),
    bench_row("solution_07", "reduce_last_block", 4300, variant_of="reduce_two_pass", params="last_block=1"),
]

METRIC_COLUMNS = ["gpu__time_duration.sum", "launch__grid_size", "dram__bytes_read.sum",
                  "sm__warps_active.avg.per_cycle_active",
                  "smsp__thread_inst_executed_per_inst_executed.ratio",
                  profile.stall_metric("long_scoreboard"), profile.stall_metric("barrier"),
                  profile.stall_metric("selected")]
UNITS = ["nsecond", "", "byte", "warp", "", "", "", ""]


def kernel_line(name, grid, time_ns, dram, warps, threads=32.0, long_sb=5.0, barrier=1.0):
    cells = [str(time_ns), str(grid), f"{dram:,}", str(warps), str(threads), str(long_sb), str(barrier), "1.0"]
    return ["1", name, f"({grid}, 1, 1)"] + cells


def write_profile(folder):
    os.makedirs(os.path.join(folder, "profile"))
    with open(os.path.join(folder, "profile", "cases.txt"), "w") as f:
        f.write(f"profile case 1: 01_naive/reduce_naive/sum/f32/{N}\n"
                f"profile case 2: 03_shared/reduce_shared/sum/f32/{N}\n"
                f"profile case 3: 07_two_pass/reduce_two_pass/sum/f32/{N}\n")
    rows = [
        kernel_line("profile_case_marker()", 1, 1000, 0, 1),
        kernel_line("void reduce_naive<Sum>(...)", 524288, 2_000_000, 4 * N, 60, threads=9.0),
        kernel_line("void reduce_naive<Sum>(...)", 1024, 10_000, 2_000_000, 30, threads=9.0),
        kernel_line("profile_case_marker()", 2, 1000, 0, 1),
        kernel_line("void reduce_shared<Sum>(...)", 524288, 600_000, 4 * N, 64, threads=20.0, long_sb=20.0),
        kernel_line("profile_case_marker()", 3, 1000, 0, 1),
        kernel_line("void reduce_two_pass<Sum>(...)", 528, 240_000, 4 * N, 32, long_sb=40.0),
        kernel_line("void reduce_partials<Sum>(...)", 1, 3_000, 0, 8),
    ]
    with open(os.path.join(folder, "profile", "kernels.csv"), "w", newline="") as f:
        f.write("==PROF== Disconnected from process 1\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(["ID", "Kernel Name", "Grid Size"] + METRIC_COLUMNS)
        w.writerow(["", "", ""] + UNITS)
        w.writerows(rows)


def write_results(folder):
    with open(os.path.join(folder, "machine.txt"), "w") as f:
        f.write(MACHINE)
    with open(os.path.join(folder, "latency.csv"), "w") as f:
        f.write(LATENCY)
    with open(os.path.join(folder, "bench.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=schema.CSV_COLUMNS)
        w.writeheader()
        w.writerows(BENCH)
    write_profile(folder)


def run(*args):
    return subprocess.run([sys.executable, "-m", "tools", "lessons", *args], capture_output=True, text=True,
                          cwd=ROOT)


def draw_in_flight(latency, points, machine, sm_count):
    """bytes_in_flight.png's figure, chart_style.save caught so that it stays open for a look."""
    figures = []
    with mock.patch.object(littles_law, "save", lambda fig, path: figures.append(fig)):
        littles_law.chart_in_flight("bytes_in_flight.png", latency, points, machine, sm_count)
    return figures[0]


def overlaps(fig):
    """Pairs of texts of the chart (the points' labels, the roofs', the legend) that overlap, as the
    chart is drawn (its layout computed, nothing rendered)."""
    from matplotlib.text import Text
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [(t.get_text(), Text.get_window_extent(t, renderer)) for t in ax.texts]
    boxes.append(("legend", ax.get_legend().get_window_extent(renderer)))
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
            if box_a.overlaps(box_b)]


class LessonsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.results = os.path.join(self.dir, "results", "gpu")
        os.makedirs(self.results)
        write_results(self.results)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_cases_split_at_markers_and_sum_their_kernels(self):
        cases = profile.load_profile(self.results)
        naive = cases[f"01_naive/reduce_naive/sum/f32/{N}"]
        self.assertEqual(naive["kernels"], 2)  # the marker is not counted
        self.assertEqual(naive["dram_read"], 4 * N + 2_000_000)
        self.assertAlmostEqual(naive["time_us"], 2010.0)  # ns in the CSV, µs here
        self.assertEqual(naive["threads_per_inst"], 9.0)  # the longest kernel's rate
        two_pass = cases[f"07_two_pass/reduce_two_pass/sum/f32/{N}"]
        self.assertEqual(two_pass["kernels"], 2)
        self.assertEqual(two_pass["top_stalls"][0], (40.0, "long_scoreboard"))
        self.assertNotIn("selected", [r for _, r in two_pass["top_stalls"]])  # issuing is not a stall

    def test_unknown_marker_is_an_input_error(self):
        with open(os.path.join(self.results, "profile", "cases.txt"), "w") as f:
            f.write(f"profile case 1: 01_naive/reduce_naive/sum/f32/{N}\n")
        r = run("tables", self.results)
        self.assertEqual(r.returncode, 2)
        self.assertIn("marker of case 2", r.stderr)

    def test_bytes_in_flight_from_settings_and_measured_warps(self):
        rows, _ = results.load_results(self.results)
        points = {p["kernel"]: p for p in littles_law.in_flight_points(profile.load_profile(self.results), rows)}
        self.assertEqual(set(points), {"reduce_shared", "reduce_two_pass"})  # 01 declares no loads per thread
        self.assertEqual(points["reduce_shared"]["per_sm"], 64 * 32 * 2 * 4)
        self.assertEqual(points["reduce_two_pass"]["per_sm"], 32 * 32 * 8 * 16)
        # Little's law: 132 SMs x 16 KiB / 600 ns, capped at the peak.
        self.assertAlmostEqual(littles_law.littles_law_gbps(16384, 600, 132, 4800), 132 * 16384 / 600)
        self.assertEqual(littles_law.littles_law_gbps(1 << 20, 600, 132, 4800), 4800)

    def test_tables_and_chart(self):
        r = run("tables", self.results)
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("profile.md", "bytes_in_flight.md", "classic.md", "bytes_in_flight.png"):
            self.assertGreater(os.path.getsize(os.path.join(self.results, name)), 0, name)
        with open(os.path.join(self.results, "bytes_in_flight.md")) as f:
            text = f.read()
        # 600 ns x 4800 GB/s = 2.88 MB = 2.75 MiB over the GPU, 21.3 KiB per SM.
        self.assertIn("**2.75 MiB**", text)
        self.assertIn("**21.3 KiB per SM**", text)
        with open(os.path.join(self.results, "classic.md")) as f:
            classic = f.read()
        self.assertIn("| 1. interleaved addressing, divergent branch | `harris1_interleaved_divergent` | 8.054 | "
                      "2.083 | 2.4 | 300* | 6.2* | — | — |", classic)

    def test_chart_names_every_point_and_no_label_overlaps_another(self):
        # A crowd as on the H200 between 2^6 and 2^8 KiB per SM: ten kernels of one chapter
        # within a few KiB and a few hundred GB/s, and another chapter's points among them.
        points = [{"chapter": "07_two_pass", "kernel": f"reduce_two_pass_unroll{i}", "per_sm": (120 + i) * 1024,
                   "gbps": 4100 + 45 * i} for i in range(10)]
        points += [{"chapter": "05_coarsened", "kernel": f"reduce_coarsened_x{2 ** i}", "per_sm": 2 ** (13 + i),
                    "gbps": min(4500, 900 * 2 ** (i / 2))} for i in range(8)]
        machine = results.Machine(os.path.join(self.results, "machine.txt"))
        latency = littles_law.read_latency(os.path.join(self.results, "latency.csv"))
        fig = draw_in_flight(latency, points, machine, 132)
        self.addCleanup(chart_style.pyplot().close, fig)
        labels = chart_labels.direct_labels(fig.axes[0])
        self.assertEqual(sorted(t.get_text() for t in labels),
                         sorted(p["kernel"].replace("reduce_", "") for p in points))
        for label in labels:  # each names its own point
            point = next(p for p in points if p["kernel"] == "reduce_" + label.get_text())
            self.assertEqual(label.xy, (point["per_sm"] / 1024, point["gbps"]))
        self.assertEqual(overlaps(fig), [])

    @unittest.skipUnless(os.path.exists(os.path.join(PUBLISHED, "profile", "kernels.csv")), "no results/h200")
    def test_published_chart_has_no_label_over_another(self):
        _, machine, sm_count, _, latency, points, _ = lessons.build_all(PUBLISHED)
        fig = draw_in_flight(latency, points, machine, sm_count)
        self.addCleanup(chart_style.pyplot().close, fig)
        self.assertEqual(len(chart_labels.direct_labels(fig.axes[0])), len(points))
        self.assertEqual(overlaps(fig), [])

    def test_readmes_get_blocks_with_links_from_their_folder(self):
        root = os.path.join(self.dir, "repo")
        os.makedirs(os.path.join(root, "02_convergent"))
        os.makedirs(os.path.join(root, "solutions"))
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("# Top\n\n<!-- inflight:begin -->\nold\n<!-- inflight:end -->\n\n<!-- classic:begin -->\n"
                    "<!-- classic:end -->\n")
        with open(os.path.join(root, "02_convergent", "README.md"), "w") as f:
            f.write("# 02\n\n<!-- profile:02_convergent:begin -->\n<!-- profile:02_convergent:end -->\n")
        with open(os.path.join(root, "solutions", "07_two_pass.md"), "w") as f:
            f.write("# 07\n\n<!-- solution-results:07 -->\n\nAfter.\n")
        r = run("readmes", self.results, root)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(root, "README.md")) as f:
            top = f.read()
        self.assertNotIn("old", top)
        self.assertIn("](../results/gpu/latency.csv)", top)  # relinked from the results folder
        with open(os.path.join(root, "02_convergent", "README.md")) as f:
            self.assertIn("`reduce_naive`", f.read())  # 02's table starts with 01
        with open(os.path.join(root, "solutions", "07_two_pass.md")) as f:
            solution = f.read()
        self.assertIn("<!-- solution-results:07:end -->", solution)
        self.assertIn("`reduce_last_block`", solution)
        self.assertTrue(solution.rstrip().endswith("After."))
        # Running again replaces the blocks instead of adding new ones.
        self.assertEqual(run("readmes", self.results, root).returncode, 0)
        with open(os.path.join(root, "solutions", "07_two_pass.md")) as f:
            self.assertEqual(f.read().count("solution-results:07:end"), 1)


if __name__ == "__main__":
    unittest.main()
