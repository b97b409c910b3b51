"""Fills the code excerpts of the READMEs from the sources, so that the lines a README shows are
the lines that compile.

In a source file, an excerpt is the lines between two marker comments (the markers themselves are
left out, and the common indentation is removed, preprocessor lines aside):

    // [excerpt: tree]
    for (unsigned stride = kBlock; stride >= 1; stride /= 2) { ... }
    // [end: tree]

In a README, a block between these two lines is regenerated:

    <!-- excerpt:begin 02_convergent/reduce.cuh tree -->            the excerpt, as a cuda block
    <!-- excerpt:end -->

    <!-- excerpt:begin diff 01_naive/reduce.cuh:tree 02_convergent/reduce.cuh:tree -->
    <!-- excerpt:end -->                                             the change between two excerpts,
                                                                     as a diff block

Paths are relative to the repository's root.

    python3 -m tools excerpts           rewrites every README.md (the top one, NN_name/, solutions/, experiments/NN_name/)
    python3 -m tools excerpts --check   changes nothing; exits 1 naming each README whose excerpts
                                        are not what the sources hold (a ctest entry runs this)
    --root DIR                          another tree than this repository (the tests use one)

A marker without its partner, a file or excerpt that does not exist, or an excerpt named twice in
one file is reported in one line with exit status 2.
"""

import difflib
import glob
import os
import re
import sys


REPOSITORY = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
SOURCE_BEGIN = re.compile(r"^\s*// \[excerpt: ([\w-]+)\]\s*$")
SOURCE_END = re.compile(r"^\s*// \[end: ([\w-]+)\]\s*$")
BLOCK = re.compile(r"(<!-- excerpt:begin (?P<spec>[^>]*?) -->\n)(?P<body>.*?)(<!-- excerpt:end -->)", re.DOTALL)


class ExcerptError(Exception):
    pass


def dedent(lines):
    """The lines less their common indentation; preprocessor lines (#pragma, at column 0) do not
    count towards it."""
    indents = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip() and not line.startswith("#")]
    cut = min(indents, default=0)
    return "\n".join(line if line.startswith("#") else line[cut:] for line in lines).strip("\n")


def excerpts_of(root, path, cache):
    """{name: text} of one source file's excerpts."""
    if path in cache:
        return cache[path]
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        raise ExcerptError(f"no source file {path}")
    with open(full, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, open_name, start = {}, None, 0
    for number, line in enumerate(lines, 1):
        begin, end = SOURCE_BEGIN.match(line), SOURCE_END.match(line)
        if begin:
            if open_name:
                raise ExcerptError(f"{path}:{number}: excerpt '{begin[1]}' begins inside '{open_name}'")
            if begin[1] in found:
                raise ExcerptError(f"{path}:{number}: excerpt '{begin[1]}' is named twice")
            open_name, start = begin[1], number
        elif end:
            if end[1] != open_name:
                raise ExcerptError(f"{path}:{number}: '[end: {end[1]}]' without its '[excerpt: {end[1]}]'")
            found[open_name] = dedent(lines[start:number - 1])
            open_name = None
    if open_name:
        raise ExcerptError(f"{path}:{start}: excerpt '{open_name}' has no '[end: {open_name}]'")
    cache[path] = found
    return found


def excerpt(root, reference, cache):
    """The text of 'path name' or 'path:name'."""
    path, _, name = reference.replace(":", " ", 1).partition(" ")
    found = excerpts_of(root, path, cache)
    if name not in found:
        raise ExcerptError(f"{path} has no excerpt '{name}'")
    return found[name]


def block_for(root, spec, cache):
    """The Markdown block a README's marker asks for."""
    words = spec.split()
    if len(words) == 3 and words[0] == "diff":
        old, new = excerpt(root, words[1], cache), excerpt(root, words[2], cache)
        diff = difflib.unified_diff(old.split("\n"), new.split("\n"), words[1].split(":")[0],
                                    words[2].split(":")[0], n=max(len(old), len(new)), lineterm="")
        lines = [line for line in diff if not line.startswith(("---", "+++", "@@"))]
        return "```diff\n" + "\n".join(lines) + "\n```\n"
    if len(words) == 2:
        return "```cuda\n" + excerpt(root, " ".join(words), cache) + "\n```\n"
    raise ExcerptError(f"cannot read the excerpt marker '{spec}' (want 'PATH NAME' or 'diff PATH:NAME PATH:NAME')")


def regenerate(root, text, path, cache):
    if text.count("<!-- excerpt:begin") != text.count("<!-- excerpt:end -->"):
        raise ExcerptError(f"{path}: every '<!-- excerpt:begin ... -->' needs one '<!-- excerpt:end -->'")
    return BLOCK.sub(lambda m: m.group(1) + block_for(root, m.group("spec"), cache) + m.group(4), text)


def readmes(root):
    return sorted(glob.glob(os.path.join(root, "README.md")) + glob.glob(os.path.join(root, "[0-9][0-9]_*", "README.md"))
                  + glob.glob(os.path.join(root, "solutions", "*.md"))
                  + glob.glob(os.path.join(root, "experiments", "[0-9][0-9]_*", "README.md")))


def main(argv):
    """argv: the job's arguments."""
    args = list(argv)
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    root = REPOSITORY
    if "--root" in args:
        at = args.index("--root")
        if at + 1 >= len(args):
            print("usage: python3 -m tools excerpts [--check] [--root DIR]", file=sys.stderr)
            return 2
        root = args[at + 1]
        del args[at:at + 2]
    if args not in ([], ["--check"]):
        print("usage: python3 -m tools excerpts [--check] [--root DIR]", file=sys.stderr)
        return 2
    check = args == ["--check"]
    stale, written, blocks, cache = [], [], 0, {}
    try:
        for readme in readmes(root):
            with open(readme, encoding="utf-8") as f:
                text = f.read()
            blocks += len(BLOCK.findall(text))
            updated = regenerate(root, text, os.path.relpath(readme, root), cache)
            if updated == text:
                continue
            if check:
                stale.append(os.path.relpath(readme, root))
            else:
                with open(readme, "w", encoding="utf-8") as f:
                    f.write(updated)
                written.append(os.path.relpath(readme, root))
    except ExcerptError as e:
        print(f"excerpts: error: {e}", file=sys.stderr)
        return 2
    if stale:
        print("excerpts: excerpts differ from the sources in " + ", ".join(stale) +
              " (run python3 -m tools excerpts)", file=sys.stderr)
        return 1
    for readme in written:
        print(f"updated the excerpts of {readme}")
    print(f"excerpts: {blocks} excerpts {'checked' if check else 'in place'}")
    return 0
