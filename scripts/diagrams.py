#!/usr/bin/env python3
"""Draws the chapters' teaching diagrams into docs/diagrams/ (or OUT_DIR), as PNG.

    scripts/diagrams.py [OUT_DIR]

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
(reduce.cuh, and 12's reduce.cuh, warp_cost_bound), written out below as small functions (the tests in
results/test_diagrams.py check them); nothing in a picture is typed by hand. Needs matplotlib only;
the same inputs give the same files.
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The chapters keep the colours the benchmark charts give them (results/plot.py).
sys.path.insert(0, os.path.join(ROOT, "results"))
from plot import chapter_color  # noqa: E402

FILES = ["tree_01_vs_02.png", "warp_shuffle_06.png", "fixed_grid_07.png", "ticket_10.png",
         "batched_mapping_11.png", "equal_cost_ranges_12.png"]

# The real sizes, from the chapters' reduce.cuh.
BLOCK = 256      # ch01/ch02/ch07 kBlock: threads per block
WARP = 32        # ch06 kWarp
UNROLL_07 = 8    # ch07: vectors per thread per tile for an f32 sum (Tuning::kMaxLoads)
VEC_F32 = 4      # Vec16<float>::kCount: floats in a 16-byte vector
UNROLL_11 = 4    # ch11 kUnroll: 16-byte loads a lane has in flight in a row's body
SEGMENT_COST = 32  # ch12 SegmentTuning::kSegmentCost: what a segment's end costs a warp

IDLE = "#f2f2f2"      # a lane with nothing to do
WASTED = "#d9d9d9"    # a lane that computes a value nobody reads
EDGE = "#555555"


# ---- The index rules ---------------------------------------------------------------------------

def naive_steps(threads):
    """Chapter 01's tree over a tile of 2 * threads elements: the stride doubles (1, 2, 4, ...) and
    thread t, if t % stride == 0, adds element 2t + stride into element 2t.
    Returns [(stride, [(thread, into, from), ...]), ...]."""
    tile, steps, stride = 2 * threads, [], 1
    while stride < tile:
        steps.append((stride, [(t, 2 * t, 2 * t + stride) for t in range(threads)
                               if t % stride == 0 and 2 * t + stride < tile]))
        stride *= 2
    return steps


def convergent_steps(threads):
    """Chapter 02's tree over the same tile: the stride halves (threads, ..., 2, 1) and thread t,
    if t < stride, adds element t + stride into element t."""
    tile, steps, stride = 2 * threads, [], threads
    while stride >= 1:
        steps.append((stride, [(t, t, t + stride) for t in range(threads)
                               if t < stride and t + stride < tile]))
        stride //= 2
    return steps


def reduce_with(steps, values):
    """Runs a tree's steps on a list of values (the tile) in order; element 0 holds the sum."""
    values = list(values)
    for _, ops in steps:
        for _, into, src in ops:
            values[into] += values[src]
    return values[0]


def warp_counts(steps, threads, warp):
    """For each step: (warps that issue its instructions, of those the divergent ones). A warp
    issues when any of its lanes works; it diverges when some, not all, of its lanes do."""
    counts = []
    for _, ops in steps:
        busy = [0] * (threads // warp)
        for t, _, _ in ops:
            busy[t // warp] += 1
        counts.append((sum(b > 0 for b in busy), sum(0 < b < warp for b in busy)))
    return counts


def shuffle_steps(lanes):
    """Chapter 06's warp_reduce: offsets lanes/2, ..., 2, 1; lane i takes lane i + offset's value
    (__shfl_down_sync) and combines it where i + offset < lanes.
    Returns [(offset, [(into, from), ...]), ...]."""
    steps, offset = [], lanes // 2
    while offset > 0:
        steps.append((offset, [(i, i + offset) for i in range(lanes) if i + offset < lanes]))
        offset //= 2
    return steps


def shuffle_contents(lanes):
    """After each step of shuffle_steps: the set of starting lanes each lane's value covers."""
    held, history = [{i} for i in range(lanes)], []
    for _, pairs in shuffle_steps(lanes):
        held = [h.copy() for h in held]
        before = [h.copy() for h in held]
        for into, src in pairs:
            held[into] |= before[src]
        history.append(held)
    return history


def lanes_that_matter(lanes):
    """After each step, the lanes whose value reaches lane 0's result (worked back from lane 0)."""
    needed, out = {0}, []
    for _, pairs in reversed(shuffle_steps(lanes)):
        out.append(needed)
        needed = needed | {src for into, src in pairs if into in needed}
    return out[::-1]


def fixed_grid(vectors, grid, block, unroll, tail=0):
    """Chapter 07's pass 1: who loads what. Tiles of block * unroll vectors, in rounds: in round r
    block b takes tile r * grid + b, and in a tile thread t loads vectors t, t + block, ... .
    Less than a round left: one vector per thread over every thread of the grid, at most unroll
    each. Then the `tail` elements past the last whole vector, one per thread.
    Returns (rounds, [(block, thread, round or None) per vector], [(block, thread) per tail element])."""
    tile, threads = block * unroll, grid * block
    rounds = vectors // tile // grid
    owner = [None] * vectors
    for b in range(grid):
        for t in range(block):
            for r in range(rounds):
                first = (r * grid + b) * tile + t
                for u in range(unroll):
                    owner[first + u * block] = (b, t, r)
            rest = rounds * grid * tile + b * block + t
            for u in range(unroll):
                if rest + u * threads < vectors:
                    owner[rest + u * threads] = (b, t, None)
    tail_owner = [divmod(i, block) for i in range(tail)]  # element vectors*count + i: thread i
    return rounds, owner, tail_owner


def ticket_meeting(order):
    """Chapter 10's ticket, for the blocks 0 .. G-1 of a grid taking their tickets in `order`.
    Each block stores its partial, then takes ticket = counter.fetch_add(1) (acq_rel): tickets are
    0, 1, 2, ... in arrival order, and the block whose ticket is G - 1 is the last. It reads every
    partial, 0 .. G-1 in index order (thread t: partials t, t + 256, ...), whatever the order.
    Returns (ticket per block, the last block, the partials it reads, the happens-before edges).
    An edge (a, b): a happens before b, with events ("store", b), ("ticket", b), ("read", i):
    program order (a block's store is released by its ticket), the counter (each fetch_add reads
    the value the one before wrote: the last ticket's acquire takes every earlier release with
    it), and the last block's acquire before its reads (its __syncthreads passes it to every thread)."""
    blocks = len(order)
    if sorted(order) != list(range(blocks)):
        raise ValueError("order must name every block once")
    ticket = {b: k for k, b in enumerate(order)}
    last = next(b for b in order if ticket[b] == blocks - 1)
    reads = list(range(blocks))
    edges = [(("store", b), ("ticket", b)) for b in range(blocks)]
    edges += [(("ticket", a), ("ticket", b)) for a, b in zip(order, order[1:])]
    edges += [(("ticket", last), ("read", i)) for i in reads]
    return ticket, last, reads, edges


def happens_before(edges):
    """The events each event happens before: the transitive closure of `edges`."""
    after = {}
    for a, b in edges:
        after.setdefault(a, set()).add(b)
    closure = {}
    for start in after:
        seen, todo = set(), [start]
        while todo:
            for nxt in after.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        closure[start] = seen
    return closure


def ceil_div(a, b):
    return -(-a // b)


def pow2_at_least(x):
    """Chapter 11's pow2_at_least: the least power of 2 at or above x, but at most 32 (a warp)."""
    p = 1
    while p < x and p < 32:
        p *= 2
    return p


def row_plan(cols, rows, resident, count=VEC_F32, block=BLOCK, unroll=UNROLL_11):
    """Chapter 11's plan() for rows of `cols` elements (count of them a 16-byte vector: 4 for f32),
    the automatic strategy. V = ceil(cols / count) vectors a row: V <= 2 a thread per row; V <= 512
    a group of lanes = max(2, pow2_at_least(ceil(V / 2))) lanes, at most 32; longer, blocks: as
    many per row as one wave of `resident` blocks gives the rows, but no more than full trips of
    block x unroll vectors allow, each a chunk of whole trips; one: block_per_row.
    Returns (strategy, lanes, split, chunk): lanes, the threads that read one row (or one chunk of
    it: a block's); split, the blocks a row; chunk, a block's columns (0 for threads and groups)."""
    V = ceil_div(cols, count)
    if V <= 2:
        return "thread_per_row", 1, 1, 0
    if V <= 512:
        return "group_per_row", max(2, pow2_at_least(ceil_div(V, 2))), 1, 0
    most = max(1, V // (block * unroll))            # a full trip each
    wanted = max(1, resident // max(rows, 1))       # one wave of blocks
    split = min(most, wanted)
    trip = block * unroll * count
    chunk = max(1, ceil_div(ceil_div(cols, split), trip)) * trip
    split = max(1, ceil_div(cols, chunk))
    return ("block_per_row" if split == 1 else "blocks_per_row"), block, split, chunk


def row_readers(cols, plan, count=VEC_F32, unroll=UNROLL_11):
    """Who reads each 16-byte vector v of a row (aligned rows), under row_plan's plan:
    (block of the row, lane, trip). Lane l of a thread's or group's `lanes` reads vectors l,
    l + lanes, ... (lane_accumulate, rows_aligned); in the block mappings block k of the row takes
    its chunk, and in it thread t reads vectors t, t + 256, ..., `unroll` of them a trip."""
    _, lanes, _, chunk = plan
    per_block = chunk // count if chunk else ceil_div(cols, count)
    out = []
    for v in range(ceil_div(cols, count)):
        k, w = divmod(v, per_block)
        out.append((k, w % lanes, w // (lanes * unroll)))
    return out


def element_ranges(lengths, warps):
    """Ranges of equal elements (chapter 12's balanced mapping with kSegmentCost = 0): warp w takes
    elements [w * step, (w + 1) * step), step = ceil(n / warps), within [0, n)."""
    n = sum(lengths)
    step = ceil_div(n, warps)
    return [(min(n, w * step), min(n, (w + 1) * step)) for w in range(warps)]


def cost_ranges(lengths, end_cost, warps):
    """Chapter 12's ranges of equal cost (warp_cost_bounds, range_cost_step): along the merge of the
    elements (cost 1 each) and the segments' ends (end_cost each, segment s's right after its last
    element), range w takes the costs [w * step, (w + 1) * step), step = ceil(total / warps). The
    bound at cost t: j, the first segment whose end's cost runs past t, and i = t - end_cost * j
    elements, but no further than segment j's end. Returns each warp's [first, last) elements.
    Leaves out the kernel's rounding of the bounds down to whole windows (32 lanes x 16 elements),
    and takes offsets[0] = 0."""
    ends, e = [], 0
    for length in lengths:
        e += length
        ends.append(e)
    n, segments = e, len(lengths)
    step = ceil_div(n + end_cost * segments, warps)

    def bound(t):
        j = next((s for s in range(segments) if ends[s] + end_cost * (s + 1) > t), segments)
        return min(t - end_cost * j, ends[j] if j < segments else n)

    return [(bound(w * step), bound((w + 1) * step)) for w in range(warps)]


def range_cost(lengths, lo, hi, end_cost):
    """A range's cost: its elements, plus end_cost for each segment end it holds (an end at e lies
    in [lo, hi) when lo < e <= hi, or e == lo == 0: empty segments at the very start)."""
    ends, e = [], 0
    for length in lengths:
        e += length
        ends.append(e)
    return hi - lo + end_cost * sum(1 for e in ends if lo < e <= hi or e == lo == 0)


# ---- Drawing helpers ---------------------------------------------------------------------------

def _cell(ax, x, y, color, text="", w=0.9, h=0.8, fontsize=7, hatch=None, edge=EDGE, textcolor="black"):
    ax.add_patch(Rectangle((x - w / 2, y - h / 2), w, h, facecolor=color, edgecolor=edge,
                           linewidth=0.6, hatch=hatch))
    if text:
        ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=textcolor)


def _bare(ax):
    ax.set_axis_off()
    ax.set_aspect("equal")


def _tint(color, white):
    """color moved a fraction `white` of the way to white."""
    return tuple(c + (1 - c) * white for c in to_rgb(color))


def _save(fig, path):
    # No timestamp goes into a PNG; the same matplotlib draws the same bytes.
    fig.savefig(path, dpi=130, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


# ---- The diagrams ------------------------------------------------------------------------------

def draw_tree_01_vs_02(path, threads=16, warp=4):
    """Teaches why 02 beats 01 with the same number of additions. In 01 (t % stride == 0) the
    working threads are scattered over every warp, so all warps keep issuing the step while most
    lanes sit out; in 02 (t < stride) they are packed at the front, and whole warps retire.
    Drawn for one block scaled down (16 threads in warps of 4, for 256 in warps of 32); the panel
    at the bottom counts the real block's issuing and divergent warps with the same functions."""
    schemes = [("01_naive", "stride doubles; thread t works if t % stride == 0: element 2t += element 2t + stride",
                naive_steps),
               ("02_convergent", "stride halves; thread t works if t < stride: element t += element t + stride",
                convergent_steps)]
    warps, gap = threads // warp, 0.6
    xs = [t + gap * (t // warp) for t in range(threads)]
    rows = len(naive_steps(threads))
    fig = plt.figure(figsize=(15, 14))
    grid = fig.add_gridspec(3, 1, height_ratios=[rows + 2.6, rows + 2.6, 7], hspace=0.25)
    for panel, (chapter, rule, steps_of) in enumerate(schemes):
        ax = fig.add_subplot(grid[panel])
        ax.set_axis_off()
        color = chapter_color(chapter, 0)
        steps = steps_of(threads)
        for w in range(warps):  # header: lanes and warps
            ax.text((xs[w * warp] + xs[w * warp + warp - 1]) / 2, -1.25, f"warp {w}", ha="center",
                    fontsize=9.5, fontweight="bold")
        for t in range(threads):
            ax.text(xs[t], -0.7, f"t{t}", ha="center", fontsize=8, color="dimgray")
        for y, ((stride, ops), (issuing, divergent)) in enumerate(zip(steps, warp_counts(steps, threads, warp))):
            working = {t: (into, src) for t, into, src in ops}
            for w in range(warps):
                lanes = range(w * warp, (w + 1) * warp)
                if any(t in working for t in lanes):  # an issuing warp: a band behind its lanes
                    ax.add_patch(Rectangle((xs[lanes[0]] - 0.55, y - 0.5), xs[lanes[-1]] - xs[lanes[0]] + 1.1,
                                           1.0, facecolor="#fff2b3", edgecolor="#c9a400", linewidth=1))
            for t in range(threads):
                if t in working:
                    into, src = working[t]
                    _cell(ax, xs[t], y, color, f"[{into}]\n+=[{src}]", w=0.96, fontsize=6.5, textcolor="white")
                elif any(u in working for u in range(t // warp * warp, (t // warp + 1) * warp)):
                    _cell(ax, xs[t], y, "white", w=0.96, hatch="////", edge="#999999")  # waits in a busy warp
                else:
                    _cell(ax, xs[t], y, IDLE, w=0.96, edge="#cccccc")  # its warp has retired
            ax.text(-1.0, y, f"stride {stride}", ha="right", va="center", fontsize=9.5)
            ax.text(xs[-1] + 1.0, y, f"{len(ops)} thread{'s' if len(ops) > 1 else ''} add; "
                    f"{issuing} of {warps} warps issue" + (f" ({divergent} divergent)" if divergent else ""),
                    ha="left", va="center", fontsize=9.5)
        ax.set_xlim(-3.8, xs[-1] + 9.5)
        ax.set_ylim(len(steps) - 0.4, -1.6)
        ax.set_title(f"{chapter}: {rule}", fontsize=11, loc="left", color=color, fontweight="bold")
    fig.legend(handles=[Patch(facecolor="#888888", edgecolor=EDGE,
                              label="thread adds (cell: [into] += [from]), in its chapter's colour"),
                        Patch(facecolor="white", hatch="////", edgecolor="#999999",
                              label="thread waits while its warp issues the step"),
                        Patch(facecolor=IDLE, edgecolor="#cccccc", label="warp retired: issues nothing"),
                        Patch(facecolor="#fff2b3", edgecolor="#c9a400", label="warp that issues the step")],
               loc="lower center", bbox_to_anchor=(0.5, 0.905), ncol=4, fontsize=9.5, frameon=False)
    fig.suptitle(f"One block's tree, scaled down: {threads} threads and {2 * threads} elements, warps of "
                 f"{warp} lanes standing for warps of {WARP} (the kernels run {BLOCK} threads, "
                 f"{2 * BLOCK} elements, {BLOCK // WARP} warps)", fontsize=12.5, y=0.94)

    # The real block: issuing warps per step, both schemes, from the same rules.
    ax = fig.add_subplot(grid[2])
    width = 0.38
    for k, (chapter, _, steps_of) in enumerate(schemes):
        steps = steps_of(BLOCK)
        counts = warp_counts(steps, BLOCK, WARP)
        positions = [i + (k - 0.5) * width for i in range(len(steps))]
        ax.bar(positions, [c[0] for c in counts], width, color=chapter_color(chapter, 0), edgecolor=EDGE,
               label=f"{chapter}: {sum(c[0] for c in counts)} warp-steps issued, "
                     f"{sum(c[1] for c in counts)} of them divergent")
        ax.bar(positions, [c[1] for c in counts], width, facecolor="none", edgecolor="black", hatch="..",
               linewidth=0)
    naive, convergent = naive_steps(BLOCK), convergent_steps(BLOCK)
    ax.set_xticks(range(len(naive)))
    ax.set_xticklabels([f"step {i + 1}\n01: stride {a[0]}\n02: stride {b[0]}"
                        for i, (a, b) in enumerate(zip(naive, convergent))], fontsize=8)
    ax.set_yticks(range(0, BLOCK // WARP + 1, 2))
    ax.set_ylabel("warps issuing the step")
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Patch(facecolor="white", edgecolor="black", hatch=".."))
    labels.append("dotted: divergent warps (some lanes add, some wait)")
    ax.legend(handles, labels, fontsize=9, loc="upper right", frameon=False)
    ax.set_title(f"The real block ({BLOCK} threads, {BLOCK // WARP} warps of {WARP}): warps issuing each step",
                 fontsize=10.5, loc="left")
    ax.set_ylim(0, BLOCK // WARP + 3)
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, path)


def draw_warp_shuffle_06(path, lanes=WARP):
    """Teaches the warp reduction of chapter 06: five __shfl_down_sync steps (offsets 16, 8, 4, 2,
    1), each lane i taking lane i + offset's register, no shared memory and no barrier. Every lane
    runs every step; after the step of offset o only lanes 0 .. o-1 hold values that reach the
    result, and lane 0 ends with the warp's sum. A cell's number counts the lanes its value covers."""
    color = chapter_color("06_warp_shuffle", 0)
    steps, contents, matter = shuffle_steps(lanes), shuffle_contents(lanes), lanes_that_matter(lanes)
    fig, ax = plt.subplots(figsize=(16, 9))
    _bare(ax)
    gap = 2.6  # rows apart, room for the arrows
    for i in range(lanes):
        ax.text(i, -0.75, str(i), ha="center", fontsize=8, color="dimgray")
        _cell(ax, i, 0, color, "1", textcolor="white")
    ax.text(-1, -0.75, "lane", ha="right", fontsize=8, color="dimgray")
    ax.text(-1, 0, "start", ha="right", va="center", fontsize=9)
    for k, ((offset, pairs), held, needed) in enumerate(zip(steps, contents, matter), 1):
        y = k * gap
        for into, src in pairs:  # the shuffle: lane src's value goes down to lane into
            used = into in needed
            ax.add_patch(FancyArrowPatch((src, y - gap + 0.42), (into, y - 0.42), arrowstyle="-|>",
                                         mutation_scale=7 if used else 5, linewidth=1.1 if used else 0.5,
                                         color="black" if used else "#bbbbbb", zorder=3 if used else 1))
        for i in range(lanes):
            if i in needed:
                _cell(ax, i, y, color, str(len(held[i])), textcolor="white")
            else:
                _cell(ax, i, y, WASTED, edge="#aaaaaa")
        ax.text(-1, y, f"offset {offset}", ha="right", va="center", fontsize=9)
        ax.text(lanes + 0.2, y, f"lanes 0-{offset - 1} take lanes {offset}-{2 * offset - 1}" if offset > 1
                else "lane 0 takes lane 1: the warp's sum", ha="left", va="center", fontsize=9)
    ax.set_xlim(-4, lanes + 9)
    ax.set_ylim(len(steps) * gap + 0.7, -1.3)
    ax.legend(handles=[Patch(facecolor=color, edgecolor=EDGE,
                             label="value that reaches lane 0 (number: lanes it sums)"),
                       Patch(facecolor=WASTED, edgecolor="#aaaaaa",
                             label="value that never reaches lane 0 (every lane runs every step)"),
                       plt.Line2D([], [], color="black", marker=">",
                                  label="__shfl_down_sync: lane i + offset to lane i")],
              loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=9.5, frameon=False)
    ax.set_title(f"06_warp_shuffle: warp_reduce over {lanes} lanes, in registers: "
                 f"v = combine(v, __shfl_down_sync(mask, v, offset)) where lane + offset < {lanes}\n"
                 "block_reduce then: lane 0 of every warp writes its value to shared memory, and after a barrier "
                 "warp 0 runs the same steps over those values", fontsize=11, loc="left")
    _save(fig, path)


def draw_fixed_grid_07(path, grid=4, block=4, unroll=2, extra_vectors=22, tail=3):
    """Teaches chapter 07's fixed grid: only as many blocks as the GPU holds at once, walking the
    input in rounds (round r: block b takes tile r * gridDim + b; in a tile thread t loads vectors
    t, t + blockDim, ...), the last partial round spread one vector per thread over all blocks,
    one partial per block, and pass 2 combining the partials in one block in a fixed order.
    Drawn scaled down: 4 blocks of 4 threads, 2 vectors per thread per tile."""
    tile = block * unroll
    per_row = grid * tile  # one round: the input is drawn in order, a round per line
    vectors = 3 * per_row + extra_vectors
    rounds, owner, tail_owner = fixed_grid(vectors, grid, block, unroll, tail)
    tab10 = plt.get_cmap("tab10").colors
    colors = [tab10[i] for i in (0, 1, 2, 4, 9, 6, 8, 5)][:grid]  # hues far apart
    pitch = 1.9  # rows apart, room for the tiles' labels
    fig, ax = plt.subplots(figsize=(15, 8))
    _bare(ax)
    for v, (b, t, r) in enumerate(owner):
        row, x = divmod(v, per_row)
        _cell(ax, x, row * pitch, colors[b], f"t{t}", fontsize=7.5, textcolor="white")
        if x == 0:
            ax.text(-0.7, row * pitch + 0.62, f"from vector {v}", ha="right", va="center", fontsize=7.5,
                    color="dimgray")
        if r is not None and v % tile == 0:
            ax.text(x + tile / 2 - 0.5, row * pitch - 0.6, f"tile {v // tile} = {r}·{grid}+{b} → block {b}",
                    ha="center", va="bottom", fontsize=8.5)
    lines = rounds + (1 if vectors % per_row else 0)
    for row in range(rounds):
        ax.text(-0.7, row * pitch, f"round {row}", ha="right", va="center", fontsize=9.5)
    if vectors % per_row:
        ax.text(-0.7, rounds * pitch, "the rest", ha="right", va="center", fontsize=9.5)
        ax.text(-0.5, rounds * pitch - 0.6, f"less than a round left ({vectors % per_row} vectors): one "
                f"vector per thread of the grid, then again, at most {unroll} each", ha="left", va="bottom",
                fontsize=8.5)
    x0 = (vectors % per_row) or per_row
    for i, (b, t) in enumerate(tail_owner):  # elements past the last whole vector: narrow cells
        _cell(ax, x0 + 0.2 + 0.3 * i, (lines - 1) * pitch, colors[b], w=0.27, h=0.55)
    if tail:
        ax.text(x0 + 0.1 + 0.3 * tail, (lines - 1) * pitch, f"  tail: {tail} elements, one per thread "
                f"(t0-t{tail - 1} of block 0)", ha="left", va="center", fontsize=8.5)

    # Pass 1 ends with a partial per block; pass 2, one block, combines them.
    y = lines * pitch + 0.4
    centers = [per_row * (b + 0.5) / grid - 0.5 for b in range(grid)]
    ax.text(-0.7, y, "pass 1", ha="right", va="center", fontsize=9.5)
    for b, x in enumerate(centers):
        _cell(ax, x, y, colors[b], f"block {b}: block_reduce → partials[{b}]", w=per_row / grid - 1.2,
              fontsize=8.5, textcolor="white")
    result, y2 = per_row / 2 - 0.5, y + 2.2
    ax.text(-0.7, y2, "pass 2", ha="right", va="center", fontsize=9.5)
    for x in centers:
        ax.add_patch(FancyArrowPatch((x, y + 0.42), (result, y2 - 0.42), arrowstyle="-|>", mutation_scale=9,
                                     color=EDGE, linewidth=1))
    _cell(ax, result, y2, "white", "one block: thread t combines partials t, t + 1024, ...; "
          "block_reduce → result (the same order every run)", w=per_row * 0.62, fontsize=8.5)
    ax.set_xlim(-4.5, per_row + 0.5)
    ax.set_ylim(y2 + 0.6, -1.4)
    ax.legend(handles=[Patch(facecolor=c, edgecolor=EDGE, label=f"block {b}") for b, c in enumerate(colors)],
              loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=grid, fontsize=9.5, frameon=False)
    ax.set_title(f"07_two_pass, pass 1 on a fixed grid, scaled down: {grid} blocks of {block} threads, tiles of "
                 f"{block} × {unroll} vectors (a cell: one 16-byte vector, and the thread that loads it)\n"
                 f"the kernel: tiles of {BLOCK} threads × {UNROLL_07} vectors (f32), as many blocks as the GPU "
                 f"holds at once; round r gives tile r·gridDim + b to block b", fontsize=10.5, loc="left")
    _save(fig, path)


def _hues(count):
    """Hues far apart for owners drawn side by side (blocks, threads, groups, warps)."""
    tab10 = plt.get_cmap("tab10").colors
    return [tab10[i] for i in (0, 1, 2, 4, 9, 6, 8, 5)][:count]


def _pow2_text(x):
    """x as 2 with a superscript exponent where it is a power of 2 from 1024 up, else in digits."""
    if x >= 1024 and x & (x - 1) == 0:
        return "2" + str(x.bit_length() - 1).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{x:,}"


def draw_batched_mapping_11(path, resident=1024, shown=3):
    """Teaches chapter 11's idea: the shape decides the mapping. For the benchmark's row shapes
    (L = 8, 32, 1024 and 65536 floats, and 64 rows of 2^20), row_plan gives the strategy and
    row_readers who reads each 16-byte vector of a row: a thread, a group of lanes, a warp, a block,
    or several blocks and a ticket. Every bar is one row, drawn the same width whatever its length.
    The split of the few long rows assumes a GPU holding `resident` blocks at once."""
    cases = [(8, 2 ** 23), (32, 2 ** 21), (1024, 2 ** 16), (65536, 2 ** 10), (2 ** 20, 64)]
    bar, pitch = 30.0, 1.0
    hues = _hues(shown)
    fig, ax = plt.subplots(figsize=(10, 11.5))
    ax.set_axis_off()
    y = 0.0
    for cols, rows in cases:
        plan = row_plan(cols, rows, resident)
        strategy, lanes, split, chunk = plan
        V = ceil_div(cols, VEC_F32)
        readers = row_readers(cols, plan)
        if strategy == "thread_per_row":
            head = (f"V = {V} ≤ 2 → thread_per_row: a thread reads a whole row",
                    f"thread r reads the {V} vectors of row r")
        elif strategy == "group_per_row":
            rule = f"max(2, pow2 ≥ ⌈{V}/2⌉)" if lanes < WARP else f"min(32, pow2 ≥ ⌈{V}/2⌉)"
            head = (f"V = {V} ≤ 512 → group_per_row, lanes = {rule} = {lanes}",
                    f"lane l of a row's group reads vectors l, l + {lanes}, …" +
                    (f", l + {V - lanes}: {V // lanes} each (a shade a lane)" if V // lanes > 2 else ""))
        elif strategy == "block_per_row":
            head = (f"V = {_pow2_text(V)} > 512, rows enough to fill the GPU → block_per_row",
                    f"thread t of the row's block reads vectors t, t + {BLOCK}, …: {UNROLL_11} in flight a trip "
                    f"(a shade), {V // (BLOCK * UNROLL_11)} trips")
        else:
            head = (f"V = {_pow2_text(V)} > 512, only {rows} rows → blocks_per_row: {split} blocks a row",
                    f"block k of a row reads its chunk of {_pow2_text(chunk)} floats; the last of the row's "
                    f"{split} to take its ticket adds the {split} partials")
        shape = f"L = {_pow2_text(cols)} floats"
        if lanes == BLOCK:  # the rows count only where blocks share them out
            shape += f", {_pow2_text(rows)} rows"
        ax.text(-0.3, y, f"{shape}:  {head[0]}", ha="left",
                va="center", fontsize=11, fontweight="bold")
        ax.text(-0.3, y + 0.75, head[1], ha="left", va="center", fontsize=10, color="dimgray")
        y += 1.7
        for r in range(shown):
            hue = hues[r]
            ax.text(-0.6, y, f"row {r}", ha="right", va="center", fontsize=10)
            if strategy in ("thread_per_row", "group_per_row") and V <= 16:
                w = bar / V
                for v, (_, lane, _) in enumerate(readers):
                    _cell(ax, (v + 0.5) * w, y, hue, f"t{r * lanes + lane}", w=w, h=0.75, fontsize=9.5,
                          edge="white", textcolor="white")
                who = f"thread {r}" if lanes == 1 else f"threads {r * lanes}-{r * lanes + lanes - 1}"
            elif strategy == "group_per_row":  # too many vectors to name: a shade per lane
                w = bar / V
                for v, (_, lane, _) in enumerate(readers):
                    ax.add_patch(Rectangle((v * w, y - 0.375), w, 0.75, linewidth=0,
                                           facecolor=_tint(hue, 0.75 * lane / (lanes - 1))))
                ax.add_patch(Rectangle((0, y - 0.375), bar, 0.75, facecolor="none", edgecolor=EDGE, linewidth=0.6))
                who = f"warp {r}: lanes 0-{lanes - 1}"
            else:  # blocks: a cell per chunk (a block), a shade per trip
                per_block = chunk // VEC_F32
                trips = ceil_div(per_block, BLOCK * UNROLL_11)
                w = bar / (split * trips) if split == 1 else bar / split
                for v in range(0, V, BLOCK * UNROLL_11 if split == 1 else per_block):
                    k, _, trip = readers[v]
                    x = (k * trips + trip) * w if split == 1 else k * w
                    shade = _tint(hue, 0.35 * (trip % 2 if split == 1 else k % 2))
                    _cell(ax, x + w / 2, y, shade, "" if split == 1 else f"b{r * split + k}", w=w, h=0.75,
                          fontsize=7.5, edge="white", textcolor="white")
                who = f"block {r}: {BLOCK} threads" if split == 1 else \
                    f"blocks {r * split}-{r * split + split - 1}"
            ax.text(bar + 0.6, y, who, ha="left", va="center", fontsize=10)
            y += pitch
        ax.text(-0.6, y - 0.15, "…", ha="right", va="center", fontsize=11)
        ax.text(0, y - 0.15, f"and so on, {_pow2_text(rows)} rows", ha="left", va="center", fontsize=9.5,
                color="dimgray")
        y += 1.3
    ax.set_xlim(-4.2, bar + 10.5)
    ax.set_ylim(y - 0.6, -0.8)
    ax.set_title("11_batched: the row's length decides who reads it (f32, V = ⌈L / 4⌉ 16-byte vectors a row)\n"
                 "a bar: one row, the same width whatever L; a colour: one owner (thread, group, warp or block)"
                 + f"\nthe split of the 64 rows assumes a GPU that holds {resident} blocks at once",
                 fontsize=11.5, loc="left")
    _save(fig, path)


HEAVY_TAIL_12 = [2, 0, 1, 3, 0, 0, 2, 24, 1, 0, 4, 1, 0, 2, 0, 8]  # the picture's segments: one holds half


def draw_equal_cost_ranges_12(path, lengths=HEAVY_TAIL_12, end_cost=4, warps=8):
    """Teaches chapter 12's balanced mapping: the warps' ranges hold equal cost, not equal elements.
    An element costs 1 and a segment's end end_cost (the kernel: 32, scaled down here with the
    input); the elements and the ends are laid out as one list and cut every `step` of cost
    (cost_ranges). Where short segments crowd, a range holds few elements; inside the big segment,
    many, and fewer warps share it than equal elements would give it."""
    n, segments = sum(lengths), len(lengths)
    ends, e = [], 0
    for length in lengths:
        e += length
        ends.append(e)
    owner = [s for s, length in enumerate(lengths) for _ in range(length)]  # each element's segment
    big = max(range(segments), key=lambda s: lengths[s])
    big_lo, big_hi = ends[big] - lengths[big], ends[big]
    total = n + end_cost * segments
    step = ceil_div(total, warps)
    pastel = plt.get_cmap("Pastel1").colors
    seg_color = [chapter_color("12_segmented", 0) if s == big else pastel[[0, 1, 2, 4, 6][s % 5]]
                 for s in range(segments)]
    warp_color = [("#3b4a6b", "#8797b8")[w % 2] for w in range(warps)]
    scale = n / total  # the merged list drawn over the same width as the elements
    fig, ax = plt.subplots(figsize=(10, 6.2))
    ax.set_axis_off()
    y_el, y_eq, y_cost, y_bal = 0.0, 2.2, 4.6, 6.8
    # The elements, coloured by segment, and the ends above them (several at one place: stacked).
    for top, bottom in ((y_el - 1.3, y_eq + 1.25), (y_bal - 0.55, y_bal + 1.25)):  # the big segment's columns
        ax.add_patch(Rectangle((big_lo, top), big_hi - big_lo, bottom - top, facecolor=_tint(seg_color[big], 0.85),
                               edgecolor="none", zorder=0))
    for i, s in enumerate(owner):
        _cell(ax, i + 0.5, y_el, seg_color[s], w=1.0, h=0.8, edge="white")
    stacked = {}
    for s, e in enumerate(ends):
        k = stacked.get(e, 0)
        stacked[e] = k + 1
        ax.plot([e, e], [y_el - 0.45, y_el + 0.45], color="black", linewidth=1.6)
        ax.plot([e], [y_el - 0.62 - 0.32 * k], marker="v", color="black", markersize=6)
    ax.text(-0.6, y_el, f"{n} elements,\n{segments} segments", ha="right", va="center", fontsize=10)
    ax.text(big_lo + (big_hi - big_lo) / 2, y_el, f"segment {big}: {lengths[big]} of the {n} elements",
            ha="center", va="center", fontsize=10, color="white", fontweight="bold")
    # Equal elements.
    rows = ((y_eq, element_ranges(lengths, warps), f"equal elements\n({ceil_div(n, warps)} a warp)"),
            (y_bal, cost_ranges(lengths, end_cost, warps), f"equal cost\n({step} a warp)"))
    for y, ranges, label in rows:
        for w, (lo, hi) in enumerate(ranges):
            if hi > lo:
                _cell(ax, (lo + hi) / 2, y, warp_color[w], f"w{w}", w=hi - lo, h=0.8, edge="white",
                      fontsize=10, textcolor="white")
                ax.text((lo + hi) / 2, y + 0.62, f"{hi - lo}/{range_cost(lengths, lo, hi, end_cost)}",
                        ha="center", va="top", fontsize=9, color="dimgray")
        ax.text(-0.6, y + 0.62, "elements/cost", ha="right", va="top", fontsize=9, color="dimgray")
        on_big = sum(1 for lo, hi in ranges if lo < big_hi and hi > big_lo)
        ax.text(-0.6, y, label, ha="right", va="center", fontsize=10)
        ax.text(n + 0.6, y, f"{on_big} warps\nread segment {big}", ha="left", va="center", fontsize=10,
                fontweight="bold")
    # The merged list: each segment's elements (1 each), then its end (end_cost), cut every step.
    x = 0.0
    for s, length in enumerate(lengths):
        for _ in range(length):
            _cell(ax, x + scale / 2, y_cost, seg_color[s], w=scale, h=0.8, edge="white")
            x += scale
        _cell(ax, x + scale * end_cost / 2, y_cost, "#333333", w=scale * end_cost, h=0.8, edge="white")
        x += scale * end_cost
    ax.text(-0.6, y_cost, f"the work: an element\ncosts 1, an end {end_cost}", ha="right", va="center",
            fontsize=10)
    ax.text(n + 0.6, y_cost, f"cost {total}\n= {n} + {end_cost} × {segments}", ha="left", va="center",
            fontsize=10)
    for w, (lo, _) in enumerate(cost_ranges(lengths, end_cost, warps)[1:], 1):
        ax.plot([w * step * scale] * 2, [y_cost - 0.55, y_cost + 0.55], color="crimson", linewidth=1.8)
        ax.add_patch(FancyArrowPatch((w * step * scale, y_cost + 0.55), (lo, y_bal - 0.45), arrowstyle="-|>",
                                     mutation_scale=8, color="crimson", linewidth=1))
    ax.text(0, y_cost - 0.62, f"cut every {step} = ⌈{total} / {warps} warps⌉ of cost; "
            "a cut inside an end moves to its segment's last element", ha="left", va="bottom", fontsize=9,
            color="crimson")
    ax.set_xlim(-7.5, n + 6.5)
    ax.set_ylim(y_bal + 1.5, -2.0)
    ax.legend(handles=[Patch(facecolor=pastel[0], edgecolor=EDGE, label="an element, coloured by its segment"),
                       plt.Line2D([], [], color="black", marker="v", linewidth=1.6,
                                  label="a segment's end (stacked: empty segments)"),
                       Patch(facecolor="#333333", label=f"an end in the work: cost {end_cost}")],
              loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=9.5, frameon=False)
    ax.set_title(f"12_segmented, balanced: {warps} warps share a heavy tail, scaled down (an end costs {end_cost} "
                 f"here, {SEGMENT_COST} in the kernel)\nequal elements: the warps among short segments get their "
                 "many ends too; equal cost evens the work\nout, and the big segment, cheap for its size, gets "
                 "fewer warps", fontsize=11.5, loc="left")
    _save(fig, path)


def draw_ticket_10(path, order=(1, 3, 0, 2)):
    """Teaches chapter 10's meeting through memory: each block stores its partial, then takes a
    ticket with one acq_rel fetch_add on the counter; the block that draws the last ticket reads
    every partial. Drawn for 4 blocks arriving in `order` (ticket_meeting), a row per block in
    that order, time to the right. The happens-before edges: the release orders a block's store
    before its ticket, each fetch_add reads what the one before it wrote, and the last ticket's
    acquire orders every partial's store before the last block's reads."""
    ticket, last, reads, edges = ticket_meeting(list(order))
    blocks = len(order)
    hues = _hues(blocks)
    hb = chapter_color("10_single_pass", 0)
    fig, ax = plt.subplots(figsize=(10, 6.6))
    ax.set_axis_off()
    pitch, y_slots, y_counter = 1.45, -2.9, -1.45
    row = {b: k * pitch for k, b in enumerate(order)}
    done = {b: 1.8 + 4.2 * ticket[b] for b in order}        # pass 1 ends: in ticket order
    store = {b: (done[b], done[b] + 1.9) for b in order}    # [start, end) of each box
    take = {b: (done[b] + 2.05, done[b] + 4.05) for b in order}
    mid = lambda span: (span[0] + span[1]) / 2  # noqa: E731

    def box(span, y, color, text, textcolor="white", fontsize=9.5):
        _cell(ax, mid(span), y, color, text, w=span[1] - span[0], h=0.8, fontsize=fontsize, textcolor=textcolor)

    def arrow(a, b, color=hb, width=1.8, style="-|>", rad=0.0):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=12, color=color, linewidth=width,
                                     shrinkA=0, shrinkB=0, zorder=4, connectionstyle=f"arc3,rad={rad}"))

    for b in order:
        y, k = row[b], ticket[b]
        ax.text(-0.4, y, f"block {b}", ha="right", va="center", fontsize=10.5, color=hues[b], fontweight="bold")
        box((0, done[b] - 0.15), y, _tint(hues[b], 0.7), "pass 1" if k == 0 else "pass 1: tiles → tree",
            textcolor="black")
        box(store[b], y, hues[b], "store\npartial")
        box(take[b], y, hues[b] if b != last else "black", f"ticket {k}" + ("\n= last" if b == last else ""))
        # its store goes to its slot; its ticket reads and writes the counter
        arrow((mid(store[b]), y - 0.4), (mid(store[b]), y_slots + 0.4), color="#888888", width=1)
        _cell(ax, mid(store[b]), y_slots, _tint(hues[b], 0.3), f"partials[{b}]", w=2.9, h=0.8, fontsize=9.5)
        arrow((mid(take[b]), y - 0.4), (mid(take[b]), y_counter + 0.4), color="#888888", width=1, style="<|-|>")
        _cell(ax, mid(take[b]), y_counter, "white", f"{k} → {k + 1}", w=1.6, h=0.8, fontsize=9.5)
    # The last block: the barrier passes thread 0's acquire on, then every partial in index order.
    y = row[last]
    sync = (take[last][1] + 0.15, take[last][1] + 2.15)
    read = (sync[1] + 0.15, sync[1] + 4.0)
    result = (read[1] + 0.15, read[1] + 3.7)
    box(sync, y, "#777777", "__sync-\nthreads()", fontsize=9)
    box(read, y, "black", "reads partials\n" + " ".join(f"[{i}]" for i in reads))
    box(result, y, "#777777", "tree → result;\ncounter = 0")
    top = y_slots - 0.8  # the reads: every slot, gathered above the slots and brought down
    for b in order:
        ax.plot([mid(store[b])] * 2, [y_slots - 0.4, top], color="black", linewidth=1)
    ax.plot([mid(store[order[0]]), mid(read)], [top, top], color="black", linewidth=1)
    arrow((mid(read), top), (mid(read), y - 0.4), color="black", width=1)
    ax.text(mid(read) - 0.15, top + 0.1, "the last block reads\nevery slot, in index\norder", ha="right",
            va="top", fontsize=9.5)
    # The happens-before edges, as ticket_meeting gives them.
    for a, b in edges:
        if a[0] == "store":     # program order, kept by the release: the store before the ticket
            arrow((mid(store[a[1]]), row[a[1]] + 0.4), (mid(take[a[1]]), row[a[1]] + 0.4), rad=0.45)
        elif b[0] == "ticket":  # the counter: b's fetch_add reads what a's wrote
            arrow((mid(take[a[1]]) + 0.8, y_counter), (mid(take[b[1]]) - 0.8, y_counter))
        elif b[1] == reads[0]:  # the last ticket's acquire, before every read
            arrow((mid(take[a[1]]), y + 0.4), (mid(read), y + 0.4), rad=0.3)
    ax.text(mid(take[last]), y + 1.05, "acquire", ha="left", va="center", fontsize=9.5, color=hb)
    first = order[0]
    ax.text(mid(store[first]) - 0.5, row[first] + 0.95, "release", ha="left", va="center", fontsize=9.5, color=hb)
    ax.text(-0.4, y_slots, "memory:\npartials", ha="right", va="center", fontsize=10)
    ax.text(-0.4, y_counter, "counter", ha="right", va="center", fontsize=10)
    ax.set_xlim(-2.6, result[1] + 0.2)
    ax.set_ylim(y + 1.3, top - 0.3)
    ax.legend(handles=[plt.Line2D([], [], color=hb, linewidth=1.8, marker=">",
                                  label="happens before: release, the fetch_adds in turn, acquire"),
                       plt.Line2D([], [], color="#888888", linewidth=1, marker=">",
                                  label="a store, or a ticket's fetch_add(1)")],
              loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=9.5, frameon=False)
    ax.set_title(f"10_single_pass: {blocks} blocks meet through memory "
                 "(time →; a row per block, in ticket order)\n"
                 "ticket = counter.fetch_add(1, acq_rel); every block but the last returns after its ticket\n"
                 "the last ticket's acquire sees every partial stored before an earlier ticket's release\n"
                 "(the path of partials wider than 4 bytes; 4-byte ones carry a flag in one 8-byte word instead)",
                 fontsize=11, loc="left")
    _save(fig, path)

def main(argv):
    out = argv[1] if len(argv) > 1 else os.path.join(ROOT, "docs", "diagrams")
    if len(argv) > 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    for name, draw in zip(FILES, (draw_tree_01_vs_02, draw_warp_shuffle_06, draw_fixed_grid_07, draw_ticket_10,
                                  draw_batched_mapping_11, draw_equal_cost_ranges_12)):
        draw(os.path.join(out, name))
    print(f"wrote {', '.join(FILES)} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
