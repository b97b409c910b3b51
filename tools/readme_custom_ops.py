"""Chapter 13's README tables: any associative operator, each row's time beside the check of its
result."""

import math

from tools.readme_chapters import fmt, lead_kernel, ratio
from tools.results import select
from tools.schema import InputError, is_baseline
from tools.tables import ELEMENT_BYTES, markdown_table


# ---- Chapter 13: any associative operator (flat rows with a check beside the time). ----------

# Every chapter 13 operator reads 1 GiB; chapter 07's f32 sum of the same bytes is the yardstick.
CUSTOM_OPS_BYTES = 2 ** 30
CUSTOM_OPS_REFERENCE_CHAPTER = "07_two_pass"
TRUE_AT = {0: "deciding byte first", 1: "deciding byte at the middle", 2: "no deciding byte"}
EARLY_EXIT_KERNEL = "reduce_early_exit"


def data_cell(row):
    """What a chapter 13 row's data set shows: where any/all's deciding byte is, or a product that
    stays in float's range."""
    if "true_at" in row["params"]:
        return TRUE_AT.get(row["params"]["true_at"], "")
    return "in float's range" if row["params"].get("in_range") else ""


def custom_ops_reference(rows):
    """Chapter 07's lead kernel, f32 sum of CUSTOM_OPS_BYTES, in the same run, or None."""
    lead = lead_kernel(rows, CUSTOM_OPS_REFERENCE_CHAPTER)
    return next((r for r in select(rows, "sum", "f32") if (r["chapter"], r["kernel"], r["n"])
                 == (CUSTOM_OPS_REFERENCE_CHAPTER, lead, CUSTOM_OPS_BYTES // 4)), None)


def error_cell(value):
    """An error or bound: 3 significant digits; 1e300 and more stands for a result that is not
    finite; a negative bound for none below 10^-4 at this n (a product's: its row is not checked)."""
    if value is None:
        return "—"
    if value < 0:
        return "none"
    return "not finite" if value >= 1e300 else f"{value:.3g}"


def number_cell(value):
    """A result or a float64 value: 3 significant digits, +-1e300 and beyond standing for +-inf."""
    if value is None:
        return "—"
    if abs(value) >= 1e300:
        return "inf" if value > 0 else "-inf"
    return f"{value:.3g}"


def error_with_values_cell(row):
    """The error; beside it the result and its float64 value where the check failed on one number
    (a product past float's range: inf beside the true product)."""
    cell = error_cell(row["error"])
    failed = row["passed"] == 0 or (row["passed"] and whole_answer_lost(row))
    if failed and row.get("result") is not None and row.get("true_value") is not None:
        cell += f" (result {number_cell(row['result'])}, float64 {number_cell(row['true_value'])})"
    return cell


# Operators whose error is |ln got - ln p| (13_custom_ops/host_reference.hpp): the log and the
# mantissa/exponent products.
LOG_ERROR_OPS = {"log_product", "scaled_product"}


def whole_answer_lost(row):
    """The checker's rule (host_reference.hpp, unless_lost), applied to the published numbers, so
    that a run from before the rule shows it too: a log or scaled product whose ln|p| is off by
    ln 2 or more (the product off by a factor of 2) and by at least |ln p| (no digit of the log
    either), or a plain product off by a factor of 2 (or of the wrong sign, or 0), has lost the
    whole answer, whatever its bound."""
    error, got, want = row.get("error"), row.get("result"), row.get("true_value")
    if row.get("op") == "product" and got is not None and want:
        return got / want <= 0 or abs(math.log(got / want)) >= math.log(2)
    if row.get("op") not in LOG_ERROR_OPS or error is None or want is None:
        return False
    return error >= math.log(2) and error >= abs(want)


# The largest bound a product's "pass" may rest on (13_custom_ops/checks.hpp, kLargestProductBound):
# relative for the float product, in ln|p| for the log and mantissa/exponent products.
LARGEST_PRODUCT_BOUND = 1e-4
PRODUCT_OPS = {"product", "log_product", "scaled_product"}
NOT_CHECKED = "unbounded: not checked"


def unbounded(row):
    """The checker's rule for products (checks.hpp, held_to_useful_bound), applied to the published
    numbers, so that a run from before the rule shows it too: a bound of -1 (none below 10^-4 at
    this n), or a product's bound of 10^-4 or more that the row did not fail, judges nothing."""
    bound = row.get("error_bound")
    return bound is not None and (bound < 0 or (row.get("op") in PRODUCT_OPS and bound >= LARGEST_PRODUCT_BOUND
                                                 and row["passed"] != 0))


def check_cell(row):
    """pass or **fails** against the bound; a failure within the bound is a result that lost the
    whole answer, which the bound was too loose to catch (the check says so rather than pass it).
    Where a product's bound is too loose to judge, "unbounded: not checked", never pass: it fails
    only on a lost answer, or with passed 0, its exact-data gate failed (passed -1 or, in a run
    from before the rule, 1: the gate passed)."""
    if row["passed"] is None:
        return "—"
    lost = whole_answer_lost(row)
    passed = row["passed"] == 1 and not lost
    bound, error = row.get("error_bound"), row.get("error")
    if unbounded(row):
        if lost:
            return "**fails**: the whole answer lost, and no bound at this n"
        return "**fails**: exact data" if row["passed"] == 0 else NOT_CHECKED
    verdict = "pass" if passed else "**fails**"
    if bound is not None and bound >= 1e300 and not passed:
        return "**fails**: the whole answer lost, and no bound at this n"
    if not passed and error is not None and bound is not None and 0 < error <= bound:
        return f"**fails**: the whole answer lost, the bound ({error_cell(bound)}) above the loss"
    return verdict


def time_ratio(row, other):
    """other's time over row's: how many times faster row is. For inputs of the same bytes read to
    the end it is the ratio of GB/s; an early exit's is its speed-up."""
    return fmt("ratio_to_cub", other["time_us"] / row["time_us"] if row and other else None)


def cub_row_of(part, row):
    """CUB's row beside `row` in its operator's table: the same data set (any/all: no deciding
    byte, as CUB always reads to the end)."""
    data = row["params"].get("in_range", 0)
    return next((r for r in part if is_baseline(r["kernel"])
                 and r["params"].get("in_range", 0) == data), None)


def reads_uncounted(row):
    """An early exit with a deciding byte whose reads were never counted (a bench.csv from before
    scripts/early_exit_bytes.sh, which set the whole input as its bytes): its GB/s are not shown."""
    return (row["kernel"] == EARLY_EXIT_KERNEL and row["params"].get("true_at", 2) < 2
            and row["bytes"] >= row["n"] * ELEMENT_BYTES.get(row["dtype"], 1))


def bytes_cell(row):
    """The bytes a call read, in GiB (2^30): the whole input, or what an early exit counted."""
    return "not counted" if reads_uncounted(row) else f"{row['bytes'] / 2**30:.3g}"


def custom_ops_rows(rows, chapter):
    """The chapter's rows by operator, in bench.csv's order: the lesson, its variants, the library."""
    by_op = {}
    for r in rows:
        if r["chapter"] == chapter:
            by_op.setdefault(r["op"], []).append(r)
    order = lambda r: (is_baseline(r["kernel"]), r["variant_of"] != "", r["kernel"],
                       r["params"].get("true_at", -1), r["params"].get("in_range", 0))
    return {op: sorted(rs, key=order) for op, rs in by_op.items()}


def custom_ops_table(part, reference):
    header = ["kernel", "data", "µs", "GiB read", "GB/s", "% of DRAM peak",
              f"× {CUSTOM_OPS_REFERENCE_CHAPTER} f32 sum", f"× `cub_transform_reduce`",
              "error vs. float64", "bound", "check"]
    body = [[f"`{r['kernel']}`", data_cell(r), f"{r['time_us']:.1f}", bytes_cell(r),
             fmt("gbps", None if reads_uncounted(r) else r["gbps"]),
             fmt("pct_peak", None if reads_uncounted(r) else r["pct_peak"]), time_ratio(r, reference),
             time_ratio(r, cub_row_of(part, r)), error_with_values_cell(r), error_cell(r["error_bound"]),
             check_cell(r)] for r in part]
    return markdown_table(header, body)


def custom_ops_chapter(chapter, rows, machine):
    """The intro and the (title, table) pairs of chapter 13: one table per operator."""
    by_op = custom_ops_rows(rows, chapter)
    if not by_op:
        raise InputError(f"bench.csv has no rows of chapter {chapter}")
    reference = custom_ops_reference(rows)
    dtypes = lambda part: ", ".join(sorted({r["dtype"] for r in part}))
    tables = [(f"**{op}** ({dtypes(part)}, 1 GiB)", custom_ops_table(part, reference)) for op, part in by_op.items()]
    intro = (f"Measured on **{machine.gpu}**. Each operator over 1 GiB of input (2^28 floats, 2^30 bytes "
             f"or 2^27 (a, b) pairs). µs: the steady state, the median call among calls queued back "
             f"to back, cold. GiB read: the whole input, except for the early exit with a deciding "
             f"byte, which stops before the end: its bytes read from DRAM are counted by Nsight "
             f"Compute (scripts/early_exit_bytes.sh). GB/s: the bytes read over the time, in 10^9 "
             f"bytes/s; % of DRAM peak: of the theoretical DRAM bandwidth "
             f"({machine.dram_gbps:.0f} GB/s). `× {CUSTOM_OPS_REFERENCE_CHAPTER} f32 sum`: chapter "
             f"07's time for its f32 sum of the same bytes in the same run over this row's time; "
             f"`× cub_transform_reduce`: CUB's TransformReduce with the same functors, over the same "
             f"data, likewise (> 1: this chapter is faster; for the early exit, its speed-up). The "
             f"error is against the float64 reference, beside the bound it is held to "
             f"(host_reference.hpp); where a check of one number fails, the result and its float64 "
             f"value stand beside the error. A naive form's error is its trap: its check **fails** "
             f"where the bound is tighter than the loss; where the bound, which grows with the "
             f"longest chain of combines, is looser than a loss of the whole answer, the check fails "
             f"on that loss and says so. A product whose bound is 10^-4 or more (relative, or in "
             f"ln|p|) reads \"{NOT_CHECKED}\" where its result is within that bound, never pass; it "
             f"fails beyond the bound, on a lost answer (off by a factor of 2 or more) or on a failed "
             f"exact-data gate.")
    return intro, tables


def custom_ops_summary(rows):
    """Chapter 13 in the top README: each operator's lesson kernel, one line each."""
    reference = custom_ops_reference(rows)
    body = []
    for chapter in sorted({r["chapter"] for r in rows if r["error"] is not None}):
        for op, part in custom_ops_rows(rows, chapter).items():
            lesson = next((r for r in part if not r["variant_of"] and not is_baseline(r["kernel"])
                           and r["params"].get("true_at", 2) == 2 and not r["params"].get("in_range")), None)
            if lesson:
                body.append([chapter, f"`{lesson['kernel']}`", op, fmt("gbps", lesson["gbps"]),
                             ratio(lesson, reference),
                             fmt("ratio_to_cub", lesson["ratio_to_cub"]), error_with_values_cell(lesson),
                             check_cell(lesson)])
    header = ["Chapter", "Kernel", "operator", "GB/s", f"× {CUSTOM_OPS_REFERENCE_CHAPTER} f32 sum",
              "× `cub_transform_reduce`", "error vs. float64", "check"]
    return markdown_table(header, body, text_columns=3) if body else []
