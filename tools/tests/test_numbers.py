"""Tests of the numbers job (the prose number checker): the repository's READMEs pass, wrong claims written into
copies of them are caught, and the pieces (markers, tolerances, generated regions) do what its
header says.

    python3 -m unittest tools.tests.test_numbers    (ctest: check_numbers_tests)

The checker runs once as a subprocess, as a user runs it (run()); the wrong claims call the same
entry point in this process (checked()), which gives the same exit status and output without
starting Python again. Exit codes and output are tested too.
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "results", "h200")
# The wrong claims below are those found against the H200 run of commit 19ae5de; a later run may
# make one of them true. They are checked against that run's sources, kept here (its bench.csv
# rows of chapters 06-09, profile, latency and machine description).
ISSUE_RUN = os.path.join(ROOT, "tests", "data", "h200_19ae5de")

from tools import number_sources, numbers, quantities  # noqa: E402


def run(*args):
    return subprocess.run([sys.executable, "-m", "tools", "numbers", *args], capture_output=True, text=True,
                          cwd=ROOT)


def checked(*args):
    """python3 -m tools numbers ARGS in this process: its exit status and what it printed, as run()
    returns them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = numbers.main(list(args))
    return subprocess.CompletedProcess(["numbers", *args], code, out.getvalue(), err.getvalue())


def bench(chapter, kernel, dtype, op, n, field):
    return f"<!-- bench: {chapter} {kernel} {dtype} {op} {n} {field} -->"


class Repository(unittest.TestCase):
    def test_every_readme_passes(self):
        done = run()
        self.assertEqual(done.stdout, "", "findings in the READMEs")
        self.assertEqual(done.returncode, 0, done.stderr)


class WrongClaims(unittest.TestCase):
    """Each wrong claim, appended to a copy of the README it belongs in, is a finding on its line;
    the same claim with a marker that names its source is a finding too, the value being off."""

    def findings(self, readme, claim):
        """The checker's findings on the appended claim's lines of a copy of ROOT/readme."""
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            text = f.read().rstrip("\n") + "\n\n"
        first = text.count("\n") + 1
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, os.path.basename(readme))
            with open(copy, "w", encoding="utf-8") as f:
                f.write(text + claim + "\n")
            done = checked(copy, "--results", ISSUE_RUN)
        lines = [line for line in done.stdout.splitlines()
                 if int(line.split(":")[1]) >= first]
        if lines:
            self.assertEqual(done.returncode, 1)
        return lines

    def assertCaught(self, readme, claim, why, count=1):
        lines = self.findings(readme, claim)
        self.assertEqual(len(lines), count, f"{claim!r} gave {lines}")
        for line in lines:
            self.assertIn(why, line)

    def test_bf16_dot_ahead_of_cub(self):
        self.assertCaught("08_dot_product/README.md", "16-bit inputs: bf16 dot at 1.2× CUB.", "no source")
        marker = bench("08_dot_product", "dot_two_pass", "bf16", "dot", "2^28", "ratio_to_cub")
        self.assertCaught("08_dot_product/README.md", f"16-bit inputs: bf16 dot at 1.2×{marker} CUB.",
                          "the source says 0.69")

    def test_no_dot_kernel_reaches_90_percent_at_2_26(self):
        self.assertCaught("08_dot_product/README.md", "At 2^26 no kernel in the table reaches 90 %.",
                          "no source")
        marker = "<!-- bench: 08_dot_product dot_two_pass f32 dot 2^26 pct_peak ≤ -->"
        self.assertCaught("08_dot_product/README.md", f"At 2^26 no kernel reaches 90 %{marker}.",
                          "the source says 91.2")

    def test_unroll16_registers_and_blocks(self):
        self.assertCaught("07_two_pass/README.md", "16 vectors (80 registers, 3 blocks per SM).",
                          "no source", count=2)
        registers = "<!-- profile: 07_two_pass reduce_two_pass_unroll16 registers -->"
        blocks = "<!-- profile: 07_two_pass reduce_two_pass_unroll16 blocks_per_sm -->"
        lines = self.findings("07_two_pass/README.md",
                              f"16 vectors (80 registers{registers}, 3 blocks per SM{blocks}).")
        self.assertEqual(len(lines), 2, lines)
        self.assertIn("the source says 105", lines[0] + lines[1])
        self.assertIn("the source says 2 per SM", lines[0] + lines[1])

    def test_a_computed_power(self):
        self.assertCaught("13_custom_ops/README.md", "300 factors of 1.5 make 1.5^300 ≈ 1.4×10^52.",
                          "a computed number")
        self.assertCaught("13_custom_ops/README.md",
                          "300 factors of 1.5 make 1.5^300 ≈ 1.4×10^52<!-- calc: 1.5**300 ±1% -->.",
                          "the source says 6.7")

    def test_l2_resident_defined_against_the_rule(self):
        self.assertCaught("08_dot_product/README.md",
                          "Such rows are marked L2-resident (the input is under four times the L2 size).",
                          "L2-resident means an input no larger than L2")
        self.assertEqual(self.findings("08_dot_product/README.md",
                                       "Such rows are marked L2-resident (the input is no larger than L2)."), [])

    def test_small_n_gain_against_the_table(self):
        claim = "The gain is where n is small: CUB takes 1.5× 06's time at 2^10"
        self.assertCaught("solutions/09_cub_comparison.md", claim + ".", "no source")
        marker = ("<!-- bench: 09_cub_comparison cub_sum f32 sum 2^10 time_us"
                  " / bench: 06_warp_shuffle reduce_warp_shuffle f32 sum 2^10 time_us -->")
        self.assertCaught("solutions/09_cub_comparison.md",
                          claim.replace("1.5×", "1.5×" + marker) + ".", "the source says 0.64")


class Pieces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sources = number_sources.Sources(ROOT, ISSUE_RUN)

    def check(self, text):
        return numbers.check_text(text, self.sources)

    def test_quantities_and_what_is_not_one(self):
        found = [q[2] for q in quantities.quantities(
            "4547 GB/s, 0.67–0.76× CUB, 1.2x, 91.2 %, 105 registers, 2 blocks an SM, 349 ns, "
            "≈ 993 adds; 2^28 elements, 16-byte loads, 32 lanes, 132 × 4 blocks, ≈ 2n, chapter 05 uses")]
        self.assertEqual(found, ["4547 GB/s", "0.67–0.76×", "0.67–0.76×", "1.2x", "91.2 %",
                                 "105 registers", "2 blocks an SM", "349 ns", "≈ 993"])

    def test_marker_parser(self):
        m = quantities.MARKER.match(" <!-- bench: 07_two_pass reduce_two_pass f32 sum 2^28 gbps ±1% -->")
        self.assertEqual((m["kind"], m["body"]), ("bench", "07_two_pass reduce_two_pass f32 sum 2^28 gbps ±1%"))
        self.assertIsNone(quantities.MARKER.match("<!-- results:begin -->"))
        split = numbers.split_tolerance
        self.assertEqual(split("A ±1%"), ("A", (1.0, True)))
        self.assertEqual(split("A ±0.05"), ("A", (0.05, False)))
        self.assertEqual(split("A ≥"), ("A", "≥"))
        self.assertEqual(split("A <="), ("A", "≤"))
        self.assertEqual(split("A"), ("A", None))

    def test_sources(self):
        resolve = self.sources.resolve
        self.assertAlmostEqual(resolve("bench", "07_two_pass reduce_two_pass f32 sum 2^28 gbps")[0], 4547.3, 1)
        ratio = resolve("bench", "07_two_pass reduce_two_pass f32 sum 2^28 gbps / 09_cub_comparison cub_sum f32 sum 2^28 gbps")
        self.assertEqual(ratio[1], "×")
        self.assertAlmostEqual(ratio[0], 1.022, 3)
        self.assertEqual(resolve("csv", "latency.csv pattern=l2 ns_per_load"), (146.1, "ns"))
        self.assertEqual(resolve("md", "profile.md | reduce_two_pass_unroll16 | registers"), (105, "registers"))
        self.assertEqual(resolve("profile", "07_two_pass reduce_two_pass blocks_per_sm"), (4, "per SM"))
        self.assertEqual(resolve("md", "profile.md | reduce_two_pass | registers")[0], 56)  # three tables agree
        self.assertEqual(resolve("const", "h200_sm_count")[0], 132)
        for kind, body in (("bench", "07_two_pass reduce_two_pass f32 sum 2^29 gbps"),  # no such row
                           ("bench", "07_two_pass reduce_two_pass f32 sum gbps"),        # a word short
                           ("md", "profile.md | reduce_two_pass | no such column"),
                           ("profile", "07_two_pass no_such_kernel registers"),
                           ("const", "no_such_constant")):
            with self.assertRaises(number_sources.MarkerError, msg=body):
                resolve(kind, body)

    def test_calc_is_arithmetic_only(self):
        calc = number_sources.calc
        self.assertAlmostEqual(calc("1.5**300", {}) / 1e52, 6.7, 1)
        self.assertAlmostEqual(calc("log(4) + sqrt(16) - -1", {}), 6.386, 3)
        self.assertEqual(calc("2 * peak", {"peak": 10}), 20)
        for bad in ("__import__('os')", "open('x')", "(1).real", "[1][0]", "2 ** 100000", "1 / 0", "x"):
            with self.assertRaises(number_sources.MarkerError, msg=bad):
                calc(bad, {})

    def test_tolerances(self):
        compare = numbers.compare
        self.assertIsNone(compare(4547, "GB/s", 0, 1, 4547.3, "GB/s", None))        # rounding
        self.assertIsNotNone(compare(4546, "GB/s", 0, 1, 4547.3, "GB/s", None))
        self.assertIsNone(compare(4.5, "TB/s", 1, 1, 4547.3, "GB/s", None))         # units convert
        self.assertIsNotNone(compare(4.6, "TB/s", 1, 1, 4663.7, "GB/s", None))          # 4.7 TB/s
        self.assertIsNone(compare(4500, "GB/s", 0, 1, 4547.3, "GB/s", (1.5, True)))   # ±1.5%
        self.assertIsNotNone(compare(4500, "GB/s", 0, 1, 4547.3, "GB/s", (1, True)))
        self.assertIsNone(compare(4500, "GB/s", 0, 1, 4547.3, "GB/s", (50, False)))   # ±50
        self.assertIsNone(compare(90, "%", 0, 1, 91.2, "%", "≥"))
        self.assertIsNotNone(compare(90, "%", 0, 1, 91.2, "%", "≤"))
        self.assertIsNone(compare(102, "%", 0, 1, 1.022, "×", None))                 # a ratio as a %
        self.assertIn("source is in", compare(3, "registers", 0, 1, 4547.3, "GB/s", None))

    def test_generated_regions_code_and_comments_are_skipped(self):
        text = ("Prose.\n\n<!-- results:begin -->\n12 GB/s and 3 % here are generated.\n<!-- results:end -->\n\n"
                "<!-- excerpt:begin a.cuh x -->\n```cuda\nint x = 5 ms;\n```\n<!-- excerpt:end -->\n\n"
                "```\n7 µs in a fence\n```\n\n`9 ns` in code, and a comment <!-- 10 GB/s -->.\n")
        findings, counts = self.check(text)
        self.assertEqual(findings, [])
        self.assertEqual(counts["generated"], 2)
        findings, _ = self.check(text + "And 11 GB/s typed.\n")
        self.assertEqual([(line, typed) for line, typed, _ in findings], [(18, "11 GB/s")])
        findings, _ = self.check("<!-- results:begin -->\n1 GB/s\n")
        self.assertIn("has no", findings[0][2])

    def test_constants_and_exceptions(self):
        findings, counts = self.check("The peak, 4814 GB/s or 4.8 TB/s, and 255 registers a thread.\n")
        self.assertEqual((findings, counts["constant"]), ([], 3))
        findings, _ = self.check("Not the peak: 4900 GB/s.\n")
        self.assertEqual(len(findings), 1)
        findings, counts = self.check("A bound of 100 %<!-- not-measured: a bound -->, and 50 %<!-- not-measured: -->.\n")
        self.assertEqual((len(findings), counts["not measured"]), (1, 1))
        findings, _ = self.check("A bare 4547<!-- bench: 07_two_pass reduce_two_pass f32 sum 2^28 gbps --> is checked,"
                                 " and 4000<!-- bench: 07_two_pass reduce_two_pass f32 sum 2^28 gbps --> is wrong.\n")
        self.assertEqual([typed for _, typed, _ in findings], ["4000"])

    def test_machine_constants_are_checked(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "results"))
            shutil.copy(os.path.join(RESULTS, "machine.txt"), tmp)
            with open(os.path.join(tmp, quantities.CONSTANTS), "w", encoding="utf-8") as f:
                json.dump({"constants": {"peak": {"value": 4000, "unit": "GB/s", "machine": "dram_gbps"}}}, f)
            self.assertIn("machine.txt says 4814.3", number_sources.Sources(tmp, tmp).errors[0])


if __name__ == "__main__":
    unittest.main()
