"""Every chapter reads in at most 45 minutes (tools/reading.py: README prose at 200 words a minute,
the lesson's code at 15 lines a minute), and every row of the top README's chapter map names one
idea: one clause, no `;` outside parentheses, at most 30 words outside them.

The chapters that still carry several ideas are listed in SPLIT_PENDING with what they measure
today; each may only shrink, and leaves the list when it meets the rules.

    python3 -m unittest tools.tests.test_reading    (ctest: lesson_shape_tests)
"""
import os
import re
import tempfile
import unittest

from tools import reading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_MAP_WORDS = 30
# chapter: (minutes, clauses in its map row) measured before its split into one idea a chapter.
SPLIT_PENDING = {
    "07_two_pass": (55.7, 2),
    "11_batched": (74.7, 3),
    "12_segmented": (83.1, 1),
    "13_custom_ops": (74.5, 3),
}


def map_rows(readme):
    """(chapter, idea) for each row of the chapter map: the table under '## The chapters'."""
    section = readme.split("## The chapters", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \[(\d\d_\w+)\]\([^)]*\) \| (.*) \|$", section, re.MULTILINE)


def clauses_and_words(idea):
    """Clauses (split at `;`) and words of a map row's idea, parenthesised asides left out."""
    bare = idea
    while re.search(r"\([^()]*\)", bare):
        bare = re.sub(r"\([^()]*\)", "", bare)
    return len(bare.split(";")), len(bare.split())


class TestCounting(unittest.TestCase):
    def test_prose_leaves_out_code_tables_generated_regions_and_comments(self):
        markdown = "\n".join([
            "# Title words", "", "One two [three](x.md) four.", "", "```cpp", "int a = 1;", "```", "",
            "| a | b |", "|---|---|", "| 1 | 2 |", "", "<!-- results:begin -->", "lots of words here",
            "<!-- results:end -->", "five <!-- bench: 07 x --> six",
        ])
        self.assertEqual(reading.words(reading.prose(markdown)), 8)  # Title words One two three four. five six

    def test_the_lesson_line_names_the_files(self):
        self.assertEqual(reading.lesson_files("x\nThe lesson: [a.cuh](a.cuh), [b.cuh](b.cuh).\n"), ["a.cuh", "b.cuh"])
        self.assertEqual(reading.lesson_files("no such line"), [])

    def test_minutes(self):
        with tempfile.TemporaryDirectory() as folder:
            chapter = os.path.join(folder, "01_x")
            os.mkdir(chapter)
            with open(os.path.join(chapter, "README.md"), "w") as f:
                f.write("The lesson: [k.cuh](k.cuh).\n\n" + "word " * 397 + "\n")
            with open(os.path.join(chapter, "k.cuh"), "w") as f:
                f.write("line\n\n" * 30)  # 30 lines of code, blank lines not counted
            count, files, lines, minutes = reading.reading(chapter)
            self.assertEqual((count, files, lines), (400, ["k.cuh"], 30))
            self.assertAlmostEqual(minutes, 4.0)

    def test_bad_roots_exit_2(self):
        with tempfile.TemporaryDirectory() as folder:
            self.assertEqual(reading.main(["--root", folder]), 2)  # no chapter folders
            chapter = os.path.join(folder, "01_x")
            os.mkdir(chapter)
            with open(os.path.join(chapter, "README.md"), "w") as f:
                f.write("The lesson: [missing.cuh](missing.cuh).\n")
            self.assertEqual(reading.main(["--root", folder]), 2)  # a lesson file that is not there

    def test_map_row_clauses(self):
        self.assertEqual(clauses_and_words("one idea (with; an aside)"), (1, 2))
        self.assertEqual(clauses_and_words("one; two"), (2, 2))


class TestChapters(unittest.TestCase):
    def test_every_chapter_reads_in_45_minutes(self):
        for chapter in reading.chapter_dirs(ROOT):
            name = os.path.basename(chapter)
            count, files, lines, minutes = reading.reading(chapter)
            self.assertTrue(files, f"{name}: its README names no lesson ('The lesson: [file](file)')")
            for file in files:
                self.assertTrue(os.path.isfile(os.path.join(chapter, file)), f"{name}: {file}")
            limit = SPLIT_PENDING.get(name, (reading.LIMIT_MINUTES,))[0]
            self.assertLessEqual(round(minutes, 1), limit, f"{name}: {count} words, {lines} lines of {files}")

    def test_pending_chapters_exist(self):
        names = {os.path.basename(c) for c in reading.chapter_dirs(ROOT)}
        self.assertLessEqual(set(SPLIT_PENDING), names)

    def test_every_map_row_names_one_idea(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            rows = map_rows(f.read())
        self.assertEqual([name for name, _ in rows], [os.path.basename(c) for c in reading.chapter_dirs(ROOT)])
        for name, idea in rows:
            clauses, words = clauses_and_words(idea)
            self.assertLessEqual(clauses, SPLIT_PENDING.get(name, (0, 1))[1], f"{name}: {idea}")
            if name not in SPLIT_PENDING:
                self.assertLessEqual(words, MAX_MAP_WORDS, f"{name}: {idea}")


if __name__ == "__main__":
    unittest.main()
