"""The index rules the diagrams draw: which thread reads what, step by step, written out from the
chapters' sources (reduce.cuh, and 12's warp_cost_bound) as small functions the tests check."""

# The real sizes, from the chapters' reduce.cuh.
BLOCK = 256      # ch01/ch02/ch07 kBlock: threads per block
WARP = 32        # ch06 kWarp
UNROLL_07 = 8    # ch07: vectors per thread per tile for an f32 sum (Tuning::kMaxLoads)
VEC_F32 = 4      # Vec16<float>::kCount: floats in a 16-byte vector
UNROLL_11 = 4    # ch11 kUnroll: 16-byte loads a lane has in flight in a row's body
SEGMENT_COST = 32  # ch12 SegmentTuning::kSegmentCost: what a segment's end costs a warp


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
