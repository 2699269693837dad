"""A recorded test file's replays per feature group (issue 41): printed as markdown, never asserted.

Each recorded kernel is put in the test function that defines it (by its line in the test file the recording ran,
read at run time), each test function in a feature group (FEATURE_GROUPS, by name), and each group gets one row:
launches kept, kernels, distinct specializations, and per results dir of a `--replay BUNDLE` run the agreement
(`parity.record.summary.tier_cell`: agree, disagree with owners, not replayable with reasons).

    python bench/replay_groups.py --source test_core.py BUNDLE reports/replay-interpret reports/replay-... ...

Made for upstream Triton's python/test/unit/language/test_core.py; any test file whose kernels are defined inside
its test functions (or in helpers named like them) groups the same way.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from parity.record.bundle import load_bundle  # noqa: E402  (after the path: the script runs from anywhere)
from parity.record.replay import kernel_groups  # noqa: E402
from parity.record.summary import tier_cell  # noqa: E402

# feature group <- test functions (or the helpers that define their kernels), by regular expression over the name
FEATURE_GROUPS: list[tuple[str, str]] = [
    ("elementwise binary ops (arith, compare, bitwise, shift)",
     r"^(_test_binary|test_bin_op|test_floordiv|test_bitwise_op|test_shift_op|test_compare_op|test_math_divide_op)$"),
    ("constexpr operands", r"^test_bin_op_constexpr$"),
    ("unary ops and math (exp, log, erf, fma, sqrt_rn, abs, umulhi)",
     r"^(_test_unary|test_unary_op|test_math_\w+|test_precise_math|test_abs|test_unary_math|test_umulhi)$"),
    ("where and broadcast", r"^(test_where\w*|test_broadcast)$"),
    ("casts and bitcasts (incl. fp8, bf16)", r"^test_cast$"),
    ("shape ops (transpose, index, reshape, cat, join, interleave, split)",
     r"^(test_transpose|test_index1d|test_reshape|test_cat|test_join\w*|test_interleave|test_split)$"),
    ("block pointers (make_block_ptr)", r"^test_trans_reshape$"),
    ("reductions (min/max/sum/arg*, keep_dims, 3-D, xor_sum)",
     r"^(test_reduce\w*|test_max_returns_zero|test_optimize_thread_locality)$"),
    ("scans and histogram (cumsum/cumprod, associative_scan)", r"^(test_scan\w*|test_histogram)$"),
    ("atomics (rmw with sem, cas, tensor atomics)", r"^test_\w*atomic\w*$"),
    ("dot (tl.dot 3-D, broadcast-multiply, dot of constants)", r"^test_dot\w*$"),
    ("loads and stores (masks, other=, scalar masks, vectorization, arange)",
     r"^(test_masked_load\w*|test_vectorization|test_store_constant|test_arange|test_empty_kernel)$"),
    ("calls, tuples and control flow (noinline, for/while/if)",
     r"^(test_tuples|test_noinline|test_call|test_for_iv|test_if\w*|test_while|test_nested_while)$"),
]


def function_ranges(source: str) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of every top-level function of the test file."""
    tree = ast.parse(source)
    return [(n.lineno, n.end_lineno or n.lineno, n.name) for n in tree.body if isinstance(n, ast.FunctionDef)]


def enclosing(ranges: list[tuple[int, int, str]], line: int) -> str:
    """The top-level function whose body holds `line` (a kernel defined inside it), or `<module>`."""
    for first, last, name in ranges:
        if first <= line <= last:
            return name
    return "<module>"


# record_harness/tc_conftest.py's name for a kernel patch_kernel rebuilt
PATCHED = re.compile(r"^<test_core patched \w+ line (\d+) ")


def defining_line(kernel: dict[str, Any]) -> int:
    """The kernel's line in the test file; a kernel test_core's patch_kernel rebuilt under the interpreter has its
    own text, named with its template's line (record_harness/tc_conftest.py)."""
    m = PATCHED.match(str(kernel.get("file") or ""))
    return int(m.group(1)) if m else int(kernel.get("line") or 0)


def group_of(function: str) -> str:
    return next((g for g, pattern in FEATURE_GROUPS if re.match(pattern, function)), f"other ({function})")


def read_records(results: Path) -> list[dict[str, Any]]:
    path = results / "results.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def case_launch(case: str) -> int | None:
    m = re.search(r"launch=(\d+)", case)
    return int(m.group(1)) if m else None


def table(bundle_path: Path, source: Path, dirs: list[Path]) -> str:
    bundle = load_bundle(bundle_path)
    ranges = function_ranges(source.read_text(encoding="utf-8"))
    rows: dict[str, dict[str, Any]] = defaultdict(lambda: {"launches": 0, "kernels": set(), "specs": set(),
                                                            "functions": set()})
    where: dict[tuple[str, int], str] = {}  # (spec name, launch index) -> group
    for spec_name, entries in kernel_groups(bundle).values():
        for i, entry in enumerate(entries):
            function = enclosing(ranges, defining_line(entry["kernel"]))
            group = group_of(function)
            row = rows[group]
            row["launches"] += 1
            row["kernels"].add(entry["kernel"]["id"])
            row["specs"].add(entry["specialization"])
            row["functions"].add(function)
            where[(spec_name, i)] = group
    tiers: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for d in dirs:
        per_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in read_records(d):
            if r.get("suite") not in (None, "accuracy", "compile"):
                continue
            launch = case_launch(str(r.get("case", "")))
            group = where.get((r.get("kernel", ""), -1 if launch is None else launch))
            if group is not None:
                per_group[group].append(r)
        tiers[d.name] = per_group
    head = ["feature group", "test functions", "launches", "kernels", "specializations", *tiers]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = [g for g, _ in FEATURE_GROUPS] + sorted(g for g in rows if g.startswith("other"))
    for group in order:
        if group not in rows:
            continue
        row = rows[group]
        cells = [group, ", ".join(sorted(row["functions"])), str(row["launches"]), str(len(row["kernels"])),
                 str(len(row["specs"])), *(tier_cell(t.get(group, [])).replace("|", "\\|") for t in tiers.values())]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True, help="the test file the recording ran")
    parser.add_argument("bundle", type=Path)
    parser.add_argument("results", type=Path, nargs="*", help="results dirs of --replay runs of the bundle")
    args = parser.parse_args()
    print(table(args.bundle, args.source, args.results))


if __name__ == "__main__":
    main()
