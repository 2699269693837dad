"""A portability table per library: op x tier, each cell what happened there.

Cells: `passed` (xfailed cases of known divergences count as passing, noted), `UB overflow (X bits)`,
`frontend error`, `import error`, `failed`/`error` with the first reason, or `skipped` with why. Pure
functions over results records; `python -m parity.report.portability DIR...` prints the table for
every results dir given (any tiers, any machines).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from parity.reasons import key_line
from parity.report.findings import clip, message_of
from parity.report.tables import md_escape, table
from parity.results import Record, Status

BAD = (Status.FAILED, Status.ERROR, Status.CRASHED, Status.XPASSED)


def _finding(record: Record) -> str:
    """The kind of a failing record, as a cell reads it."""
    reason = str(record.get("reason") or "")
    compile_ = record.get("compile") or {}
    if compile_.get("error_kind") == "ub_overflow" or "ub overflow" in reason.lower():
        bits = compile_.get("ub_bits")
        return f"UB overflow ({bits} bits)" if bits else "UB overflow"
    if "import error" in reason:
        return "import error"
    if compile_.get("error_kind") == "unsupported":
        return "frontend error"
    if compile_.get("launch_error"):
        return "launch error"
    return record["status"]


def library_label(owner: Mapping[str, Any]) -> str:
    return f"{owner['name']} {owner.get('version') or ''}".strip()


def golden_note(records: Iterable[Record]) -> str:
    """`; golden off (...)` where a library's own reference disagreed with ours (parity.run.second_reference)."""
    for r in records:
        second = r.get("second_reference") or {}
        if second and not second.get("agrees", True):
            side = {"golden": "golden off", "undecided": "golden vs fp64: undecided"}.get(str(second.get("wrong")),
                                                                                        "fp64 reference off")
            diff = second.get("max_abs_diff")
            return f"; {side}" + (f" (max diff {diff:.3g})" if isinstance(diff, float) else "")
    return ""


def cell(records: Sequence[Record]) -> str:
    """One op on one tier."""
    if not records:
        return ""
    return _verdict(records) + golden_note(records)


def _verdict(records: Sequence[Record]) -> str:
    bad = [r for r in records if r["status"] in BAD]
    if bad:
        first = bad[0]
        owner = first.get("finding_of")  # the library's own finding (parity.triage.library_rule), named as such
        whose = f"{library_label(owner)} finding: " if owner else ""
        key = clip(key_line(message_of(first)) or str(first.get("reason") or ""), 110)
        return f"{whose}{_finding(first)} ({len(bad)}/{len(records)}): {md_escape(key, 120)}"
    passed = sum(r["status"] == Status.PASSED for r in records)
    xfailed = sum(r["status"] == Status.XFAILED for r in records)
    declined = [r["declined"] for r in records if r.get("declined")]
    if passed or xfailed:
        return (f"passed {passed}/{len(records)}" + (f" (+{xfailed} known divergence)" if xfailed else "")
                + (f" (+{len(declined)} declined by {declined[0]['library']})" if declined else ""))
    if declined:  # the library's own guard refused this environment: neither a pass nor a finding
        d = declined[0]
        return f"declined by {d['library']}: {md_escape(d['reason'], 110)} ({d['link']})"
    return f"skipped: {md_escape(records[0].get('reason'), 110)}"


def portability_rows(records: Iterable[Record]) -> tuple[list[str], list[list[str]]]:
    """(tiers, rows of [kernel, cell per tier]); only accuracy and compile records count."""
    by_cell: dict[tuple[str, str], list[Record]] = {}
    tiers: list[str] = []
    for r in records:
        if r.get("suite") not in ("accuracy", "compile", None):
            continue
        by_cell.setdefault((r["kernel"], r["backend"]), []).append(r)
        if r["backend"] not in tiers:
            tiers.append(r["backend"])
    kernels = sorted({k for k, _ in by_cell})
    return tiers, [[k, *(cell(by_cell.get((k, t), [])) for t in tiers)] for k in kernels]


def library_findings(records: Iterable[Record]) -> list[tuple[str, str]]:
    """REPORT.md's section of failures a library owns, by library: (title, body), or none."""
    rows = []
    for r in records:
        owner = r.get("finding_of")
        if owner and r["status"] in BAD:
            draft = f"[ISSUE.md]({r['repro']}/ISSUE.md)" if r.get("repro") else ""
            rows.append([library_label(owner), r["kernel"], md_escape(r["case"], 60),
                         owner["why"], md_escape(r.get("reason"), 200), draft])
    if not rows:
        return []
    from parity.spec.library import RULE

    body = (f"These failures are the libraries' own findings, each with an issue draft addressed to the library "
            f"(rule: {RULE}).\n\n" + table(rows, ["library", "op", "case", "why it is the library's", "reason",
                                                   "draft"]))
    return [("Findings of the libraries under test", body)]


def declined_section(records: Iterable[Record]) -> list[tuple[str, str]]:
    """REPORT.md's section of cases a library refused to run here on purpose (KernelSpec.declines)."""
    rows = [[r["declined"]["library"], r["kernel"], r.get("suite") or "", md_escape(r["case"], 60),
             md_escape(r["declined"]["reason"], 200), r["declined"]["link"]] for r in records if r.get("declined")]
    if not rows:
        return []
    body = ("The library raised its own guard for this environment (a known problem it refuses to compute "
            "through): these cases are skipped, neither passed nor a finding, and get no repro.\n\n"
            + table(rows, ["library", "op", "suite", "case", "why the library declines", "link"]))
    return [("Environments the libraries decline", body)]


def golden_disagreements(records: Sequence[Record]) -> list[tuple[str, str]]:
    """REPORT.md's section on the library goldens checked: the cases where one disagrees with our fp64
    reference, or one line saying they all agree; none without goldens."""
    rows, seen = [], set()
    for r in records:
        second = r.get("second_reference") or {}
        if not second or second.get("agrees", True) or (r["kernel"], r["case"]) in seen:
            continue
        seen.add((r["kernel"], r["case"]))
        kernel_gap = second.get("kernel_to_golden")
        rows.append([r["kernel"], md_escape(r["case"], 60), second.get("wrong") or "", r["status"],
                     "" if kernel_gap is None else f"{kernel_gap:.3g}", md_escape(second.get("message"), 300)])
    checked = [r for r in records if r.get("second_reference")]
    if not rows:
        if not checked:
            return []
        worst = max((r["second_reference"].get("max_abs_diff") or 0.0 for r in checked), default=0.0)
        ops = len({r["kernel"] for r in checked})
        return [("Library goldens vs the fp64 reference",
                 f"Every library golden checked agrees with parity's fp64 reference: {len(checked)} cases of {ops} "
                 f"ops, run on the same fp64 inputs before the launch whatever the kernel did (largest max |d| "
                 f"{worst:.3g}).")]
    body = ("The library's own reference and parity's fp64 reference, run on the same fp64 inputs before the "
            "launch, whatever the kernel's verdict; an independent third fp64 evaluation names the one that is "
            "off. The kernel's status is judged against the fp64 reference only.\n\n"
            + table(rows, ["op", "case", "which is off", "kernel status", "kernel to golden", "detail"]))
    return [("Library goldens that disagree with the fp64 reference", body)]


def render(records: Iterable[Record]) -> str:
    tiers, rows = portability_rows(records)
    return table(rows, ["op", *tiers]) + "\n" if rows else "no records\n"


def main(argv: Sequence[str]) -> int:
    from parity.results import MERGED_NAME, read_records

    records = [r for d in argv for r in read_records(Path(d) / MERGED_NAME)]
    sys.stdout.write(render(records))
    return 0 if records else 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
