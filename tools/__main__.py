"""python3 -m tools JOB [ARGUMENTS]: the one entry point of the results tooling, run from the
repository's root. `python3 -m tools JOB --help` says more about one job."""

import importlib
import sys

JOBS = {  # name: (module, arguments, what it does)
    "csv": ("bench_csv", "BENCH_JSON OUT_CSV",
            "reduction_bench's JSON -> bench.csv, one row per (chapter, kernel, op, dtype, n,\n"
            "shape, params), and floor.csv beside it (the empty kernel's times)"),
    "charts": ("charts", "RESULTS_DIR",
               "RESULTS_DIR/bench.csv and machine.txt -> the charts (batched.png too, where\n"
               "bench.csv has batched rows) and tables.md, written into RESULTS_DIR"),
    "tables": ("tables", "RESULTS_DIR", "tables.md only, without matplotlib"),
    "compare": ("compare", "RESULTS_DIR OTHER",
                "this run's GB/s divided by OTHER's, printed and written to RESULTS_DIR/compare.md"),
    "readmes": ("readmes", "[--chapter | --all] README|CHAPTER_DIR RESULTS_DIR",
                "the READMEs' benchmark sections, between <!-- results:begin/end -->"),
    "lessons": ("lessons", "tables RESULTS_DIR | readmes RESULTS_DIR ROOT",
                "profile.md, bytes_in_flight.md, classic.md and bytes_in_flight.png; or the same\n"
                "tables, and the solutions', into ROOT's READMEs"),
    "numbers": ("numbers", "[FILE...] [--root DIR] [--results DIR] [--exclude FILE] [--summary]",
                "every measured number typed in the READMEs' prose against its source"),
    "excerpts": ("excerpts", "[--check] [--root DIR]",
                 "the READMEs' code excerpts, cut from the sources (--check: compare only)"),
    "reading": ("reading", "[--root DIR] [--limit MINUTES]",
                "each chapter's reading time: README prose at 200 words a minute, lesson code at\n"
                "15 lines a minute (exit 1 above the limit, 45 by default)"),
    "diagrams": ("diagrams", "[OUT_DIR]", "the teaching diagrams, docs/diagrams/*.png"),
}


def usage():
    lines = [__doc__, "", "jobs:"]
    for name, (_, arguments, what) in JOBS.items():
        lines.append(f"  {name} {arguments}")
        lines += [f"      {line}" for line in what.split("\n")]
    return "\n".join(lines)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, arguments = argv[0], argv[1:]
    if name not in JOBS:
        print(f"python3 -m tools: unknown job '{name}'\n\n{usage()}", file=sys.stderr)
        return 2
    return importlib.import_module(f"tools.{JOBS[name][0]}").main(arguments)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
