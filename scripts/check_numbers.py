#!/usr/bin/env python3
"""Checks every measured number typed in the READMEs' prose against the file it comes from.

    scripts/check_numbers.py                      every README below, against results/h200
    scripts/check_numbers.py FILE...              those files only
    --root DIR        the repository (default: this one)
    --results DIR     the published results the markers read (default: ROOT/results/h200)
    --exclude FILE    leave FILE out (repeatable)
    --summary         also print how many quantities were found, and how each passed

Scanned: README.md, NN_name/README.md, solutions/*.md, RESULTS/README.md and
RESULTS/experiments/README.md. Fenced code blocks and inline code are skipped.

A quantity is a number typed with a unit of measurement: GB/s, TB/s, MB/s; ns, µs (us), ms, s;
% (percent); a ratio typed against its number (0.67×, 1.2x); registers; blocks, warps, threads
or bytes per SM (also "an SM"); FLOP/byte, FLOP/s; or any number after ≈ or ~ (a computed value).
A range "0.67–0.76×" is two quantities; a bare number with a marker after it is one. Sizes and
counts (2^28 elements, 16-byte loads, 32 lanes) are not measurements and are not matched. A
quantity passes when it is

  1. inside a generated region, <!-- NAME:begin ... --> ... <!-- NAME:end --> (update_readme.py,
     readme_excerpts.py, lessons.py write them);
  2. followed by a marker, an HTML comment (invisible once rendered) that names its source; a
     range takes one marker per number, in order:
       <!-- bench: CHAPTER KERNEL DTYPE OP N FIELD [key=value ...] -->
            a bench.csv row (read by results/plot.py, under today's chapter names); N as 2^28 or
            a number; FIELD a column (gbps, pct_peak, time_us, latency_us, ratio_to_cub, ...);
            key=value narrows by another column or parameter (layout=rows, length=32; "key=" for
            a row without it), file=PATH reads another
            bench.csv-shaped file of RESULTS (an experiment's)
       <!-- csv: FILE key=value ... COLUMN -->         a row of another CSV of RESULTS
       <!-- md: FILE | CELL | ... | COLUMN -->         a row of a Markdown table of RESULTS that
                                                       has every CELL; COLUMN its header
       <!-- profile: CHAPTER KERNEL FIELD [op=.. dtype=.. n=..] -->
            one profiled call (RESULTS/profile, results/lessons.py): a field of lessons.summarize
            (registers, occupancy_pct, atomics, kernels, time_us, ...), blocks_per_sm (the
            occupancy limit of its longest kernel) or a raw Nsight Compute metric of that kernel
       <!-- text: FILE REGEX -->                       the first group of REGEX in a text file
       <!-- const: NAME -->                            an entry of results/constants.json
       <!-- calc: EXPR -->                             arithmetic: numbers, + - * / ** ( ), log,
                                                       log2, sqrt, exp and the constants' names
     A source marker but text: may be a ratio of two sources, "A / B" (B of the same kind may
     drop the "kind:"): a typed × compares with A/B, a typed % with 100·A/B. The typed number must equal
     the source rounded to the digits typed; a marker may end in a tolerance that widens that:
     ±1% (of the source), ±0.05 (in the typed unit), or a bound: ≥ (the source is at least the
     typed number: "over 90 %") or ≤ (at most: "under 25 %"). Units convert within a family
     (TB/s and GB/s; ms, µs and ns); a source with no unit of its own compares as typed.
  3. a constant of the hardware or of nature, or someone else's published figure, listed once in
     results/constants.json: a quantity of the same unit and value (to the digits typed) passes
     without a marker (but for % and ×, which need <!-- const: NAME -->). An entry with
     "machine": KEY is checked against RESULTS/machine.txt ("scale" divides the latter).
  4. marked <!-- not-measured: WHY --> (a true exception: a bound, a rule, not a measurement).
A number after ≈ or ~ passes only with a marker. And a rule list (RULES) checks phrases that
define a term against the project's rule for it (L2-resident: no larger than L2).

Any other quantity, a marker that cannot be read or resolved, and a value off its source by more
than the tolerance are findings: one line each, FILE:LINE: the text: why; exit status 1.
Missing results files: one line, exit status 2.
"""

import argparse
import ast
import csv
import glob
import json
import math
import operator
import os
import re
import sys

REPOSITORY = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
sys.path.insert(0, os.path.join(REPOSITORY, "results"))
import lessons  # noqa: E402
import plot  # noqa: E402

CONSTANTS = os.path.join("results", "constants.json")

# ---- Finding quantities ---------------------------------------------------------------------

NUM = r"[−-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
UNITS = [  # (pattern, unit); a unit's family and scale are in FAMILY
    (r"GB/s|TB/s|MB/s|FLOP/byte|[GT]FLOP/s", None), (r"µs|us|ns|ms|s", None),
    (r"microseconds?", "µs"), (r"nanoseconds?", "ns"), (r"milliseconds?", "ms"), (r"seconds?", "s"),
    (r"%|percent", "%"), (r"registers?", "registers"),
    (r"(?:blocks?|warps?|threads?|bytes|KiB|KB) (?:in flight )?(?:per|an|a|each) SM", "per SM"),
]
UNIT = "|".join(f"(?:{p})" for p, _ in UNITS)
QUANTITY = re.compile(
    rf"(?<![\w.^/,])(?P<approx>[≈~]\s?)?(?P<lo>{NUM})(?:\s?[–-]\s?(?P<hi>{NUM}))?"
    rf"(?P<sci>\s?[×x]\s?10\^(?P<exp>[−-]?\d+))?"
    rf"(?:(?P<ratio>[×x])(?!\w)|\s?(?P<unit>{UNIT})(?![\w/]))?")
FAMILY = {"GB/s": ("bandwidth", 1), "TB/s": ("bandwidth", 1e3), "MB/s": ("bandwidth", 1e-3),
          "ns": ("time", 1e-3), "µs": ("time", 1), "us": ("time", 1), "ms": ("time", 1e3),
          "s": ("time", 1e6), "GFLOP/s": ("flops", 1), "TFLOP/s": ("flops", 1e3)}
GENERATED = re.compile(r"<!-- (?P<name>[\w.:-]+?):begin(?:\s[^>]*)? -->")
SOURCE_KINDS = ("bench", "csv", "md", "profile", "text", "const")
MARKER = re.compile(rf"\s*<!--\s*(?P<kind>{'|'.join(SOURCE_KINDS)}|calc|not-measured):\s*(?P<body>.*?)\s*-->", re.S)

# Phrases that define a term: (the term, a wrong definition, the rule). Checked per paragraph.
RULES = [
    (re.compile(r"L2-resident"),
     re.compile(r"(?:under|below|less than|smaller than|within|up to|at most)\s+(?:\w+\s+){0,2}"
                r"times\s+(?:the\s+)?L2|(?:under|below|less than|smaller than)\s+(?:the\s+)?L2\b"),
     "L2-resident means an input no larger than L2 (CONTRIBUTING.md, Measuring)"),
]


def unit_of(text):
    for pattern, unit in UNITS:
        if re.fullmatch(pattern, text):
            return unit or ("µs" if text == "us" else text)
    return text


def number(text):
    return float(text.replace(",", "").replace("−", "-"))


def decimals(text):
    return len(text.split(".")[1]) if "." in text else 0


def mask(text, pattern, flags=0):
    """text with every match of pattern blanked, newlines kept, so offsets stay."""
    return re.sub(pattern, lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=flags)


def prose_of(text):
    """text with code, inline code and comments blanked; and the generated regions' spans."""
    spans, at = [], 0
    while (m := GENERATED.search(text, at)):
        end = text.find(f"<!-- {m['name']}:end -->", m.end())
        if end < 0:
            raise ValueError(f"'{m.group(0)}' has no '<!-- {m['name']}:end -->'")
        spans.append((m.start(), end))
        at = end
    prose = mask(text, r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.S | re.M)
    prose = mask(prose, r"<!--.*?-->", re.S)
    return mask(prose, r"`[^`\n]+`"), spans


def quantities(text):
    """[(offset, end, typed text, value, unit, decimals typed, approx, scale)]: a range gives two."""
    prose, _ = prose_of(text)
    out = []
    for m in QUANTITY.finditer(prose):
        unit = "×" if m["ratio"] else unit_of(m["unit"]) if m["unit"] else None
        formula = re.match(r"[\w^]", prose[m.end():m.end() + 1])  # "≈ 2n", "≈ 2^29"
        if unit is None and (formula or not (m["approx"] or MARKER.match(text, m.end()))):
            continue  # a bare number is a quantity only where a marker follows it
        scale = 10.0 ** int(m["exp"].replace("−", "-")) if m["exp"] else 1.0
        for part in filter(None, (m["lo"], m["hi"])):
            out.append((m.start(), m.end(), m.group(0).strip(), number(part) * scale, unit or "",
                        decimals(part), bool(m["approx"]), scale))
    return out


# ---- Sources ---------------------------------------------------------------------------------

class MarkerError(Exception):
    pass


def pow2(text):
    return 2 ** int(text[2:]) if text.startswith("2^") else int(number(text))


class Sources:
    """The files the markers read, each loaded once."""

    def __init__(self, root, results):
        self.root, self.results, self.cache = root, results, {}
        with open(os.path.join(root, CONSTANTS), encoding="utf-8") as f:
            self.constants = json.load(f)["constants"]
        machine = dict(line.split(":", 1) for line in self.read("machine.txt").splitlines() if ":" in line)
        self.errors = []
        for name, c in self.constants.items():
            if "machine" in c:
                measured = number(machine[c["machine"]].strip()) / c.get("scale", 1)
                if abs(measured - c["value"]) > 1e-9 * abs(measured):
                    self.errors.append(f"{CONSTANTS}: {name} is {c['value']}, machine.txt says {measured:g}")

    def path(self, name):
        return os.path.join(self.results, name)

    def read(self, name):
        if name not in self.cache:
            with open(self.path(name), encoding="utf-8") as f:
                self.cache[name] = f.read()
        return self.cache[name]

    def bench(self, args):
        filters = dict(a.split("=", 1) for a in args if "=" in a)
        words = [a for a in args if "=" not in a]
        if len(words) != 6:
            raise MarkerError("bench: wants CHAPTER KERNEL DTYPE OP N FIELD [key=value ...]")
        chapter, kernel, dtype, op, n, field = words
        name = filters.pop("file", "bench.csv")
        if ("bench", name) not in self.cache:
            self.cache["bench", name] = plot.read_csv(self.path(name))
        rows = [r for r in self.cache["bench", name]
                if (r["chapter"], r["kernel"], r["dtype"], r["op"], r["n"]) == (chapter, kernel, dtype, op, pow2(n))
                and all(same(r.get(k, r["params"].get(k)), v) for k, v in filters.items())]
        if len(rows) != 1:
            raise MarkerError(f"{len(rows)} rows of {name} match")
        if rows[0].get(field) is None:
            raise MarkerError(f"{name} has no value in column '{field}'")
        return float(rows[0][field]), field_unit(field)

    def csv(self, args):
        if len(args) < 2:
            raise MarkerError("csv: wants FILE key=value ... COLUMN")
        lines = [line for line in self.read(args[0]).splitlines() if not line.startswith("#")]
        filters = dict(a.split("=", 1) for a in args[1:-1])
        rows = [r for r in csv.DictReader(lines) if all(r.get(k) == v for k, v in filters.items())]
        if len(rows) != 1 or args[-1] not in rows[0]:
            raise MarkerError(f"{len(rows)} rows of {args[0]} match, or no column '{args[-1]}'")
        return number(rows[0][args[-1]]), field_unit(args[-1])

    def md(self, body):
        parts = [p.strip() for p in body.split("|")]
        if len(parts) < 3:
            raise MarkerError("md: wants FILE | CELL | ... | COLUMN")
        name, cells, column = parts[0], set(parts[1:-1]), parts[-1]
        found, header = set(), []
        for line in self.read(name).splitlines():
            if not line.startswith("|"):
                header = []
                continue
            row = [c.replace("`", "").strip() for c in line.strip().strip("|").split("|")]
            if not header:
                header = row
            elif column in header and cells <= set(row) and len(row) == len(header):
                found.add(row[header.index(column)])
        values = {re.match(r"\s*([−\d,.]+)", v)[1] for v in found if re.match(r"\s*[−\d,.]+", v)}
        if len(values) != 1:
            raise MarkerError(f"{len(found)} rows of {name} match, giving {sorted(found) or 'nothing'}")
        return number(values.pop()), field_unit(column)

    def profile(self, args):
        want = dict(a.split("=", 1) for a in args if "=" in a)
        words = [a for a in args if "=" not in a]
        if len(words) != 3:
            raise MarkerError("profile: wants CHAPTER KERNEL FIELD [op=.. dtype=.. n=..]")
        if "profile" not in self.cache:
            self.cache["profile"] = read_profile(self.path("profile"))

        def fits(label):  # chapter/kernel/op/dtype/n
            chapter, kernel, op, dtype, n = label.split("/")
            return ([chapter, kernel] == words[:2] and want.get("op", op) == op
                    and want.get("dtype", dtype) == dtype and same(int(n), want.get("n", n)))
        labels = [label for label in self.cache["profile"] if fits(label)]
        if len(labels) != 1:
            raise MarkerError(f"{len(labels)} profiled calls match")
        summary, main = self.cache["profile"][labels[0]]
        value = summary.get(words[2], main.get(words[2]))
        if not isinstance(value, (int, float)):
            raise MarkerError(f"the profile has no number '{words[2]}'")
        return float(value), field_unit(words[2])

    def text(self, body):
        name, _, pattern = body.partition(" ")
        m = re.search(pattern, self.read(name), re.M)
        if not m or not m.groups():
            raise MarkerError(f"'{pattern}' matches nothing (or has no group) in {name}")
        return number(m[1]), ""

    def const(self, body):
        if body not in self.constants:
            raise MarkerError(f"no constant '{body}' in {CONSTANTS}")
        return self.constants[body]["value"], self.constants[body].get("unit", "")

    def resolve(self, kind, body):
        """A source marker's body -> (value, unit); "A / B" -> (A / B, '×')."""
        parts = [p.strip() for p in re.split(r"\s/\s", body)] if kind != "text" else [body]
        values = []
        for part in parts:
            m = re.match(r"([\w-]+):\s*(.*)", part, re.S)
            if m and m[1] in SOURCE_KINDS:
                kind, part = m[1], m[2]
            if kind in ("md", "text", "const"):
                values.append(getattr(self, kind)(part))
            else:
                values.append(getattr(self, kind)(part.split()))
        if len(values) == 1:
            return values[0]
        if len(values) != 2 or values[1][0] == 0:
            raise MarkerError("a ratio is A / B, B not zero")
        return values[0][0] / values[1][0], "×"


def same(value, typed):
    """A row's value against a marker's key=value: equal as text, or as numbers (2^k allowed)."""
    if value is None:
        return typed == ""
    try:
        return str(value) == typed or float(value) == pow2(typed)
    except (TypeError, ValueError):
        return False


FIELD_UNITS = [(r"gbps|GB/s", "GB/s"), (r"_us$|µs", "µs"), (r"(^|_)ns(_|$)|\(ns\)", "ns"), (r"pct|%", "%"),
               (r"^ratio|^×", "×"), (r"^registers$", "registers"), (r"^blocks_per_sm$", "per SM")]


def field_unit(field):
    """The unit of a source's column or field, from its name ('' when it has none)."""
    return next((unit for pattern, unit in FIELD_UNITS if re.search(pattern, field)), "")


def read_profile(folder):
    """{case label: (lessons.summarize's figures, every raw metric of the call's longest kernel
    plus blocks_per_sm)}, from Nsight Compute's raw page and cases.txt."""
    with open(os.path.join(folder, "kernels.csv"), encoding="utf-8") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("==")))
    header, units = rows[0], rows[1]
    kernels = []
    for cells in rows[2:]:
        k = {column: lessons.to_number(cell, unit) for column, unit, cell in zip(header, units, cells)}
        kernels.append({**k, "name": cells[header.index("Kernel Name")]})
    out = {}
    for label, ks in lessons.split_cases(kernels, lessons.read_cases(os.path.join(folder, "cases.txt"))).items():
        main = max(ks, key=lambda k: k.get("gpu__time_duration.sum") or 0)
        limits = [main.get(f"launch__occupancy_limit_{x}") for x in ("registers", "shared_mem", "warps", "blocks")]
        main["blocks_per_sm"] = min(limits) if None not in limits else None
        out[label] = (lessons.summarize(label, ks), main)
    return out


# ---- Arithmetic for calc: -------------------------------------------------------------------

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}
FUNCTIONS = {"log": math.log, "log2": math.log2, "sqrt": math.sqrt, "exp": math.exp}


def calc(expression, names):
    """Evaluates + - * / ** ( ), numbers, FUNCTIONS and names, nothing else (no eval)."""
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > 4096:
                raise MarkerError("an exponent above 4096")
            return OPERATORS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](walk(node.operand))
        if isinstance(node, ast.Name) and node.id in names:
            return float(names[node.id])
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                and len(node.args) == 1 and not node.keywords):
            return FUNCTIONS[node.func.id](walk(node.args[0]))
        raise MarkerError(f"calc: '{ast.unparse(node)}' is not plain arithmetic")
    try:
        return walk(ast.parse(expression, mode="eval"))
    except (SyntaxError, ZeroDivisionError, OverflowError, ValueError) as e:
        raise MarkerError(f"calc: {e}") from None


# ---- Judging ---------------------------------------------------------------------------------

TOLERANCE = re.compile(r"\s+(±\s?(?P<amount>[\d.]+)\s?(?P<pct>%)?|(?P<bound>≥|>=|≤|<=))$")


def split_tolerance(body):
    m = TOLERANCE.search(body)
    if not m:
        return body, None
    tolerance = ({"≥": "≥", ">=": "≥", "≤": "≤", "<=": "≤"}[m["bound"]] if m["bound"]
                 else (float(m["amount"]), bool(m["pct"])))
    return body[:m.start()], tolerance


def compare(typed, unit, digits, scale, source, source_unit, tolerance):
    """None when the typed number agrees with the source; else why not."""
    slack = 0.5 * 10.0 ** -digits * scale   # the typed digits' rounding, in the typed unit
    if "" in (unit, source_unit) or unit == source_unit:  # a bare number compares as typed
        factor = 1
    elif unit == "%" and source_unit == "×":
        factor, source = 1, 100 * source
    elif unit in FAMILY and source_unit in FAMILY and FAMILY[unit][0] == FAMILY[source_unit][0]:
        factor = FAMILY[unit][1] / FAMILY[source_unit][1]
    else:
        return f"typed in {unit or 'no unit'}, its source is in {source_unit}"
    value = typed * factor
    if tolerance == "≥":
        ok = source >= value
    elif tolerance == "≤":
        ok = source <= value
    else:
        allowed = slack * factor
        if tolerance:
            amount, relative = tolerance
            allowed = max(allowed, amount * abs(source) / 100 if relative else amount * factor)
        ok = abs(value - source) <= allowed * (1 + 1e-9)
    return None if ok else f"the source says {source / factor:.6g}{' ' + unit if unit else ''}"


def check_text(text, sources):
    """[(line, typed text, why)] for one file; and the counts of how quantities passed."""
    findings, counts = [], {"generated": 0, "marked": 0, "constant": 0, "not measured": 0, "failed": 0}
    try:
        prose, spans = prose_of(text)
    except ValueError as e:
        return [(1, "", str(e))], counts
    line_of = lambda at: text.count("\n", 0, at) + 1
    names = {k: c["value"] for k, c in sources.constants.items()}
    pending = {}  # a range's end offset -> markers still unused
    for start, end, typed, value, unit, digits, approx, scale in quantities(text):
        if any(a <= start < b for a, b in spans):
            counts["generated"] += 1
            continue
        if end not in pending:
            pending[end], at = [], end
            while (m := MARKER.match(text, at)):
                pending[end].append(m)
                at = m.end()
        marker = pending[end].pop(0) if pending[end] else None
        where = (line_of(start), typed)
        if marker is None:
            if not approx and unit not in ("%", "×", "") and any(
                    compare(value, unit, digits, scale, c["value"], c.get("unit", ""), None) is None
                    for c in sources.constants.values() if c.get("unit", "") not in ("", "%", "×")):
                counts["constant"] += 1
                continue
            findings.append((*where, "a computed number (≈, ~) with no marker" if approx else
                             "no source: add a marker, or reword"))
            counts["failed"] += 1
            continue
        kind, body = marker["kind"], marker["body"]
        try:
            if kind == "not-measured":
                if not body:
                    raise MarkerError("not-measured: says why")
                counts["not measured"] += 1
                continue
            body, tolerance = split_tolerance(body)
            if kind == "calc":
                source, source_unit = calc(body, names), ""
            else:
                source, source_unit = sources.resolve(kind, body)
            why = compare(value, unit, digits, scale, source, source_unit, tolerance)
        except (MarkerError, OSError, plot.InputError, re.error, ValueError, KeyError) as e:
            why = f"marker <!-- {kind}: {marker['body']} -->: {e}"
        if why:
            findings.append((*where, why))
            counts["failed"] += 1
        else:
            counts["constant" if kind == "const" else "marked"] += 1
    for paragraph in re.finditer(r"(?:[^\n]+\n?)+", prose):
        for term, wrong, rule in RULES:
            m = wrong.search(paragraph.group(0))
            if term.search(paragraph.group(0)) and m and not any(a <= paragraph.start() + m.start() < b for a, b in spans):
                findings.append((line_of(paragraph.start() + m.start()), m.group(0), rule))
    return sorted(findings), counts


def default_files(root, results):
    rel = os.path.relpath(results, root)
    names = (["README.md"] + sorted(glob.glob("[0-9][0-9]_*/README.md", root_dir=root))
             + sorted(glob.glob("solutions/*.md", root_dir=root))
             + [os.path.join(rel, "README.md"), os.path.join(rel, "experiments", "README.md")])
    return [os.path.join(root, n) for n in names if os.path.exists(os.path.join(root, n))]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--root", default=REPOSITORY)
    parser.add_argument("--results")
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    results = os.path.abspath(args.results or os.path.join(root, "results", "h200"))
    try:
        sources = Sources(root, results)
    except (OSError, ValueError, KeyError) as e:
        print(f"check_numbers.py: {e}", file=sys.stderr)
        return 2
    excluded = {os.path.abspath(os.path.join(root, e)) for e in args.exclude}
    files = [os.path.abspath(f) for f in args.files] or default_files(root, results)
    total, bad = {}, list(sources.errors)
    for path in files:
        if path in excluded:
            continue
        with open(path, encoding="utf-8") as f:
            findings, counts = check_text(f.read(), sources)
        shown = os.path.relpath(path, root) if path.startswith(root + os.sep) else path
        bad += [f"{shown}:{line}: '{typed}': {why}" for line, typed, why in findings]
        for key, count in counts.items():
            total[key] = total.get(key, 0) + count
        total["findings"] = total.get("findings", 0) + len(findings)
    if bad:
        print("\n".join(bad))
    if args.summary:
        found = sum(v for k, v in total.items() if k != "findings")
        print(f"{found} quantities: " + ", ".join(f"{v} {k}" for k, v in total.items() if k != "findings")
              + f"; {total.get('findings', 0)} findings", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
