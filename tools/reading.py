"""How long each chapter takes to read: its README's prose at 200 words a minute plus its lesson's
code at 15 lines a minute. Tables, code blocks, generated regions and HTML comments are left out
of the prose (a reader skims them or meets them in the code); the lesson is the files the README
names on its line `The lesson: [file](file), ...`, counted without blank lines.

    python3 -m tools reading [--root DIR] [--limit MINUTES]

prints one Markdown row per chapter and exits 1 if any chapter reads longer than the limit
(default 45 minutes) or names no lesson."""

import argparse
import glob
import os
import re
import sys

WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 15
LIMIT_MINUTES = 45

GENERATED = re.compile(r"<!-- (\w+):begin\b.*?<!-- \1:end -->", re.DOTALL)
FENCED = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.DOTALL | re.MULTILINE)
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
LESSON_LINE = re.compile(r"^\**The lesson:\**(.*)$", re.MULTILINE)
LESSON_FILE = re.compile(r"\]\(([^)#\s]+)\)")


def prose(markdown):
    """The README's text a reader reads as prose: no code, tables, generated regions or comments."""
    text = GENERATED.sub("", markdown)
    text = FENCED.sub("", text)
    text = COMMENT.sub("", text)
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("|")]
    return LINK.sub(r"\1", "\n".join(lines))


def words(text):
    return len(re.findall(r"[^\s#*>`|_-]\S*", text))


def lesson_files(markdown):
    """The files the README names as the lesson, in its order; empty where it names none."""
    found = LESSON_LINE.search(markdown)
    return LESSON_FILE.findall(found.group(1)) if found else []


def code_lines(path):
    with open(path, encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


def reading(chapter_dir):
    """(prose words, lesson files, code lines, minutes) of one chapter folder."""
    with open(os.path.join(chapter_dir, "README.md"), encoding="utf-8") as f:
        markdown = f.read()
    files = lesson_files(markdown)
    lines = sum(code_lines(os.path.join(chapter_dir, name)) for name in files)
    count = words(prose(markdown))
    return count, files, lines, count / WORDS_PER_MINUTE + lines / CODE_LINES_PER_MINUTE


def chapter_dirs(root):
    return sorted(d for d in glob.glob(os.path.join(root, "[0-9][0-9]_*")) if os.path.isdir(d))


def main(argv):
    parser = argparse.ArgumentParser(prog="python3 -m tools reading", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".")
    parser.add_argument("--limit", type=float, default=LIMIT_MINUTES)
    args = parser.parse_args(argv)
    chapters = chapter_dirs(args.root)
    if not chapters:
        print(f"python3 -m tools reading: no chapter folders (NN_name/) in {args.root}", file=sys.stderr)
        return 2
    rows, failed = [], []
    for chapter in chapters:
        name = os.path.basename(chapter)
        try:
            count, files, lines, minutes = reading(chapter)
        except OSError as e:
            print(f"python3 -m tools reading: {name}: {e.strerror}: {e.filename}", file=sys.stderr)
            return 2
        rows.append(f"| {name} | {count} | {', '.join(files) or 'none named'} | {lines} | {minutes:.1f} |")
        if not files or minutes > args.limit:
            failed.append(name)
    print("| chapter | prose words | lesson files | code lines | minutes |")
    print("|---|---:|---|---:|---:|")
    print("\n".join(rows))
    if failed:
        print(f"\nlonger than {args.limit:g} minutes, or no lesson named: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0
