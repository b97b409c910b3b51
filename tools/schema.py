"""bench.csv's schema: its columns, the names of the chapters and the libraries' baselines, how
rows are keyed and ordered, and how sizes are labelled. Every other module reads a row through
these."""

# time_us, gbps, pct_peak: the steady state, the median call among calls queued back to back;
# time_p10_us, time_p90_us: the spread of those calls; latency_us: one call from an idle GPU,
# the host's dispatch included; b2b_us: per call of 200 calls made in a loop, whichever is slower
# setting it, the host's dispatch or the GPU's work; graph_us: per call of the same 200 calls
# captured into one CUDA graph (common/timing.hpp). The last two are measured on L2-resident
# inputs only, where launches matter; graph_us is empty where a call cannot be captured.
# variant_of: K of the benchmark's label "variant of K", empty for the lessons' and the
# libraries' kernels; params: "key=value;..." from its counters param_<key>, keys sorted.
# layout, segments, length: the shape, last so that the columns before keep their places. A
# chapter's reduction of n elements into one value is "flat", 1 segment of length n; chapter 11
# reduces many at once: "rows" and "columns" of a [B, L] matrix (segments B, length L), or
# "segments" of varying length (their number, and their mean length n / segments).
CSV_COLUMNS = ["chapter", "kernel", "dtype", "op", "n", "bytes", "time_us", "time_p10_us",
               "time_p90_us", "latency_us", "b2b_us", "graph_us", "gbps", "pct_peak",
               "l2_resident", "ratio_to_cub", "variant_of", "params", "layout", "segments",
               "length", "error", "error_bound", "passed", "result", "true_value"]
# A bench.csv from an older benchmark lacks these; it still reads (every kernel then counts as a
# lesson's, every row as flat, and the times it lacks are unknown), so that `compare` can set a
# new run against it.
OPTIONAL_COLUMNS = ["time_p10_us", "time_p90_us", "latency_us", "b2b_us", "graph_us",
                    "variant_of", "params", "layout", "segments", "length", "error", "error_bound",
                    "passed", "result", "true_value"]
FLAT = "flat"
# The layouts in reading order; a batched row's counter layout_id numbers them from 1 on.
LAYOUTS = [FLAT, "rows", "columns", "segments"]
# Counters common/bench.cpp sets on every benchmark row, and those it sets on some only.
JSON_COUNTERS = ["n", "bytes", "time_us", "time_p10_us", "time_p90_us", "latency_us", "gbps",
                 "pct_peak", "l2_resident"]
OPTIONAL_COUNTERS = ["b2b_us", "graph_us"]
# Chapter 13's rows check their result beside the time: the error against float64, its bound, and
# whether it passed (1; 0 failed, a value here, not "not measured"; -1 not checked: a product whose
# bound at this n is 10^-4 or more, its error_bound then -1; an error of 1e300 or more stands for a
# result that is not finite, inf or NaN, where the answer is finite). Where the check is of one
# number: that number (result) and its float64 value (true_value), +-1e300 standing for +-inf.
# Empty on every other row.
CHECK_COUNTERS = ["error", "error_bound", "passed", "result", "true_value"]
# A row whose call may stop before reading its input (chapter 13's early exit) carries the counter
# reads_unknown and no GB/s; scripts/early_exit_bytes.sh counts the bytes it reads with Nsight
# Compute into this file beside bench.csv, and its GB/s are those bytes over its time.
EARLY_EXIT_BYTES = "early_exit_bytes.csv"
# Chapter 13's operators (common/dtype.hpp, kCustomOpNames), set against CUB's TransformReduce
# with the same functors, which chapter 13 runs itself.
CUSTOM_OPS_CHAPTER = "13_custom_ops"
# A batched row's counters besides those: layout_id (an index into LAYOUTS), and its shape.
BATCHED_COUNTERS = ["segments", "length"]
# Beside the chapters the benchmark times an empty kernel the same ways, named
# floor/<kernel>/none/none/0: the floor under every call. It is no chapter's kernel, so it goes
# to floor.csv next to bench.csv, never into bench.csv's tables, charts or comparisons.
FLOOR_PREFIX = "floor"
FLOOR_CSV = "floor.csv"
FLOOR_COLUMNS = ["kernel", "time_us", "time_p10_us", "time_p90_us", "latency_us", "b2b_us",
                 "graph_us"]
FLOOR_KERNEL = "empty_kernel"

CUB_CHAPTER = "09_cub_comparison"
# The batched rows' yardstick (chapters 11 and 12): CUB's segmented reduction, measured on rows
# and segments (CUB has no column reduction). Columns and segments are also set against their
# naive mapping.
BATCHED_BASELINE = "cub_segmented_reduce"
NAIVE_MAPPING = {"reduce_columns": "reduce_columns_naive", "reduce_segments": "reduce_segments_naive"}
# The automatic choice of reduce_rows, its counter param_strategy_id, by name.
ROW_STRATEGIES = {1: "thread_per_row", 2: "group_per_row", 3: "block_per_row", 4: "blocks_per_row"}
# The launch-cost chart sets the one-launch chapter against the two-launch one and the library.
TWO_PASS_CHAPTER = "07_two_pass"
SINGLE_PASS_CHAPTER = "10_single_pass"
DRAM_N = 2 ** 28            # 1 GiB of f32: far beyond any L2, so a DRAM figure
L2_N = 2 ** 20              # 4 MiB of f32: sits in L2, quoted next to it in the README
TIME_TABLE_MAX_N = 2 ** 22  # below this a call is latency-bound: time per call is the useful figure
L2_FOOTNOTE = "L2-resident: input no larger than L2, measured hot (larger inputs are measured cold)"

# The charts of a results folder, in the order the README shows them, with the alt text it gives
# them. `charts` draws those CHART_DRAWERS names, and BATCHED_CHART where bench.csv has batched
# rows; a chart drawn by a script of its own is listed here too, so that the README links it: the
# headline chart, achieved bandwidth against bytes in flight per SM, comes from tools/littles_law.py
# (it needs the profiler's and the latency's files). The README links those that exist.
BATCHED_CHART = "batched.png"
EQUAL_BYTES_CHART = "dtypes_equal_bytes.png"
CHARTS = [
    ("bytes_in_flight.png", "Bandwidth against bytes in flight per SM, with Little's law"),
    ("bandwidth_vs_n.png", "f32 sum bandwidth vs. input size, log scale, with the chapters that "
                           "reach CUB's bandwidth as multiples of its GB/s on a linear scale"),
    ("time_vs_n.png", "f32 sum time per call vs. input size: chapters 03, 07 and 10, CUB and an "
                      "empty kernel, back to back and one call from idle"),
    ("launch_cost.png", "f32 sum time per call at small n: one call and back to back, single pass "
                        "against two passes, CUB and an empty kernel"),
    ("chapters.png", "Bandwidth per chapter at a DRAM-resident size"),
    ("dtypes.png", "f32, f16 and bf16 sums at a DRAM-resident size: each chapter's lead kernel "
                   "and CUB, a bar per element type"),
    (EQUAL_BYTES_CHART, "Sums of 1 GiB of every element type: chapters 07 and 10 and CUB, "
                               "a bar per kernel, each marked with its GB/s as a multiple of its f32 GB/s"),
    ("dot.png", "Dot products: chapter 08's steps as multiples of cuBLAS's bandwidth, and its "
                "lead kernel in f32, f16 and bf16 against CUB, the bf16 drop marked"),
    (BATCHED_CHART, "f32 sums of many rows, columns or segments at once: bandwidth vs. length, "
                    "and as a multiple of CUB's segmented reduction"),
]

# Sections of tables.md and the READMEs come in this order; anything else follows alphabetically.
DTYPE_ORDER = ["f32", "f16", "bf16", "f64"]
OP_ORDER = ["sum", "max", "min", "argmax", "dot"]


class InputError(Exception):
    """Missing or malformed input: main() prints it as one line and exits with status 2."""


def open_input(path):
    try:
        return open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None


def baseline_for(op, dtype):
    """The (chapter, kernel) a row is compared with in ratio_to_cub."""
    if op not in OP_ORDER:  # chapter 13's operators
        return CUSTOM_OPS_CHAPTER, "cub_transform_reduce"
    if op == "dot":
        # The library answer to an f32 dot product is cuBLAS; for 16-bit inputs with an f32
        # result, which cuBLAS's Sdot does not take, CUB's TransformReduce of the products.
        return "08_dot_product", "cublas_sdot" if dtype == "f32" else "cub_transform_reduce"
    if op == "sum" and dtype != "f32":
        # The chapters sum half-precision inputs in f32, integers in int64 and f64 in double;
        # CUB's counterpart that also converts each element before adding is TransformReduce
        # with the chapters' Sum, not a plain Sum over the input type.
        return CUB_CHAPTER, "cub_transform_reduce"
    if op in ("max", "min", "argmax"):
        # CUB's own Max/Min/ArgMax as shipped. They answer differently for -inf and NaN
        # (09_cub_comparison/README.md); 09's calls with this project's semantics can be slower
        # (argmax), and comparing with those would flatter the chapters: the yardstick is the
        # faster library call.
        return CUB_CHAPTER, "cub_" + op + "_builtin"
    return CUB_CHAPTER, "cub_" + op


def is_baseline(kernel):
    """Library rows (CUB, cuBLAS) are the yardstick, drawn apart from the chapters' kernels."""
    return kernel.startswith(("cub_", "cublas_"))


def row_key(row):
    """What one measurement is; repetitions of it share the key. Batched shapes can read the same
    n (1024 rows of 65536, 65536 of 1024; segments of uniform or heavy-tailed lengths, told
    apart by param_heavy), so the shape and the params count too."""
    return (row["chapter"], row["kernel"], row["op"], row["dtype"], row["n"], row["layout"],
            row["segments"], row["length"], tuple(sorted(row["params"].items())))


def flat_key(row):
    """A flat row's (chapter, kernel, op, dtype, n): what ratio_to_cub and `compare` match on."""
    return row["chapter"], row["kernel"], row["op"], row["dtype"], row["n"]


def batched_key(row):
    """Where a batched row is compared with another kernel's: the same op, dtype and shape."""
    return (row["op"], row["dtype"], row["n"], row["layout"], row["segments"], row["length"],
            row["params"].get("heavy"))


def kernel_key(row):
    """Where a row's kernel sorts: by chapter, the chapter's own kernels before the libraries',
    then by step (a chapter of several lessons, as 08, numbers them with param_step), then by
    the other params (05's coarsening factors from small to large), then by name."""
    params = row["params"]
    return (row["chapter"], is_baseline(row["kernel"]), params.get("step", 0),
            sorted(params.items()), row["kernel"])


def sort_rows(rows):
    """Flat rows by kernel_key, op, dtype and n; after them the batched rows, kernel by kernel
    (its params vary with the shape: reduce_rows's automatic choice), then by shape."""
    def key(r):
        if r["layout"] == FLAT:
            return 0, kernel_key(r), r["op"], r["dtype"], r["n"]
        return (1, r["chapter"], is_baseline(r["kernel"]), r["variant_of"] != "", r["kernel"],
                LAYOUTS.index(r["layout"]), r["op"], r["dtype"], r["params"].get("heavy", 0),
                r["length"], r["segments"], r["n"], sorted(r["params"].items()))
    return sorted(rows, key=key)


def pow2_label(n, tex=False):
    """1048576 -> '2^20' ('$2^{20}$' for a chart); other sizes stay plain numbers."""
    k = n.bit_length() - 1
    if n != 1 << k:
        return str(n)
    return f"$2^{{{k}}}$" if tex else f"2^{k}"


def binary_size(nbytes):
    """4194304 -> '4 MiB': sizes of inputs and caches, in powers of two."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:g} B"
