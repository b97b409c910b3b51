"""Every chapter's lesson (NN_name/reduce.cuh) stays a lesson a reader finishes in one sitting:
at most 400 lines and 3 kernels, no experiment hooks in its kernels, and at most 250 lines new
against the previous chapter's lesson (the lines `git diff --numstat` counts as added: what a
reader reads anew), except where a chapter starts a new family and its README says so.

    python3 -m unittest tools.tests.test_lesson_shape    (ctest: lesson_shape_tests)
"""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_LINES, MAX_KERNELS, MAX_NEW_LINES = 400, 3, 250
# Chapters whose lesson does not grow out of the previous one's file; each README says so.
NEW_FAMILIES = {"11_batched": "starts a new family"}
# What an experiment leaves in a kernel: timeline stamps, clock reads, tuning switches.
HOOKS = re.compile(r"\b(timeline|stamp|clock64|globaltimer|kExperiment|kTrial)\w*", re.IGNORECASE)


def chapters():
    return sorted(d for d in glob.glob(os.path.join(ROOT, "[0-9][0-9]_*")) if os.path.isdir(d))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def lesson(chapter):
    return os.path.join(chapter, "reduce.cuh")


def lines_added(old, new):
    """The lines git counts as added from file old to file new."""
    done = subprocess.run(["git", "diff", "--no-index", "--numstat", old, new], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr)
    return int(done.stdout.split()[0]) if done.stdout.strip() else 0


class TestLessonShape(unittest.TestCase):
    def test_every_chapter_has_a_lesson(self):
        self.assertGreaterEqual(len(chapters()), 13)
        for chapter in chapters():
            self.assertTrue(os.path.isfile(lesson(chapter)), chapter)

    def test_lines_and_kernels(self):
        for chapter in chapters():
            text = read(lesson(chapter))
            name = os.path.basename(chapter)
            self.assertLessEqual(len(text.splitlines()), MAX_LINES, name)
            self.assertLessEqual(len(re.findall(r"__global__", text)), MAX_KERNELS, name)
            self.assertEqual(HOOKS.findall(text), [], name)

    @unittest.skipUnless(shutil.which("git"), "git is not installed: the diffs cannot be counted")
    def test_new_lines_against_the_previous_lesson(self):
        found = chapters()
        for before, chapter in zip(found, found[1:]):
            name = os.path.basename(chapter)
            added = lines_added(lesson(before), lesson(chapter))
            if name in NEW_FAMILIES:
                self.assertIn(NEW_FAMILIES[name], read(os.path.join(chapter, "README.md")), name)
                continue
            self.assertLessEqual(added, MAX_NEW_LINES, f"{name}: {added} lines added to {os.path.basename(before)}'s lesson")

    @unittest.skipUnless(shutil.which("git"), "git is not installed: the diffs cannot be counted")
    def test_the_count_is_of_added_lines(self):
        with tempfile.TemporaryDirectory() as folder:
            a, b = os.path.join(folder, "a"), os.path.join(folder, "b")
            with open(a, "w") as f:
                f.write("one\ntwo\nthree\n")
            with open(b, "w") as f:
                f.write("one\n2\nthree\nfour\n")
            self.assertEqual(lines_added(a, b), 2)


if __name__ == "__main__":
    unittest.main()
