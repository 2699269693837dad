"""reports/DIVERGENCE.md: pure rendering of columns, records and divergences to GFM.

Tables are built with tabulate; every piece of compiler or user text goes through
md_escape so it cannot break a table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from parity.reasons import key_line
from parity.report import findings, npu_unseen_md, perf_cross, verdict
from parity.report.backend_md import COUNT_NOTE, ENV_KEYS
from parity.report.divergence import KINDS, RUN_MODES, Column, Divergence
from parity.report.err_tol import worst_err_over_tol
from parity.report.tables import fmt_num, md_escape, table
from parity.results import Record, Status
from parity.triage import precision

EXTRA_ENV_KEYS = ("machine", "platform", "cuda", "num_aicore", "num_vectorcore")
KIND_NOTES = {
    "numeric": "passes against fp64 on one backend, fails on another",
    "compile": "builds on one backend, fails to build on another (UB overflow included); each backend is "
               "named by what its own record shows",
    "launch": "launches on one backend, refused at launch on another",
    "specialization": "compile counts differ over the same cases",
    "version": "one backend on two triton versions (env.json `triton`) builds or behaves differently: a "
               "status or compile change, a new error, a changed compile count, or registers or shared memory "
               "moving by more than 20 %",
    "cross-output": "both pass against fp64, but their outputs differ from each other beyond tolerance",
    "perf": "the share of each machine's own measured roofline (or, without one, the speed relative to its torch "
            "baseline) differs beyond the ratio",
}


def env_table(columns: Sequence[Column]) -> str:
    keys = [k for k in (*ENV_KEYS, *EXTRA_ENV_KEYS) if any(c.env.get(k) is not None for c in columns)]
    rows = [[k, *(md_escape(c.env.get(k), 60) for c in columns)] for k in keys]
    return table(rows, ["", *(c.label for c in columns)])


def kernel_cell(records: Sequence[Record]) -> str:
    """One kernel on one column: pass counts, worst err/tol, compile counts."""
    run = [r for r in records if r.get("mode") in RUN_MODES and (r.get("suite") or "accuracy") == "accuracy"
           and r["status"] != Status.SKIPPED]
    comp = [r for r in records if r.get("compile") and r["status"] != Status.SKIPPED]  # dropped configs: skipped
    parts = []
    if run:
        c = Counter(r["status"] for r in run)
        text = f"{c[Status.PASSED] + c[Status.XPASSED]}/{len(run)} pass"
        extra = [f"{c[s]} {s}" for s in (Status.FAILED, Status.ERROR, Status.CRASHED, Status.XFAILED) if c[s]]
        worst = worst_err_over_tol(run)  # known divergences (xfailed) are counted, not scored
        parts.append(text + (f" ({', '.join(extra)})" if extra else "") +
                     (f", err/tol {fmt_num(worst, 2)}" if worst is not None else ""))
    if comp:
        ok = sum(1 for r in comp if (built := r.get("compile")) and built.get("ok"))
        parts.append(f"{ok}/{len(comp)} compile")
    return "; ".join(parts) or "–"


def summary_table(columns: Sequence[Column], records: Mapping[str, Sequence[Record]]) -> str:
    kernels = sorted({r["kernel"] for recs in records.values() for r in recs})
    rows = [[k, *(kernel_cell([r for r in records.get(c.label, ()) if r["kernel"] == k]) for c in columns)]
            for k in kernels]
    return table(rows, ["kernel", *(c.label for c in columns)])


def divergence_table(divs: Sequence[Divergence]) -> str:
    """One row per kernel and distinct divergence: identical ones over several cases are counted, not repeated."""
    groups: dict[tuple[str, str, str], list[Divergence]] = {}
    for d in divs:
        head, _, rest = d.summary.partition(": ")  # "compiles on a; not on b" + the first error
        groups.setdefault((d.kernel, head, key_line(rest)), []).append(d)
    rows = []
    for (kernel, head, key), group in groups.items():
        d = group[0]
        cases = [g.case or "all cases" for g in group]
        shown = findings.clip(", ".join(cases), 90)
        cells = "<br>".join(f"**{md_escape(label)}**: {md_escape(findings.clip(key_line(text), 110), 130)}"
                            for label, text in d.cells.items())
        links = " ".join(f"[{md_escape(label)}]({path})" for label, path in d.repros.items())
        known = f" (known: {md_escape(findings.clip(d.known, 140), 160)})" if d.known else ""
        what = findings.clip(f"{head}: {key}" if key else head, 220)
        rows.append([md_escape(kernel), md_escape(f"{len(group)}: {shown}" if len(group) > 1 else shown, 120),
                     md_escape(what, 240) + known, cells, links])
    return table(rows, ["kernel", "cases", "what differs (key line)", "per backend", "repro"])


def count_line(columns: Sequence[Column], records: Mapping[str, Sequence[Record]]) -> str:
    """The same count as each tier's REPORT.md and terminal summary, per results dir."""
    per = "; ".join(f"{c.label}: {len(records.get(c.label, ()))}" for c in columns)
    return f"Results per dir, as each tier's REPORT.md and terminal count them: {per}. {COUNT_NOTE}"


def headline(columns: Sequence[Column], divs: Sequence[Divergence],
             records: Mapping[str, Sequence[Record]] | None = None) -> str:
    """How many divergences, by kind; how many the specs declare known; and, where the verdict table above
    has no ✗ (given `records`), that none of them is a new failure, so the count never reads as one."""
    counts = Counter(d.kind for d in divs)
    by_kind = ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k])
    text = (f"{len(divs)} divergence(s) across {len(columns)} results dir(s)"
            + (f": {by_kind}." if by_kind else "."))
    known = sum(1 for d in divs if d.known)
    if not divs:
        return text
    failing = None if records is None else any(r.mark == "✗" for r in verdict.build(columns, records).results)
    if failing is False:
        rest = len(divs) - known
        parts = [f"{known} declared known in the specs (⚠ above, each with its reason and link)"] if known else []
        if rest:
            parts.append(f"{rest} a tier limit, or a difference between backends that both pass "
                         "(cross-output, perf, compile counts)")
        return text + " None is a new failure (the table above has no ✗): " + "; ".join(parts) + "."
    if known:
        return text + f" {known} of them declared known in the specs (⚠ above, each with its reason and link)."
    return text


def compared_cases(columns: Sequence[Column], records: Mapping[str, Sequence[Record]]) -> int:
    """How many (kernel, case) ran (not skipped) on two or more of the columns: what the divergences compared."""
    seen: Counter[tuple[str, str]] = Counter()
    for c in columns:
        seen.update({(r["kernel"], str(r["case"])) for r in records.get(c.label, ())
                     if r["status"] != Status.SKIPPED})
    return sum(1 for n in seen.values() if n > 1)


def no_divergence(columns: Sequence[Column], records: Mapping[str, Sequence[Record]]) -> str:
    """The Divergences section when it found none, saying over how many cases (none compared is not agreement)."""
    n = compared_cases(columns, records)
    if not n:
        return ("None found, and none could be: no case ran on two or more results dirs, so nothing was compared "
                "across them.")
    return f"None found over the {n} case(s) that ran on two or more results dirs."


def render(columns: Sequence[Column], records: Mapping[str, Sequence[Record]],
           divs: Sequence[Divergence], image: str | None, image_note: str | None = None,
           perf_image: str | None = None) -> str:
    """The whole DIVERGENCE.md."""
    tf32 = precision.kernels_with_tf32(records)  # a static note: no tier's failure needed
    parts = ["# parity: does each kernel port?", "",
             verdict.render_md(verdict.build(columns, records)), "", npu_unseen_md.section(records),
             *(["### Cross-backend notes", "", *(f"- `{md_escape(k)}`: {precision.NOTE}" for k in tf32), ""] if tf32
               else []),
             "## What was counted", "", count_line(columns, records), "", headline(columns, divs, records), "",
             "## Environments", "", env_table(columns), "",
             "## Summary by kernel × backend", "",
             "`n/m pass` counts fp64 checks; `err/tol` is REPORT.md's: the worst |out − ref| / (atol + rtol·|ref|) "
             "(err_ratio over its limit for err_ratio-judged kernels; above 1 fails; xfailed cases not scored); "
             "`k/m compile` counts compile-tier compiles that succeeded.", "",
             summary_table(columns, records), ""]
    if image:
        parts += [f"![kernel × backend heatmap: worst err/tol, compile failures marked C]({image})", ""]
    elif image_note:
        parts += [f"_No heatmap: {md_escape(image_note, 300)}._", ""]
    perf = perf_cross.render(perf_cross.grid([c.label for c in columns], records), perf_image)
    if perf:
        parts += ["## Perf across backends", "", perf]
    from parity.report import ascend_perf_md

    for label, column_records in records.items():  # static Ascend advice, per results dir that has it
        for title, body in ascend_perf_md.sections(column_records):
            parts += [f"## {title} ({md_escape(label, 80)})", "", body, ""]
    parts += ["## Divergences", ""]
    if not divs:
        parts += [no_divergence(columns, records), ""]
    for kind in KINDS:
        group = [d for d in divs if d.kind == kind]
        if group:
            parts += [f"### {kind} ({len(group)})", "", f"{KIND_NOTES[kind]}. Identical divergences over several "
                      "cases are one row; `cases` counts them.", "", divergence_table(group), ""]
    return "\n".join(parts)


def step_summary(columns: Sequence[Column], records: Mapping[str, Sequence[Record]],
                 divs: Sequence[Divergence]) -> str:
    """The short form for $GITHUB_STEP_SUMMARY: headline, summary table, counts by kind."""
    counts = Counter(d.kind for d in divs)
    rows = [[k, counts[k]] for k in KINDS]
    return "\n".join(["## parity: does each kernel port?", "",
                      verdict.render_md(verdict.build(columns, records), key_limit=100), "",
                      count_line(columns, records), "", headline(columns, divs, records), "",
                      summary_table(columns, records), "", table(rows, ["kind", "count"]), ""])
