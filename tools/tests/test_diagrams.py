"""Tests of the diagrams job: the index rules it draws from, and the files it writes.

    python3 -m unittest tools.tests.test_diagrams    (ctest: plot_tests)
"""

import os
import random
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PUBLISHED_DIAGRAMS = os.path.join(ROOT, "docs", "diagrams")

from tools import diagram_rules as rules, diagrams, diagrams_rows  # noqa: E402
from tools.tests.fixtures import start_user_runs, user_run  # noqa: E402


def read_all(folder):
    """{file name: bytes} of the diagrams' files found in folder."""
    files = {}
    for name in diagrams.FILES:
        if os.path.exists(os.path.join(folder, name)):
            with open(os.path.join(folder, name), "rb") as f:
                files[name] = f.read()
    return files


def setUpModule():
    start_user_runs("diagrams")  # drawn while the rules are tested


class TestTreeRules(unittest.TestCase):
    """Chapters 01 and 02 over the real block: 256 threads, a tile of 512 elements, warps of 32."""

    def test_both_trees_sum_the_tile(self):
        values = [(7 * i) % 13 for i in range(2 * rules.BLOCK)]
        for steps in (rules.naive_steps(rules.BLOCK), rules.convergent_steps(rules.BLOCK)):
            self.assertEqual(rules.reduce_with(steps, values), sum(values))

    def test_strides_and_working_threads(self):
        naive, convergent = rules.naive_steps(rules.BLOCK), rules.convergent_steps(rules.BLOCK)
        self.assertEqual([s for s, _ in naive], [2 ** k for k in range(9)])
        self.assertEqual([s for s, _ in convergent], [2 ** k for k in range(8, -1, -1)])
        for steps in (naive, convergent):  # the same additions, 256 + 128 + ... + 1 = 511
            self.assertEqual([len(ops) for _, ops in steps], [256 >> k for k in range(9)])
        self.assertEqual([t for t, _, _ in naive[2][1]][:3], [0, 4, 8])  # t % 4 == 0
        self.assertEqual(naive[2][1][1], (4, 8, 12))                      # [8] += [12]
        self.assertEqual(convergent[1][1][5], (5, 5, 133))                # t < 128: [5] += [133]

    def test_warps_issuing_per_step(self):
        # The counts the chapters' headers and READMEs give: 01 keeps all 8 warps issuing until
        # stride 64 and has 47 divergent warp-steps; 02 retires whole warps and has 5.
        naive = rules.warp_counts(rules.naive_steps(256), 256, 32)
        convergent = rules.warp_counts(rules.convergent_steps(256), 256, 32)
        self.assertEqual([w for w, _ in naive], [8, 8, 8, 8, 8, 8, 4, 2, 1])
        self.assertEqual([w for w, _ in convergent], [8, 4, 2, 1, 1, 1, 1, 1, 1])
        self.assertEqual(sum(d for _, d in naive), 47)
        self.assertEqual(sum(d for _, d in convergent), 5)
        # The scaled picture: 16 threads in warps of 4.
        self.assertEqual([w for w, _ in rules.warp_counts(rules.naive_steps(16), 16, 4)], [4, 4, 4, 2, 1])
        self.assertEqual([w for w, _ in rules.warp_counts(rules.convergent_steps(16), 16, 4)], [4, 2, 1, 1, 1])


class TestShuffleRules(unittest.TestCase):
    def test_offsets_and_lane_zero(self):
        steps = rules.shuffle_steps(32)
        self.assertEqual([o for o, _ in steps], [16, 8, 4, 2, 1])
        self.assertEqual(steps[0][1][:2], [(0, 16), (1, 17)])  # lane i takes lane i + 16
        self.assertEqual(len(steps[1][1]), 24)                 # lanes 0-23 combine at offset 8
        self.assertEqual(rules.shuffle_contents(32)[-1][0], set(range(32)))
        self.assertEqual(rules.lanes_that_matter(32), [set(range(o)) for o in (16, 8, 4, 2, 1)])


class TestFixedGridRules(unittest.TestCase):
    def test_every_vector_once_in_round_order(self):
        grid, block, unroll = 4, 4, 2
        tile = block * unroll
        for extra in (0, 5, 22, grid * tile - 1):
            vectors = 3 * grid * tile + extra
            rounds, owner, tail = rules.fixed_grid(vectors, grid, block, unroll, tail=3)
            self.assertEqual(rounds, 3)
            self.assertNotIn(None, owner)
            for v, (b, t, r) in enumerate(owner[:rounds * grid * tile]):
                self.assertEqual((r * grid + b, t), (v // tile, v % block))  # tile r·grid + b, thread t
            self.assertTrue(all(r is None for _, _, r in owner[rounds * grid * tile:]))
            self.assertEqual(tail, [(0, 0), (0, 1), (0, 2)])
        # The rest: one vector per thread of the grid, then around again.
        _, owner, _ = rules.fixed_grid(3 * grid * tile + 22, grid, block, unroll)
        rest = owner[3 * grid * tile:]
        self.assertEqual([(b, t) for b, t, _ in rest[:grid * block]],
                         [divmod(i, block) for i in range(grid * block)])
        self.assertEqual([(b, t) for b, t, _ in rest[grid * block:]], [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)])


class TestTicketRules(unittest.TestCase):
    """Chapter 10: the blocks' tickets in arrival order; the last reads every partial."""

    def test_last_ticket_reads_every_partial(self):
        for order in ([0, 1, 2, 3], [1, 3, 0, 2], [3, 2, 1, 0], [0]):
            ticket, last, reads, edges = rules.ticket_meeting(order)
            self.assertEqual([ticket[b] for b in order], list(range(len(order))))  # 0, 1, 2, ... as they come
            self.assertEqual(last, order[-1])
            self.assertEqual(ticket[last], len(order) - 1)                     # ticket == gridDim.x - 1
            self.assertEqual(reads, sorted(order))                              # all, in index order
            after = rules.happens_before(edges)
            for b in order:  # every block's store happens before the last block's read of it
                self.assertIn(("read", b), after[("store", b)])
                self.assertIn(("ticket", last), after[("store", b)])
            # A ticket orders only what came before it: no later ticket happens before an earlier one.
            for k, b in enumerate(order):
                for earlier in order[:k]:
                    self.assertNotIn(("ticket", earlier), after.get(("ticket", b), set()))

    def test_edges_of_one_order(self):
        _, last, _, edges = rules.ticket_meeting([1, 3, 0, 2])
        self.assertEqual(last, 2)
        self.assertIn((("ticket", 1), ("ticket", 3)), edges)  # ticket 1 reads ticket 0's write
        self.assertIn((("ticket", 0), ("ticket", 2)), edges)
        self.assertNotIn((("ticket", 3), ("ticket", 1)), edges)
        self.assertEqual(len(edges), 4 + 3 + 4)  # release per block, the counter's chain, the reads
        with self.assertRaises(ValueError):
            rules.ticket_meeting([0, 0, 1])


class TestBatchedRules(unittest.TestCase):
    """Chapter 11's plan() for f32 rows: V = ceil(L / 4) vectors; the thresholds V = 2 and 512."""

    MANY = 1 << 20  # rows enough that the blocks need not split them

    def plan(self, cols, rows=MANY):
        return rules.row_plan(cols, rows, resident=1024)

    def test_thresholds(self):
        self.assertEqual(self.plan(8)[:2], ("thread_per_row", 1))      # V = 2
        self.assertEqual(self.plan(5)[:2], ("thread_per_row", 1))      # V = 2 (a partial vector)
        self.assertEqual(self.plan(9)[:2], ("group_per_row", 2))       # V = 3: max(2, pow2(2))
        self.assertEqual(self.plan(12)[:2], ("group_per_row", 2))      # V = 3
        self.assertEqual(self.plan(2048)[:2], ("group_per_row", 32))   # V = 512: pow2(256), at most 32
        self.assertEqual(self.plan(2049)[0], "block_per_row")          # V = 513
        self.assertEqual(self.plan(2052)[0], "block_per_row")          # V = 513

    def test_lanes(self):
        # lanes = max(2, pow2_at_least(ceil(V / 2))), at most 32: about two vectors a lane.
        for V, lanes in ((4, 2), (5, 4), (8, 4), (9, 8), (32, 16), (33, 32), (64, 32), (256, 32)):
            self.assertEqual(self.plan(4 * V), ("group_per_row", lanes, 1, 0), V)
        self.assertEqual(rules.pow2_at_least(1000), 32)
        self.assertEqual(rules.pow2_at_least(1), 1)

    def test_blocks_per_row(self):
        # 64 rows of 2^20 floats on a GPU of 1024 resident blocks: 16 blocks a row, chunks of 2^16.
        self.assertEqual(rules.row_plan(1 << 20, 64, 1024), ("blocks_per_row", 256, 16, 1 << 16))
        # One row of 2^16: no more blocks than full trips (256 x 4 vectors = 4096 floats): 16.
        self.assertEqual(rules.row_plan(1 << 16, 1, 1024), ("blocks_per_row", 256, 16, 4096))
        # Rows that fill the GPU: one block a row, however long.
        self.assertEqual(rules.row_plan(1 << 16, 1024, 1024), ("block_per_row", 256, 1, 1 << 16))
        # A row just past the groups, alone: too short for two full trips, so one block.
        self.assertEqual(rules.row_plan(2052, 1, 1024)[:3], ("block_per_row", 256, 1))

    def test_readers(self):
        lanes = [lane for _, lane, _ in rules.row_readers(32, self.plan(32))]
        self.assertEqual(lanes, [0, 1, 2, 3, 0, 1, 2, 3])  # lane l: vectors l, l + 4
        warp = rules.row_readers(1024, self.plan(1024))
        self.assertEqual([lane for _, lane, _ in warp[:33]], list(range(32)) + [0])
        block = rules.row_readers(1 << 16, self.plan(1 << 16))
        self.assertEqual(block[256], (0, 0, 0))    # thread 0's second vector of trip 0
        self.assertEqual(block[1024], (0, 0, 1))   # trip 1 begins after 256 x 4 vectors
        self.assertEqual(block[-1], (0, 255, 15))
        split = rules.row_readers(1 << 20, rules.row_plan(1 << 20, 64, 1024))
        self.assertEqual(split[(1 << 14) - 1][0], 0)  # block k of the row: vectors [k, k + 1) x 2^14
        self.assertEqual(split[1 << 14][:2], (1, 0))
        self.assertEqual(split[-1][0], 15)


class TestSegmentRanges(unittest.TestCase):
    """Chapter 12's warp ranges: equal cost (an element 1, an end end_cost) against equal elements."""

    def check_cover(self, ranges, n):
        self.assertEqual(ranges[0][0], 0)
        self.assertEqual(ranges[-1][1], n)
        for (lo, hi), (next_lo, _) in zip(ranges, ranges[1:]):
            self.assertLessEqual(lo, hi)
            self.assertEqual(hi, next_lo)  # contiguous: each begins where the one before ends

    def test_by_hand(self):
        # Segments of 3, 0 and 1 elements, an end costs 2: the merged list is
        # e e e E E | E E | e E E (cost 10). Two warps, step 5: the cut at cost 5 falls on
        # segment 1's end, which lies after element 3.
        self.assertEqual(rules.cost_ranges([3, 0, 1], 2, 2), [(0, 3), (3, 4)])
        self.assertEqual(rules.element_ranges([3, 0, 1], 2), [(0, 2), (2, 4)])
        # Three warps, step 4: the cut at 4 falls on segment 0's end (after element 3), the cut at 8
        # on segment 2's (after element 4): the last range holds an end, no element.
        self.assertEqual(rules.cost_ranges([3, 0, 1], 2, 3), [(0, 3), (3, 4), (4, 4)])
        # An end costs nothing: equal elements again.
        self.assertEqual(rules.cost_ranges([5, 1, 6], 0, 4), rules.element_ranges([5, 1, 6], 4))

    def test_contiguous_cover_and_bounded(self):
        rng = random.Random(12)
        for _ in range(300):
            lengths = [rng.choice([0, 0, 1, 2, 3, 5, 40]) for _ in range(rng.randint(1, 30))]
            n = sum(lengths)
            if n == 0:
                continue
            for cost in (0, 1, 4, 32):
                for warps in (1, 2, 3, 8, 13):
                    ranges = rules.cost_ranges(lengths, cost, warps)
                    self.assertEqual(len(ranges), warps)
                    self.check_cover(ranges, n)
                    step = -(-(n + cost * len(lengths)) // warps)
                    for lo, hi in ranges:  # at most a step of elements, plus an end's cost
                        self.assertLessEqual(hi - lo, step + cost)
                    self.check_cover(rules.element_ranges(lengths, warps), n)

    def test_the_pictures_heavy_tail(self):
        lengths, warps = diagrams_rows.HEAVY_TAIL_12, 8
        big = max(range(len(lengths)), key=lambda s: lengths[s])
        hi = sum(lengths[:big + 1])
        lo = hi - lengths[big]
        self.assertEqual(2 * lengths[big], sum(lengths))  # one segment holds half the elements

        def on_big(ranges):
            return sum(1 for a, b in ranges if a < hi and b > lo)

        equal_cost = rules.cost_ranges(lengths, 4, warps)
        equal_elements = rules.element_ranges(lengths, warps)
        self.assertLess(on_big(equal_cost), on_big(equal_elements))  # the big segment: fewer warps
        self.assertEqual((on_big(equal_elements), on_big(equal_cost)), (5, 3))
        worst = lambda ranges: max(rules.range_cost(lengths, a, b, 4) for a, b in ranges)  # noqa: E731
        self.assertLess(worst(equal_cost), worst(equal_elements))  # and the work evened out
        # range_cost counts every element and every end once over the ranges
        self.assertEqual(sum(rules.range_cost(lengths, a, b, 4) for a, b in equal_cost),
                         sum(lengths) + 4 * len(lengths))


class TestScript(unittest.TestCase):
    def test_writes_every_picture_the_same_every_time(self):
        # Two runs of `python3 -m tools diagrams` as a user runs it write the same files: this one's
        # (started with the test run, in the background: tools/tests/fixtures.py), and an earlier
        # one's: the published docs/diagrams where they are what this run wrote (the same code and
        # matplotlib drew them), else a second run's.
        written = [self.written("diagrams")]
        if written[0] != read_all(PUBLISHED_DIAGRAMS):
            written.append(self.written("diagrams_again"))
        self.assertEqual(len(written[-1]), len(diagrams.FILES))
        self.assertEqual(written[0], written[-1])  # deterministic

    def written(self, run):
        """{file name: bytes} of a run of the job, each a PNG of some size."""
        folder, done = user_run(run)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn(f"wrote {', '.join(diagrams.FILES)} in {folder}", done.stdout)
        files = read_all(folder)
        for name in diagrams.FILES:
            self.assertEqual(files[name][:8], b"\x89PNG\r\n\x1a\n", name)
            self.assertGreater(len(files[name]), 10000, name)
        return files

    @unittest.skipUnless(os.path.isdir(PUBLISHED_DIAGRAMS), "no docs/diagrams")
    def test_published_pictures_exist(self):
        for name in diagrams.FILES:
            self.assertGreater(os.path.getsize(os.path.join(PUBLISHED_DIAGRAMS, name)), 10000, name)


if __name__ == "__main__":
    unittest.main()
