"""The sources a number marker names: bench.csv rows, other CSVs, Markdown tables, profiled calls,
text files and the constants; and calc:'s arithmetic."""

import ast
import csv
import json
import math
import operator
import os
import re

from tools.profile import read_cases, split_cases, summarize, to_number
from tools.quantities import CONSTANTS, SOURCE_KINDS, number
from tools.results import read_csv


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
            self.cache["bench", name] = read_csv(self.path(name))
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
    """{case label: (summarize's figures, every raw metric of the call's longest kernel
    plus blocks_per_sm)}, from Nsight Compute's raw page and cases.txt."""
    with open(os.path.join(folder, "kernels.csv"), encoding="utf-8") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("==")))
    header, units = rows[0], rows[1]
    kernels = []
    for cells in rows[2:]:
        k = {column: to_number(cell, unit) for column, unit, cell in zip(header, units, cells)}
        kernels.append({**k, "name": cells[header.index("Kernel Name")]})
    out = {}
    for label, ks in split_cases(kernels, read_cases(os.path.join(folder, "cases.txt"))).items():
        main = max(ks, key=lambda k: k.get("gpu__time_duration.sum") or 0)
        limits = [main.get(f"launch__occupancy_limit_{x}") for x in ("registers", "shared_mem", "warps", "blocks")]
        main["blocks_per_sm"] = min(limits) if None not in limits else None
        out[label] = (summarize(label, ks), main)
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
