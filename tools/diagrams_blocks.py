"""The diagrams of one block's work: the trees of 01 and 02, 06's warp shuffle, 07's fixed grid and
10's tickets."""

import matplotlib

matplotlib.use("Agg")
from matplotlib.patches import FancyArrowPatch  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from tools.chart_style import chapter_color
from tools.diagram_rules import (BLOCK, UNROLL_07, WARP, convergent_steps, fixed_grid,
                                 lanes_that_matter, naive_steps, shuffle_contents, shuffle_steps,
                                 ticket_meeting, warp_counts)
from tools.diagram_style import EDGE, IDLE, WASTED, bare, cell, distinct_hues, legend_below, save, tint


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
    rows = len(naive_steps(threads))
    fig = plt.figure(figsize=(15, 14))
    grid = fig.add_gridspec(3, 1, height_ratios=[rows + 2.6, rows + 2.6, 7], hspace=0.25)
    for panel, (chapter, rule, steps_of) in enumerate(schemes):
        tree_panel(fig.add_subplot(grid[panel]), chapter, rule, steps_of(threads), threads, warp)
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
    issuing_warps_panel(fig.add_subplot(grid[2]), schemes)
    save(fig, path)


def tree_panel(ax, chapter, rule, steps, threads, warp):
    """One chapter's tree over a scaled-down block (steps: its [(stride, [(thread, into, from)])]):
    a row per step, a cell per thread, the warps that issue the step banded."""
    ax.set_axis_off()
    color = chapter_color(chapter, 0)
    warps, gap = threads // warp, 0.6
    xs = [t + gap * (t // warp) for t in range(threads)]
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
                cell(ax, xs[t], y, color, f"[{into}]\n+=[{src}]", w=0.96, fontsize=6.5, textcolor="white")
            elif any(u in working for u in range(t // warp * warp, (t // warp + 1) * warp)):
                cell(ax, xs[t], y, "white", w=0.96, hatch="////", edge="#999999")  # waits in a busy warp
            else:
                cell(ax, xs[t], y, IDLE, w=0.96, edge="#cccccc")  # its warp has retired
        ax.text(-1.0, y, f"stride {stride}", ha="right", va="center", fontsize=9.5)
        ax.text(xs[-1] + 1.0, y, f"{len(ops)} thread{'s' if len(ops) > 1 else ''} add; "
                f"{issuing} of {warps} warps issue" + (f" ({divergent} divergent)" if divergent else ""),
                ha="left", va="center", fontsize=9.5)
    ax.set_xlim(-3.8, xs[-1] + 9.5)
    ax.set_ylim(len(steps) - 0.4, -1.6)
    ax.set_title(f"{chapter}: {rule}", fontsize=11, loc="left", color=color, fontweight="bold")


def issuing_warps_panel(ax, schemes):
    """The real block: the warps issuing each step of both trees, and the divergent ones among them
    (dotted), counted from the same rules."""
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


def draw_warp_shuffle_06(path, lanes=WARP):
    """Teaches the warp reduction of chapter 06: five __shfl_down_sync steps (offsets 16, 8, 4, 2,
    1), each lane i taking lane i + offset's register, no shared memory and no barrier. Every lane
    runs every step; after the step of offset o only lanes 0 .. o-1 hold values that reach the
    result, and lane 0 ends with the warp's sum. A cell's number counts the lanes its value covers."""
    color = chapter_color("06_warp_shuffle", 0)
    steps, contents, matter = shuffle_steps(lanes), shuffle_contents(lanes), lanes_that_matter(lanes)
    fig, ax = plt.subplots(figsize=(16, 9))
    bare(ax)
    gap = 2.6  # rows apart, room for the arrows
    for i in range(lanes):
        ax.text(i, -0.75, str(i), ha="center", fontsize=8, color="dimgray")
        cell(ax, i, 0, color, "1", textcolor="white")
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
                cell(ax, i, y, color, str(len(held[i])), textcolor="white")
            else:
                cell(ax, i, y, WASTED, edge="#aaaaaa")
        ax.text(-1, y, f"offset {offset}", ha="right", va="center", fontsize=9)
        ax.text(lanes + 0.2, y, f"lanes 0-{offset - 1} take lanes {offset}-{2 * offset - 1}" if offset > 1
                else "lane 0 takes lane 1: the warp's sum", ha="left", va="center", fontsize=9)
    ax.set_xlim(-4, lanes + 9)
    ax.set_ylim(len(steps) * gap + 0.7, -1.3)
    legend_below(ax, [Patch(facecolor=color, edgecolor=EDGE,
                             label="value that reaches lane 0 (number: lanes it sums)"),
                       Patch(facecolor=WASTED, edgecolor="#aaaaaa",
                             label="value that never reaches lane 0 (every lane runs every step)"),
                       plt.Line2D([], [], color="black", marker=">",
                                  label="__shfl_down_sync: lane i + offset to lane i")], 3)
    ax.set_title(f"06_warp_shuffle: warp_reduce over {lanes} lanes, in registers: "
                 f"v = combine(v, __shfl_down_sync(mask, v, offset)) where lane + offset < {lanes}\n"
                 "block_reduce then: lane 0 of every warp writes its value to shared memory, and after a barrier "
                 "warp 0 runs the same steps over those values", fontsize=11, loc="left")
    save(fig, path)


def draw_fixed_grid_07(path, grid=4, block=4, unroll=2, extra_vectors=22, tail=3):
    """Teaches chapter 07's fixed grid: only as many blocks as the GPU holds at once, walking the
    input in rounds (round r: block b takes tile r * gridDim + b; in a tile thread t loads vectors
    t, t + blockDim, ...), the last partial round spread one vector per thread over all blocks,
    one partial per block, and pass 2 combining the partials in one block in a fixed order.
    Drawn scaled down: 4 blocks of 4 threads, 2 vectors per thread per tile."""
    per_row = grid * block * unroll  # one round: the input is drawn in order, a round per line
    colors = distinct_hues(grid)
    pitch = 1.9  # rows apart, room for the tiles' labels
    fig, ax = plt.subplots(figsize=(15, 8))
    bare(ax)
    lines = fixed_grid_rounds(ax, 3 * per_row + extra_vectors, grid, block, unroll, tail, colors, pitch)
    # Pass 1 ends with a partial per block; pass 2, one block, combines them.
    y = lines * pitch + 0.4
    centers = [per_row * (b + 0.5) / grid - 0.5 for b in range(grid)]
    ax.text(-0.7, y, "pass 1", ha="right", va="center", fontsize=9.5)
    for b, x in enumerate(centers):
        cell(ax, x, y, colors[b], f"block {b}: block_reduce → partials[{b}]", w=per_row / grid - 1.2,
              fontsize=8.5, textcolor="white")
    result, y2 = per_row / 2 - 0.5, y + 2.2
    ax.text(-0.7, y2, "pass 2", ha="right", va="center", fontsize=9.5)
    for x in centers:
        ax.add_patch(FancyArrowPatch((x, y + 0.42), (result, y2 - 0.42), arrowstyle="-|>", mutation_scale=9,
                                     color=EDGE, linewidth=1))
    cell(ax, result, y2, "white", "one block: thread t combines partials t, t + 1024, ...; "
          "block_reduce → result (the same order every run)", w=per_row * 0.62, fontsize=8.5)
    ax.set_xlim(-4.5, per_row + 0.5)
    ax.set_ylim(y2 + 0.6, -1.4)
    legend_below(ax, [Patch(facecolor=c, edgecolor=EDGE, label=f"block {b}") for b, c in enumerate(colors)], grid)
    ax.set_title(f"07_two_pass, pass 1 on a fixed grid, scaled down: {grid} blocks of {block} threads, tiles of "
                 f"{block} × {unroll} vectors (a cell: one 16-byte vector, and the thread that loads it)\n"
                 f"the kernel: tiles of {BLOCK} threads × {UNROLL_07} vectors (f32), as many blocks as the GPU "
                 f"holds at once; round r gives tile r·gridDim + b to block b", fontsize=10.5, loc="left")
    save(fig, path)


def fixed_grid_rounds(ax, vectors, grid, block, unroll, tail, colors, pitch):
    """Pass 1's input, a line per round: each vector a cell of its block's colour, named by the
    thread that loads it (fixed_grid), the tiles labelled; then the rest, and the tail's elements.
    Returns the number of lines drawn."""
    tile = block * unroll
    per_row = grid * tile
    rounds, owner, tail_owner = fixed_grid(vectors, grid, block, unroll, tail)
    for v, (b, t, r) in enumerate(owner):
        row, x = divmod(v, per_row)
        cell(ax, x, row * pitch, colors[b], f"t{t}", fontsize=7.5, textcolor="white")
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
        cell(ax, x0 + 0.2 + 0.3 * i, (lines - 1) * pitch, colors[b], w=0.27, h=0.55)
    if tail:
        ax.text(x0 + 0.1 + 0.3 * tail, (lines - 1) * pitch, f"  tail: {tail} elements, one per thread "
                f"(t0-t{tail - 1} of block 0)", ha="left", va="center", fontsize=8.5)
    return lines


def draw_ticket_10(path, order=(1, 3, 0, 2)):
    """Teaches chapter 10's meeting through memory: each block stores its partial, then takes a
    ticket with one acq_rel fetch_add on the counter; the block that draws the last ticket reads
    every partial. Drawn for 4 blocks arriving in `order` (ticket_meeting), a row per block in
    that order, time to the right. The happens-before edges: the release orders a block's store
    before its ticket, each fetch_add reads what the one before it wrote, and the last ticket's
    acquire orders every partial's store before the last block's reads."""
    ticket, last, reads, edges = ticket_meeting(list(order))
    hb = chapter_color("10_single_pass", 0)
    fig, ax = plt.subplots(figsize=(10, 6.6))
    ax.set_axis_off()
    at = TicketLayout(order, ticket)
    hues = distinct_hues(len(order))
    for b in order:
        ticket_row(ax, at, b, ticket[b], b == last, hues[b])
    # The last block: the barrier passes thread 0's acquire on, then every partial in index order.
    y = at.row[last]
    sync = (at.take[last][1] + 0.15, at.take[last][1] + 2.15)
    read = (sync[1] + 0.15, sync[1] + 4.0)
    result = (read[1] + 0.15, read[1] + 3.7)
    span_box(ax, sync, y, "#777777", "__sync-\nthreads()", fontsize=9)
    span_box(ax, read, y, "black", "reads partials\n" + " ".join(f"[{i}]" for i in reads))
    span_box(ax, result, y, "#777777", "tree → result;\ncounter = 0")
    top = at.y_slots - 0.8  # the reads: every slot, gathered above the slots and brought down
    for b in order:
        ax.plot([mid(at.store[b])] * 2, [at.y_slots - 0.4, top], color="black", linewidth=1)
    ax.plot([mid(at.store[order[0]]), mid(read)], [top, top], color="black", linewidth=1)
    arrow(ax, (mid(read), top), (mid(read), y - 0.4), color="black", width=1)
    ax.text(mid(read) - 0.15, top + 0.1, "the last block reads\nevery slot, in index\norder", ha="right",
            va="top", fontsize=9.5)
    happens_before(ax, at, edges, last, read, reads[0], hb)
    ax.text(-0.4, at.y_slots, "memory:\npartials", ha="right", va="center", fontsize=10)
    ax.text(-0.4, at.y_counter, "counter", ha="right", va="center", fontsize=10)
    ax.set_xlim(-2.6, result[1] + 0.2)
    ax.set_ylim(y + 1.3, top - 0.3)
    legend_below(ax, [plt.Line2D([], [], color=hb, linewidth=1.8, marker=">",
                                  label="happens before: release, the fetch_adds in turn, acquire"),
                       plt.Line2D([], [], color="#888888", linewidth=1, marker=">",
                                  label="a store, or a ticket's fetch_add(1)")], 2)
    ax.set_title(f"10_single_pass: {len(order)} blocks meet through memory "
                 "(time →; a row per block, in ticket order)\n"
                 "ticket = counter.fetch_add(1, acq_rel); every block but the last returns after its ticket\n"
                 "the last ticket's acquire sees every partial stored before an earlier ticket's release\n"
                 "(the path of partials wider than 4 bytes; 4-byte ones carry a flag in one 8-byte word instead)",
                 fontsize=11, loc="left")
    save(fig, path)


class TicketLayout:
    """Where ticket_10.png puts things: a row per block in arrival order (order, row), the
    partials' slots and the counter above the rows (y_slots, y_counter), and in time each block's
    end of pass 1 (done) and the [start, end) of its store and of its ticket (store, take), in
    ticket order."""

    def __init__(self, order, ticket):
        pitch = 1.45
        self.order = list(order)
        self.y_slots, self.y_counter = -2.9, -1.45
        self.row = {b: k * pitch for k, b in enumerate(order)}
        self.done = {b: 1.8 + 4.2 * ticket[b] for b in order}
        self.store = {b: (self.done[b], self.done[b] + 1.9) for b in order}
        self.take = {b: (self.done[b] + 2.05, self.done[b] + 4.05) for b in order}


def mid(span):
    """The middle of a time span (start, end)."""
    return (span[0] + span[1]) / 2


def span_box(ax, span, y, color, text, textcolor="white", fontsize=9.5):
    """A cell over the time span [start, end) at y."""
    cell(ax, mid(span), y, color, text, w=span[1] - span[0], h=0.8, fontsize=fontsize, textcolor=textcolor)


def arrow(ax, a, b, color, width=1.8, style="-|>", rad=0.0):
    """An arrow from a to b, bent by rad, above the cells."""
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=12, color=color, linewidth=width,
                                 shrinkA=0, shrinkB=0, zorder=4, connectionstyle=f"arc3,rad={rad}"))


def ticket_row(ax, at, b, k, is_last, hue):
    """Block b's row: pass 1, its store to its slot, its ticket k (a fetch_add on the counter)."""
    y = at.row[b]
    ax.text(-0.4, y, f"block {b}", ha="right", va="center", fontsize=10.5, color=hue, fontweight="bold")
    span_box(ax, (0, at.done[b] - 0.15), y, tint(hue, 0.7), "pass 1" if k == 0 else "pass 1: tiles → tree",
             textcolor="black")
    span_box(ax, at.store[b], y, hue, "store\npartial")
    span_box(ax, at.take[b], y, hue if not is_last else "black", f"ticket {k}" + ("\n= last" if is_last else ""))
    # its store goes to its slot; its ticket reads and writes the counter
    arrow(ax, (mid(at.store[b]), y - 0.4), (mid(at.store[b]), at.y_slots + 0.4), color="#888888", width=1)
    cell(ax, mid(at.store[b]), at.y_slots, tint(hue, 0.3), f"partials[{b}]", w=2.9, h=0.8, fontsize=9.5)
    arrow(ax, (mid(at.take[b]), y - 0.4), (mid(at.take[b]), at.y_counter + 0.4), color="#888888", width=1,
          style="<|-|>")
    cell(ax, mid(at.take[b]), at.y_counter, "white", f"{k} → {k + 1}", w=1.6, h=0.8, fontsize=9.5)


def happens_before(ax, at, edges, last, read, first_read, hb):
    """The happens-before edges, as ticket_meeting gives them, in the colour hb: the release (a
    block's store before its ticket), the counter's chain of fetch_adds, the last ticket's acquire
    before the reads (read: their time span; first_read: the first partial read)."""
    y = at.row[last]
    for a, b in edges:
        if a[0] == "store":     # program order, kept by the release: the store before the ticket
            arrow(ax, (mid(at.store[a[1]]), at.row[a[1]] + 0.4), (mid(at.take[a[1]]), at.row[a[1]] + 0.4), hb,
                  rad=0.45)
        elif b[0] == "ticket":  # the counter: b's fetch_add reads what a's wrote
            arrow(ax, (mid(at.take[a[1]]) + 0.8, at.y_counter), (mid(at.take[b[1]]) - 0.8, at.y_counter), hb)
        elif b[1] == first_read:  # the last ticket's acquire, before every read
            arrow(ax, (mid(at.take[a[1]]), y + 0.4), (mid(read), y + 0.4), hb, rad=0.3)
    ax.text(mid(at.take[last]), y + 1.05, "acquire", ha="left", va="center", fontsize=9.5, color=hb)
    first = at.order[0]
    ax.text(mid(at.store[first]) - 0.5, at.row[first] + 0.95, "release", ha="left", va="center", fontsize=9.5,
            color=hb)
