"""The compile tiers' part of REPORT.md: pure functions from records to (title, markdown) sections.

Rows are per kernel x variant x config, over every case (dtype, shape) that compiled it:
status counts, the stage reached, and resources (registers, spills, shared memory on cuda;
UB bits against the limit and the core type on Ascend).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from parity.report.tables import fmt_num, md_escape, table
from parity.results import Record, Status


def compile_records(records: Iterable[Record]) -> list[Record]:
    """Records that describe one compile (they carry a `compile` dict)."""
    return [r for r in records if r.get("mode") == "compile" and r.get("compile")]


def compile_of(r: Record) -> dict[str, Any]:
    """A record's compile dict (every record compile_records returns has one)."""
    return r.get("compile") or {}


def headline(message: str | None) -> str:
    """The part of a compiler message that says what is wrong.

    Triton's frontend errors quote the kernel source and put a caret under the culprit; the
    reason follows the caret. Keep the position ("at 5:22") and that reason, drop the source.
    """
    if not message:
        return ""
    lines = message.strip().splitlines()
    carets = [i for i, line in enumerate(lines) if line.strip() == "^"]
    if not carets or carets[-1] == len(lines) - 1:
        return message
    where = lines[0].split(": at ", 1)[-1].rstrip(":") if ": at " in lines[0] else ""
    reason = " ".join(line.strip() for line in lines[carets[-1] + 1:])
    return f"at {where}: {reason}" if where else reason


def _flags(values: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in values.items()) or "-"


def _key(r: Record) -> tuple[str, str, str, str]:
    c = compile_of(r)
    return r["kernel"], c.get("kernel") or "", _flags(c.get("variant") or {}), _flags(c.get("config") or {})


def _span(values: Sequence[Any]) -> str:
    nums = sorted(v for v in values if isinstance(v, (int, float)))
    if not nums:
        return ""
    return str(nums[0]) if nums[0] == nums[-1] else f"{nums[0]}–{nums[-1]}"


def _stage(r: Record) -> str:
    c = compile_of(r)
    return c.get("stage_reached") or ("no IR (frontend)" if not c.get("ok") else "?")


def _status_text(recs: Sequence[Record]) -> str:
    counts: dict[Status, int] = defaultdict(int)
    for r in recs:
        counts[r["status"]] += 1
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


def group_rows(records: Iterable[Record]) -> dict[tuple[str, str, str, str], list[Record]]:
    groups: dict[tuple[str, str, str, str], list[Record]] = defaultdict(list)
    for r in compile_records(records):
        groups[_key(r)].append(r)
    return dict(sorted(groups.items()))


def resource_rows(records: Iterable[Record]) -> list[list[Any]]:
    """kernel x variant x config: cases, status, stages, registers, spills, shared bytes, seconds."""
    rows = []
    for (kernel, jit_name, variant, config), recs in group_rows(records).items():
        cs = [compile_of(r) for r in recs]
        stages = sorted({_stage(r) for r in recs})
        seconds = sum(c.get("seconds") or 0.0 for c in cs)
        rows.append([kernel, jit_name, md_escape(variant), md_escape(config), len(recs),
                     _status_text(recs), ", ".join(stages), _span([c.get("n_regs") for c in cs]),
                     _span([c.get("n_spills") for c in cs]), _span([c.get("shared_bytes") for c in cs]),
                     fmt_num(seconds)])
    return rows


RESOURCE_HEADERS = ["kernel", "jit function", "variant", "config", "cases", "status", "stage reached",
                    "regs", "spills", "shared bytes", "compile s"]


def ub_rows(records: Iterable[Record]) -> list[list[Any]]:
    """Ascend: kernel x variant x config with the UB it needs against the limit, and its core type."""
    rows = []
    for (kernel, jit_name, variant, config), recs in group_rows(records).items():
        cs = [compile_of(r) for r in recs]
        if not any(c.get("ub_bits") or c.get("core_type") or c.get("error_kind") == "ub_overflow" for c in cs):
            continue
        need = max((c["ub_bits"] for c in cs if c.get("ub_bits")), default=None)
        limit = next((c["ub_limit_bits"] for c in cs if c.get("ub_limit_bits")), None)
        share = f"{100 * need / limit:.0f}%" if need and limit else ""
        overflows = sum(1 for c in cs if c.get("error_kind") == "ub_overflow")
        cores = ", ".join(sorted({str(c["core_type"]) for c in cs if c.get("core_type")}))
        rows.append([kernel, jit_name, md_escape(variant), md_escape(config), len(recs),
                     _status_text(recs), fmt_num(need), fmt_num(limit), share, overflows, cores])
    return rows


UB_HEADERS = ["kernel", "jit function", "variant", "config", "cases", "status", "max ub_bits", "ub_limit_bits",
              "of UB", "ub overflows", "core type"]


def failure_rows(records: Iterable[Record]) -> list[list[Any]]:
    """Compiles that failed, identical ones (same kernel, outcome and key line) as one row with a count."""
    from parity.report.findings import cases_text, clip, group

    compiles = compile_records(records)
    by_case = {(r["kernel"], str(r["case"])): r for r in compiles}
    rows = []
    for f in group(compiles, ""):
        first = by_case[(f.kernel, f.cases[0])]
        c = compile_of(first)
        rows.append([f.kernel, md_escape(cases_text(f), 140), first["status"], c.get("error_kind") or "",
                     _stage(first), md_escape(clip(f.key, 240), 260), f"[repro]({f.repro})" if f.repro else ""])
    return rows


FAILURE_HEADERS = ["kernel", "cases", "status", "error kind", "stage reached", "compiler's key line", "repro"]


def expected_error_rows(records: Iterable[Record]) -> list[list[Any]]:
    """Probes: did the compile fail as the spec expects here, and what did the compiler say?"""
    rows = []
    for r in compile_records(records):
        if r.get("expected_compile_error") is None:
            continue
        c, reason = compile_of(r), r.get("reason") or ""
        verdict = "as expected" if r["status"] == Status.PASSED else "NOT as expected"
        outcome = f"{c.get('error_kind')}, {_stage(r)}" if not c.get("ok") else f"compiled to {_stage(r)}"
        rows.append([r["kernel"], md_escape(r["expected_compile_error"]), verdict, outcome,
                     md_escape(headline(c.get("message")) or reason, 300)])
    return rows


def launch_rows(records: Iterable[Record]) -> list[list[Any]]:
    rows = []
    for r in compile_records(records):
        c = compile_of(r)
        if c.get("launch_error"):
            rows.append([r["kernel"], md_escape(r["case"], 90), md_escape(c.get("grid")),
                         md_escape(c["launch_error"], 240)])
    return rows


def coverage_rows(records: Iterable[Record]) -> list[list[Any]]:
    rows = []
    for r in records:
        if r.get("suite") == "compile-variants":
            p = r.get("params") or {}
            rows.append([r["kernel"], p.get("declared"), p.get("reached"), r["status"], md_escape(r.get("reason"))])
    return sorted(rows)


def compile_sections(records: Sequence[Record]) -> list[tuple[str, str]]:
    """The compile-tier sections of REPORT.md; none when the records hold no compile."""
    if not compile_records(records):
        return []
    intro = ("One row per kernel × heuristic variant × autotune config, over every case that compiled it. "
             "Ranges are min–max over those cases. `no IR (frontend)`: the code generator rejected the "
             "kernel before any IR was produced.")
    sections = [("Compile", intro + "\n\n" + table(resource_rows(records), RESOURCE_HEADERS))]
    ub = ub_rows(records)
    if ub:
        sections.append(("Compile: unified buffer (Ascend)",
                         "UB the BiShengIR planner asked for, against the arch's limit.\n\n"
                         + table(ub, UB_HEADERS)))
    fails = failure_rows(records)
    sections.append(("Compile failures", "Identical failures of a kernel (same outcome, same key line of the "
                     "compiler's message) are one row; `cases` counts them. xfailed rows are known divergences.\n\n"
                     + table(fails, FAILURE_HEADERS) if fails else "None."))
    probes = expected_error_rows(records)
    if probes:
        sections.append(("Expected compile errors", "What each probe's compiler said on this backend.\n\n"
                         + table(probes, ["kernel", "expected pattern", "verdict", "outcome", "compiler message"])))
    launches = launch_rows(records)
    if launches:
        sections.append(("Launch findings", table(launches, ["kernel", "case", "grid", "launch error"])))
    coverage = coverage_rows(records)
    if coverage:
        sections.append(("Variant coverage", table(coverage, ["kernel", "declared", "reached", "status",
                                                              "missing"])))
    return sections
