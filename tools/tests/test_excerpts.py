"""Tests of the excerpts job: the README code excerpts cut from the sources."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args):
    return subprocess.run([sys.executable, "-m", "tools", "excerpts", *args], capture_output=True, text=True,
                          cwd=ROOT)


class TestExcerpts(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="excerpts_")
        self.addCleanup(shutil.rmtree, self.root)
        for chapter, body in (("01_a", "  for (int s = 1; s < n; s *= 2) {\n    x[i] += x[i + s];\n  }"),
                              ("02_b", "  for (int s = n / 2; s > 0; s /= 2) {\n    x[i] += x[i + s];\n  }")):
            os.makedirs(os.path.join(self.root, chapter))
            self.write(f"{chapter}/reduce.cuh", f"__global__ void k() {{\n  // [excerpt: tree]\n{body}\n  // [end: tree]\n}}\n")
        self.write("02_b/README.md", "# b\n\n<!-- excerpt:begin 02_b/reduce.cuh tree -->\nstale\n<!-- excerpt:end -->\n\n"
                   "<!-- excerpt:begin diff 01_a/reduce.cuh:tree 02_b/reduce.cuh:tree -->\n<!-- excerpt:end -->\nend\n")

    def write(self, path, text):
        with open(os.path.join(self.root, path), "w", encoding="utf-8") as f:
            f.write(text)

    def read(self, path):
        with open(os.path.join(self.root, path), encoding="utf-8") as f:
            return f.read()

    def test_fills_the_excerpt_and_the_diff_then_checks_clean(self):
        self.assertEqual(run("--check", "--root", self.root).returncode, 1)  # "stale" is not the source
        done = run("--root", self.root)
        self.assertEqual(done.returncode, 0, done.stderr)
        text = self.read("02_b/README.md")
        self.assertIn("```cuda\nfor (int s = n / 2; s > 0; s /= 2) {\n  x[i] += x[i + s];\n}\n```\n", text)
        self.assertIn("```diff\n-for (int s = 1; s < n; s *= 2) {\n+for (int s = n / 2; s > 0; s /= 2) {\n"
                      "   x[i] += x[i + s];\n }\n```\n", text)
        self.assertNotIn("// [excerpt", text)
        self.assertTrue(text.endswith("end\n"))
        self.assertEqual(run("--check", "--root", self.root).returncode, 0)

    def test_a_changed_source_makes_the_check_fail(self):
        self.assertEqual(run("--root", self.root).returncode, 0)
        self.write("02_b/reduce.cuh", self.read("02_b/reduce.cuh").replace("s /= 2", "s >>= 1"))
        done = run("--check", "--root", self.root)
        self.assertEqual(done.returncode, 1)
        self.assertIn("02_b/README.md", done.stderr)

    def test_broken_markers_are_refused(self):
        self.write("02_b/reduce.cuh", "  // [excerpt: tree]\n  x = 1;\n")
        self.assertEqual(run("--root", self.root).returncode, 2)
        self.write("02_b/reduce.cuh", "  // [excerpt: other]\n  x = 1;\n  // [end: other]\n")
        done = run("--root", self.root)
        self.assertEqual(done.returncode, 2)
        self.assertIn("no excerpt 'tree'", done.stderr)
        self.write("02_b/README.md", "<!-- excerpt:begin 02_b/reduce.cuh other -->\n")
        self.assertEqual(run("--root", self.root).returncode, 2)

    def test_the_repository_excerpts_match_their_sources(self):
        done = run("--check")
        self.assertEqual(done.returncode, 0, done.stderr)


if __name__ == "__main__":
    unittest.main()
