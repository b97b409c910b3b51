"""Tests of the job compare: this run's GB/s divided by another run's.

    python3 -m unittest tools.tests.test_compare        (ctest: plot_tests)
"""

import csv
import os
import unittest

from tools import schema
from tools.tests.fixtures import Results, job, read, run


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


if __name__ == "__main__":
    unittest.main()
