"""The charts job: every chart of CHART_DRAWERS, and tables.md, drawn from one results folder."""

import os

from tools.chart_style import kernel_colors
from tools.charts_batched import chart_batched
from tools.charts_dtypes import chart_dot, chart_dtypes, chart_dtypes_equal_bytes
from tools.charts_n import chart_bandwidth_vs_n, chart_chapters, chart_launch_cost, chart_time_vs_n
from tools.job import run_job
from tools.results import batched_rows, flat_rows, kernels_of, read_results
from tools.schema import BATCHED_CHART, CHARTS, EQUAL_BYTES_CHART
from tools.tables import write_tables


CHART_DRAWERS = {
    "bandwidth_vs_n.png": chart_bandwidth_vs_n,
    "time_vs_n.png": chart_time_vs_n,
    "launch_cost.png": chart_launch_cost,
    "chapters.png": chart_chapters,
    "dtypes.png": chart_dtypes,
    "dot.png": chart_dot,
}


def charts(results_dir):
    every, machine = read_results(results_dir)
    rows, batched = flat_rows(every), batched_rows(every)
    # The charts draw the lessons' kernels and the libraries'. A variant is measured at a few
    # sizes for a comparison with its lesson kernel, which the tables make better than a line
    # of two points would.
    shown = [r for r in rows if not r["variant_of"]]
    colors = kernel_colors(shown)
    drawn = [name for name, _ in CHARTS if name in CHART_DRAWERS]
    for name in drawn:
        CHART_DRAWERS[name](shown, machine, colors, os.path.join(results_dir, name))
    # The batched chart where the run has batched rows. A run without leaves none: the README
    # links the charts that exist, and one of an earlier run would show other numbers.
    batched_chart = os.path.join(results_dir, BATCHED_CHART)
    if batched:
        chart_batched(batched, machine, batched_chart)
        drawn.append(BATCHED_CHART)
    elif os.path.exists(batched_chart):
        os.remove(batched_chart)
        print(f"removed {batched_chart}: bench.csv has no batched rows")
    # The sums at equal bytes in every element type, likewise where the run has them.
    equal_bytes_chart = os.path.join(results_dir, EQUAL_BYTES_CHART)
    if chart_dtypes_equal_bytes(shown, machine, colors, equal_bytes_chart):
        drawn.append(EQUAL_BYTES_CHART)
    elif os.path.exists(equal_bytes_chart):
        os.remove(equal_bytes_chart)
        print(f"removed {equal_bytes_chart}: bench.csv has no sums at equal bytes beyond f32")
    variants = [f"{chapter}/{kernel}" for chapter, kernel in
                kernels_of([r for r in every if r["variant_of"]])]
    if variants:
        print(f"charts leave out the variants (tables.md has them): {', '.join(variants)}")
    print(f"wrote {', '.join(drawn)} in {results_dir}")
    write_tables(results_dir, every, machine)


def main(argv):
    return run_job("charts", "bench.csv + machine.txt -> PNG charts and tables.md", charts, ["results_dir"], argv)
