"""Finding the quantities in a README's prose: a number typed with a unit, outside code."""

import os
import re


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
