#!/usr/bin/env python3
"""How many 16-byte loads each kernel's main loop keeps in flight, read from its SASS.

A thread's loop issues its loads, then adds what they bring: all its loads are in flight at once
only if no instruction between them reads (or overwrites) a register that an earlier load is still
filling, for such an instruction waits for that load's data. The compiler decides this, not the
source: a loaded vector copied into other registers right after its load leaves one load in
flight per thread where the source asks for eight. This script finds, in each kernel, the loop with the most 16-byte loads
(LDG.E.128), walks its body once in address order, and counts the most such loads in flight at
any point, on each way through the body (the branches in it test the input's alignment); with
--expect it checks that every way keeps the unroll the source asks for in flight (or all its loads,
where a way issues fewer).

A kernel whose loads are issued in one step of its work and used in the next (chapter 12's
segments: a window's loads fly while the warp finishes the window before) has no such loop: with
--apart it checks instead that no 16-byte load's registers are read (or overwritten) by any of the
N instructions after it in address order.

    scripts/sass_loads.py OBJECT_OR_BINARY [--expect KERNEL_REGEX=N ...] [--apart KERNEL_REGEX=N ...]

It reads the SASS with cuobjdump and nvdisasm (the CUDA Toolkit's; where the toolkit has none, the
PyPI wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm). Exit codes: 0 every expectation met,
1 one was not, 2 bad arguments or an unreadable binary, 77 no cuobjdump or nvdisasm here (the
test is then skipped).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

LOAD = re.compile(r"LDG\.E(?:\.EF|\.EL|\.LU)?\.128\S*\s+R(\d+)\s*,")
INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);")
BACKWARD = re.compile(r"\bBRA\s+(?:`\()?[^0-9;]*0x([0-9a-f]+)")
REGISTER = re.compile(r"\bR(\d+)\b")


def find_tool(name):
    """The path of a CUDA Toolkit program: on PATH, in /usr/local/cuda/bin, or from NVIDIA's wheel."""
    found = shutil.which(name) or shutil.which(name, path="/usr/local/cuda/bin")
    if found:
        return found
    for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        for path in glob.glob(os.path.join(base, "nvidia", "cu*", "bin", name)):
            return path
    return None


def functions(sass):
    """{mangled name: [(address, instruction text)]} of every kernel in cuobjdump -sass output."""
    out = {}
    for part in re.split(r"\n\s*Function : ", sass)[1:]:
        name, body = part.split("\n", 1)
        out[name.strip()] = [(int(a, 16), text.strip()) for a, text in INSTRUCTION.findall(body)]
    return out


def operands(text):
    """(registers written, registers read) of one instruction; a predicate guard is dropped."""
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    parts = text.split(None, 1)
    if len(parts) < 2:
        return set(), set()
    fields = [f.strip() for f in parts[1].split(",")]
    written = set(REGISTER.findall(fields[0])) if not parts[0].startswith(("ST", "RED", "BRA")) else set()
    read = set(REGISTER.findall(",".join(fields[1:] if written else fields)))
    return written, read


GUARD = re.compile(r"^@(!?)(P\d)\s+")
FORWARD = re.compile(r"\bBRA\s+(?:`\()?[^0-9;]*0x([0-9a-f]+)")


def paths(body):
    """Each way through a loop body: its instructions in the order they run. The branches inside a
    body test the input's alignment, the same in every trip, so a way is one truth value for each
    predicate a branch tests (a guarded instruction runs where its predicate holds)."""
    predicates = sorted({m.group(2) for _, t in body for m in [GUARD.match(t)] if m and FORWARD.search(t)})
    index = {a: i for i, (a, _) in enumerate(body)}
    for bits in range(2 ** len(predicates)):
        value = {p: bool(bits >> k & 1) for k, p in enumerate(predicates)}
        run, i, steps = [], 0, 0
        while i < len(body) - 1 and steps < 10 * len(body):  # the last instruction branches back
            steps += 1
            text = body[i][1]
            m = GUARD.match(text)
            holds = True if not m or m.group(2) not in value else value[m.group(2)] != (m.group(1) == "!")
            target = FORWARD.search(text)
            if target and "BRA" in text.split()[1 if m else 0]:
                if holds and int(target.group(1), 16) in index:
                    i = index[int(target.group(1), 16)]
                    continue
                i += 1
                continue
            if holds:
                run.append(GUARD.sub("", text))
            i += 1
        yield run


def in_flight(run):
    """(16-byte loads on one way through a loop body, the most of them in flight at once)."""
    pending, best, loads = [], 0, 0
    for text in run:
        written, read = operands(text)
        # Any use of a pending load's registers (read, or overwritten) waits for that load.
        pending = [regs for regs in pending if not (regs & (read | written))]
        m = LOAD.search(text)
        if m:
            loads += 1
            first = int(m.group(1))
            pending.append({str(first + k) for k in range(4)})
            best = max(best, len(pending))
    return loads, best


def main_loop_ways(instructions):
    """The ways through the loop with the most 16-byte loads that issue any: for each, (its 16-byte
    loads, the most of them in flight at once), without repeats."""
    best, most = [], 0
    for address, text in instructions:
        m = BACKWARD.search(text)
        if not m or int(m.group(1), 16) >= address:
            continue
        body = [(a, t) for a, t in instructions if int(m.group(1), 16) <= a <= address]
        total = sum(1 for _, t in body if LOAD.search(t))
        if total > most:
            most, best = total, sorted({w for w in (in_flight(run) for run in paths(body)) if w[0] > 0})
    return best


def load_distances(instructions):
    """For each 16-byte load, how many instructions after it (in address order) the first one
    comes that reads or overwrites its registers (to the kernel's end if none does)."""
    out = []
    for i, (_, text) in enumerate(instructions):
        m = LOAD.search(text)
        if not m:
            continue
        regs = {str(int(m.group(1)) + k) for k in range(4)}
        distance = len(instructions) - i
        for k in range(i + 1, len(instructions)):
            written, read = operands(instructions[k][1])
            if regs & (read | written):
                distance = k - i
                break
        out.append(distance)
    return out


def parse_expectations(parser, option, values):
    out = []
    for e in values:
        pattern, _, count = e.rpartition("=")
        if not pattern or not count.isdigit():
            parser.error(f"{option} {e!r} is not KERNEL_REGEX=N")
        out.append((re.compile(pattern), int(count)))
    return out


def demangle(names):
    try:
        run = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return dict(zip(names, run.stdout.split("\n")))
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="an object file or program with sm_90 SASS")
    parser.add_argument("--expect", action="append", default=[], metavar="KERNEL_REGEX=N",
                        help="kernels whose demangled name matches KERNEL_REGEX keep at least N loads in flight")
    parser.add_argument("--apart", action="append", default=[], metavar="KERNEL_REGEX=N",
                        help="kernels whose demangled name matches KERNEL_REGEX use no 16-byte load's "
                             "registers within N instructions of it")
    args = parser.parse_args()
    expectations = parse_expectations(parser, "--expect", args.expect)
    apart = parse_expectations(parser, "--apart", args.apart)
    # cuobjdump disassembles through nvdisasm, which it looks for on PATH.
    tools = {name: find_tool(name) for name in ("cuobjdump", "nvdisasm")}
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        print(f"sass_loads.py: skipped: no {' or '.join(missing)} (CUDA Toolkit, or pip install "
              + " ".join(f"nvidia-cuda-{name}" for name in missing) + ")")
        return 77
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(tools["nvdisasm"]), os.environ.get("PATH", "")]))
    run = subprocess.run([tools["cuobjdump"], "-sass", args.binary], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        print(f"sass_loads.py: cuobjdump failed on {args.binary}:\n{run.stderr}", file=sys.stderr)
        return 2
    sass = run.stdout
    kernels = functions(sass)
    if not kernels:
        print(f"sass_loads.py: no SASS in {args.binary}", file=sys.stderr)
        return 2
    names = demangle(list(kernels))
    failed = 0
    matched = {pattern.pattern: 0 for pattern, _ in expectations + apart}
    print("each way through the main loop: its 16-byte loads / the most of them in flight at once")
    print("(--apart: the 16-byte loads, and the fewest instructions from one to its data's first use)")
    for mangled, instructions in sorted(kernels.items(), key=lambda kv: names[kv[0]]):
        near = max([n for pattern, n in apart if pattern.search(names[mangled])], default=None)
        if near is not None:
            for pattern, _ in apart:
                if pattern.search(names[mangled]):
                    matched[pattern.pattern] += 1
            distances = load_distances(instructions)
            ok = distances and min(distances) >= near
            failed += not ok
            shown = f"{len(distances)}, {min(distances)}" if distances else "-"
            print(f"{shown:>16} | {names[mangled]}  " + ("ok" if ok else f"FAILS: fewer than {near}"))
            continue
        ways = main_loop_ways(instructions)
        want = max([n for pattern, n in expectations if pattern.search(names[mangled])], default=None)
        for pattern, _ in expectations:
            if pattern.search(names[mangled]):
                matched[pattern.pattern] += 1
        # A way keeps its unroll in flight, or all its loads where it issues fewer.
        short = [f"{n}/{f}" for n, f in ways if f < min(n, want)] if want is not None else []
        verdict = "" if want is None else ("  FAILS: " + " ".join(short) if short or not ways else "  ok")
        failed += bool(verdict.startswith("  FAILS"))
        print(f"{' '.join(f'{n}/{f}' for n, f in ways) or '-':>16} | {names[mangled]}{verdict}")
    for pattern, count in matched.items():
        if count == 0:
            print(f"sass_loads.py: no kernel matches {pattern!r}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
