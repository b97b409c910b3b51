"""Tests of scripts/diagrams.py: the index rules it draws from, and the files it writes.

    python3 results/test_diagrams.py    (ctest: python3 -m unittest discover -s results)
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(ROOT, "scripts", "diagrams.py")

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import diagrams  # noqa: E402


class TestTreeRules(unittest.TestCase):
    """Chapters 01 and 02 over the real block: 256 threads, a tile of 512 elements, warps of 32."""

    def test_both_trees_sum_the_tile(self):
        values = [(7 * i) % 13 for i in range(2 * diagrams.BLOCK)]
        for steps in (diagrams.naive_steps(diagrams.BLOCK), diagrams.convergent_steps(diagrams.BLOCK)):
            self.assertEqual(diagrams.reduce_with(steps, values), sum(values))

    def test_strides_and_working_threads(self):
        naive, convergent = diagrams.naive_steps(diagrams.BLOCK), diagrams.convergent_steps(diagrams.BLOCK)
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
        naive = diagrams.warp_counts(diagrams.naive_steps(256), 256, 32)
        convergent = diagrams.warp_counts(diagrams.convergent_steps(256), 256, 32)
        self.assertEqual([w for w, _ in naive], [8, 8, 8, 8, 8, 8, 4, 2, 1])
        self.assertEqual([w for w, _ in convergent], [8, 4, 2, 1, 1, 1, 1, 1, 1])
        self.assertEqual(sum(d for _, d in naive), 47)
        self.assertEqual(sum(d for _, d in convergent), 5)
        # The scaled picture: 16 threads in warps of 4.
        self.assertEqual([w for w, _ in diagrams.warp_counts(diagrams.naive_steps(16), 16, 4)], [4, 4, 4, 2, 1])
        self.assertEqual([w for w, _ in diagrams.warp_counts(diagrams.convergent_steps(16), 16, 4)], [4, 2, 1, 1, 1])


class TestShuffleRules(unittest.TestCase):
    def test_offsets_and_lane_zero(self):
        steps = diagrams.shuffle_steps(32)
        self.assertEqual([o for o, _ in steps], [16, 8, 4, 2, 1])
        self.assertEqual(steps[0][1][:2], [(0, 16), (1, 17)])  # lane i takes lane i + 16
        self.assertEqual(len(steps[1][1]), 24)                 # lanes 0-23 combine at offset 8
        self.assertEqual(diagrams.shuffle_contents(32)[-1][0], set(range(32)))
        self.assertEqual(diagrams.lanes_that_matter(32), [set(range(o)) for o in (16, 8, 4, 2, 1)])


class TestFixedGridRules(unittest.TestCase):
    def test_every_vector_once_in_round_order(self):
        grid, block, unroll = 4, 4, 2
        tile = block * unroll
        for extra in (0, 5, 22, grid * tile - 1):
            vectors = 3 * grid * tile + extra
            rounds, owner, tail = diagrams.fixed_grid(vectors, grid, block, unroll, tail=3)
            self.assertEqual(rounds, 3)
            self.assertNotIn(None, owner)
            for v, (b, t, r) in enumerate(owner[:rounds * grid * tile]):
                self.assertEqual((r * grid + b, t), (v // tile, v % block))  # tile r·grid + b, thread t
            self.assertTrue(all(r is None for _, _, r in owner[rounds * grid * tile:]))
            self.assertEqual(tail, [(0, 0), (0, 1), (0, 2)])
        # The rest: one vector per thread of the grid, then around again.
        _, owner, _ = diagrams.fixed_grid(3 * grid * tile + 22, grid, block, unroll)
        rest = owner[3 * grid * tile:]
        self.assertEqual([(b, t) for b, t, _ in rest[:grid * block]],
                         [divmod(i, block) for i in range(grid * block)])
        self.assertEqual([(b, t) for b, t, _ in rest[grid * block:]], [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)])


class TestScript(unittest.TestCase):
    def test_writes_the_three_pictures_the_same_every_time(self):
        out = tempfile.mkdtemp(prefix="diagrams_test_")
        self.addCleanup(shutil.rmtree, out)
        written = []
        for folder in ("a", "b"):
            done = subprocess.run([sys.executable, SCRIPT, os.path.join(out, folder)], capture_output=True,
                                  text=True, cwd=ROOT)
            self.assertEqual(done.returncode, 0, done.stderr)
            written.append({})
            for name in diagrams.FILES:
                with open(os.path.join(out, folder, name), "rb") as f:
                    written[-1][name] = f.read()
                self.assertEqual(written[-1][name][:8], b"\x89PNG\r\n\x1a\n", name)
                self.assertGreater(len(written[-1][name]), 10000, name)
        self.assertEqual(written[0], written[1])  # deterministic

    @unittest.skipUnless(os.path.isdir(os.path.join(ROOT, "docs", "diagrams")), "no docs/diagrams")
    def test_published_pictures_exist(self):
        for name in diagrams.FILES:
            self.assertGreater(os.path.getsize(os.path.join(ROOT, "docs", "diagrams", name)), 10000, name)


if __name__ == "__main__":
    unittest.main()
