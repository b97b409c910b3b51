#!/usr/bin/env python3
"""Whether writing the block's tree with cooperative groups costs anything: the SASS of chapter
10's kernel with chapter 06's hand-written shuffles (the lesson, ch10::reduce_single_pass) set beside
the same kernel with cg::reduce (the variant cooperative_groups: ch10::reduce_single_pass_tuned with
ch10::CooperativeGroups, launched the ordinary way as the lesson is), as the compiler emitted them
into a binary.

    scripts/sass_compare.py BINARY [OUT.md]

For the f32 sum and the f32 argmax, it counts each kernel's instructions by opcode (cuobjdump
-sass, demangled with c++filt) and prints a Markdown table of the total and of the opcodes whose
counts differ. Exit status 2 when the tools or the kernels are missing.
"""

import collections
import re
import shutil
import subprocess
import sys

# tree: (kernel, its template arguments after the operator)
KERNELS = {"hand-written shuffles (lesson)": ("ch10::reduce_single_pass<", "ch07::Array<"),
           "cooperative groups": ("ch10::reduce_single_pass_tuned<", "ch07::Tuning, ch10::CooperativeGroups,")}
OPS = {"f32 sum": "red::Sum<float>", "f32 argmax": "red::ArgMax<float>"}
INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")


def fail(message):
    print(f"sass_compare.py: {message}", file=sys.stderr)
    sys.exit(2)


def functions(binary):
    """{demangled name: Counter of opcodes} for every function in the binary's sm_XX SASS."""
    # cuobjdump disassembles through nvdisasm, which it looks for on PATH.
    for tool in ("cuobjdump", "nvdisasm", "c++filt"):
        if not shutil.which(tool):
            fail(f"{tool} not found (cuobjdump and nvdisasm come with the CUDA toolkit, c++filt with binutils)")
    run = subprocess.run(["cuobjdump", "-sass", binary], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"cuobjdump failed on {binary}:\n{run.stderr}")
    sass = run.stdout
    out, name = {}, None
    for line in sass.splitlines():
        if "Function :" in line:
            mangled = line.split("Function :", 1)[1].strip()
            name = subprocess.run(["c++filt", mangled], check=True, capture_output=True, text=True).stdout.strip()
            out[name] = collections.Counter()
        elif name:
            m = INSTRUCTION.search(line)
            if m:
                out[name][m.group(1).split(".")[0]] += 1
    return out


def find(funcs, op, kernel, args):
    hits = [counts for name, counts in funcs.items()
            if kernel in name and f"{op}, {args}" in name]
    if len(hits) != 1:
        fail(f"expected one {kernel}{op}, {args}...> in the binary, found {len(hits)}")
    return hits[0]


def main(argv):
    if len(argv) not in (2, 3):
        fail("usage: sass_compare.py BINARY [OUT.md]")
    funcs = functions(argv[1])
    lines = ["| kernel | tree written with | instructions | SHFL | BAR | opcodes that differ |",
             "|---|---|---:|---:|---:|---|"]
    for label, op in OPS.items():
        counts = {tree: find(funcs, op, kernel, args) for tree, (kernel, args) in KERNELS.items()}
        lesson, other = counts.values()
        differ = sorted(k for k in set(lesson) | set(other) if lesson[k] != other[k])
        for tree, c in counts.items():
            detail = ", ".join(f"{k} {c[k]}" for k in differ) or "none"
            lines.append(f"| {label} | {tree} | {sum(c.values())} | {c['SHFL']} | {c['BAR']} | {detail} |")
    text = "\n".join(lines) + (
        f"\n\nFrom `cuobjdump -sass {argv[1].split('/')[-1]}`: instructions of each kernel by opcode (NOP "
        "included). SHFL: register shuffles between lanes; BAR: block barriers.\n")
    print(text, end="")
    if len(argv) == 3:
        with open(argv[2], "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
