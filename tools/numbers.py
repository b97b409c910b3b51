"""Checks every measured number typed in the READMEs' prose against the file it comes from.

    python3 -m tools numbers                      every README below, against results/h200
    python3 -m tools numbers FILE...              those files only
    --root DIR        the repository (default: this one)
    --results DIR     the published results the markers read (default: ROOT/results/h200)
    --exclude FILE    leave FILE out (repeatable)
    --summary         also print how many quantities were found, and how each passed

Scanned: README.md, NN_name/README.md, solutions/*.md, experiments/NN_name/README.md,
RESULTS/README.md and RESULTS/experiments/README.md. Fenced code blocks and inline code are skipped.

A quantity is a number typed with a unit of measurement: GB/s, TB/s, MB/s; ns, µs (us), ms, s;
% (percent); a ratio typed against its number (0.67×, 1.2x); registers; blocks, warps, threads
or bytes per SM (also "an SM"); FLOP/byte, FLOP/s; or any number after ≈ or ~ (a computed value).
A range "0.67–0.76×" is two quantities; a bare number with a marker after it is one. Sizes and
counts (2^28 elements, 16-byte loads, 32 lanes) are not measurements and are not matched. A
quantity passes when it is

  1. inside a generated region, <!-- NAME:begin ... --> ... <!-- NAME:end --> (the jobs readmes,
     excerpts and lessons readmes write them);
  2. followed by a marker, an HTML comment (invisible once rendered) that names its source; a
     range takes one marker per number, in order:
       <!-- bench: CHAPTER KERNEL DTYPE OP N FIELD [key=value ...] -->
            a bench.csv row (read by tools/results.py, under today's chapter names); N as 2^28 or
            a number; FIELD a column (gbps, pct_peak, time_us, latency_us, ratio_to_cub, ...);
            key=value narrows by another column or parameter (layout=rows, length=32; "key=" for
            a row without it), file=PATH reads another
            bench.csv-shaped file of RESULTS (an experiment's)
       <!-- csv: FILE key=value ... COLUMN -->         a row of another CSV of RESULTS
       <!-- md: FILE | CELL | ... | COLUMN -->         a row of a Markdown table of RESULTS that
                                                       has every CELL; COLUMN its header
       <!-- profile: CHAPTER KERNEL FIELD [op=.. dtype=.. n=..] -->
            one profiled call (RESULTS/profile, tools/profile.py): a field of profile.summarize
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
import glob
import os
import re
import sys

from tools.number_sources import MarkerError, Sources, calc
from tools.quantities import FAMILY, MARKER, RULES, prose_of, quantities
from tools.schema import InputError


REPOSITORY = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))


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
        except (MarkerError, OSError, InputError, re.error, ValueError, KeyError) as e:
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
             + sorted(glob.glob("experiments/[0-9][0-9]_*/README.md", root_dir=root))
             + [os.path.join(rel, "README.md"), os.path.join(rel, "experiments", "README.md")])
    return [os.path.join(root, n) for n in names if os.path.exists(os.path.join(root, n))]


def main(argv):
    """argv: the job's arguments."""
    parser = argparse.ArgumentParser(prog="python3 -m tools numbers", description=__doc__.split("\n")[0])
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
        print(f"numbers: {e}", file=sys.stderr)
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
