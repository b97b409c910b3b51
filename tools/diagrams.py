"""Draws the chapters' teaching diagrams into docs/diagrams/ (or OUT_DIR), as PNG.

    python3 -m tools diagrams [OUT_DIR]

    tree_01_vs_02.png         chapters 01 and 02: which threads of one block add at each step of
                              the tree, and how many warps still issue instructions for them
    warp_shuffle_06.png       chapter 06: a warp's five __shfl_down_sync steps, lane 0 ends with
                              the sum
    fixed_grid_07.png         chapter 07: a fixed grid walking the input's tiles in rounds, then
                              pass 2
    ticket_10.png             chapter 10: blocks store their partials and take acq_rel tickets; the
                              last reads every partial, and the happens-before edges that allow it
    batched_mapping_11.png    chapter 11: the row's length picks who reads it: a thread, a group of
                              lanes, a warp, a block or several blocks per row
    equal_cost_ranges_12.png  chapter 12: the warps' ranges of equal elements against ranges of
                              equal cost (an element 1, a segment's end more) over a heavy tail

Every thread, lane, tile, range and count drawn comes from the index rules of the chapters' sources
(reduce.cuh, and 12's reduce.cuh, warp_cost_bound), written out in tools/diagram_rules.py as small
functions (tools/tests/test_diagrams.py checks them); nothing in a picture is typed by hand. Needs
matplotlib only; the same inputs give the same files.
"""

import os
import sys

from tools.diagrams_blocks import draw_fixed_grid_07, draw_ticket_10, draw_tree_01_vs_02, draw_warp_shuffle_06
from tools.diagrams_rows import draw_batched_mapping_11, draw_equal_cost_ranges_12

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = ["tree_01_vs_02.png", "warp_shuffle_06.png", "fixed_grid_07.png", "ticket_10.png",
         "batched_mapping_11.png", "equal_cost_ranges_12.png"]


def main(argv):
    """argv: the job's arguments, [OUT_DIR] at most."""
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    out = argv[0] if argv else os.path.join(ROOT, "docs", "diagrams")
    if len(argv) > 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    for name, draw in zip(FILES, (draw_tree_01_vs_02, draw_warp_shuffle_06, draw_fixed_grid_07, draw_ticket_10,
                                  draw_batched_mapping_11, draw_equal_cost_ranges_12)):
        draw(os.path.join(out, name))
    print(f"wrote {', '.join(FILES)} in {out}")
    return 0
