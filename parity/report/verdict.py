"""The porting verdict: one row per kernel, one column per target, each check that ran there and its result.

It answers a porting user's question first: does kernel X work on NVIDIA and on Ascend, and if not,
whose change is it (the kernel's, the library's, a compiler's, a tier's limit)? Owners come from the
records (parity.triage's `owner`; parity.findings.owner_of falls back where there is none). Pure
functions: columns and records in, markdown or plain text out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from parity.report import findings as fnd
from parity.report.fit_md import fit_answer, fit_line
from parity.report.tables import md_escape, table


@dataclass(frozen=True)
class Check:
    """What one tier checks, as the verdict names it."""

    target: str  # the column it belongs to
    name: str  # with {arch} / {device} filled from env.json
    order: int  # position inside the target's cell
    short: str = ""  # the terminal's word for it
    device: bool = False  # runs on the hardware itself


# the tiers as the reports describe them (Backend names as recorded in results); a tier not listed is
# shown under its own name
CHECKS: dict[str, Check] = {
    "interpret": Check("NVIDIA (Triton)", "interpreter computes fp64 answer", 1, "interpreter"),
    "cuda-compile": Check("NVIDIA (Triton)", "builds for {arch}", 0, "build"),
    "cuda": Check("NVIDIA (Triton)", "GPU arithmetic on {device}", 2, "GPU run", device=True),
    "ascend-compile": Check("Ascend (triton-ascend)", "builds for {arch}", 0, "build"),
    "ascend-lowered": Check("Ascend (triton-ascend)", "lowering computes fp64 answer", 1, "lowering"),
    "ascend": Check("Ascend (triton-ascend)", "NPU arithmetic on {device}", 2, "NPU run", device=True),
}
TIER_OWNERS = ("tier", "environment")
DEVICE_CHECKS = {"NVIDIA (Triton)": "GPU arithmetic", "Ascend (triton-ascend)": "NPU arithmetic"}
NOT_CHECKABLE = ("No tier here sees the hardware's own arithmetic, timing or launch-time limits without the "
                 "device itself: a `{checks}` entry says \"not checked\" until a results dir from that device "
                 "(`nox -s cuda` / `nox -s ascend`) is added.")


def check_of(backend: str) -> Check:
    return CHECKS.get(backend, Check(backend, backend, 9, backend))


def check_name(backend: str, env: Mapping[str, Any]) -> str:
    arch = env.get("target_arch") or "the target"
    device = env.get("device_name") or "the device"
    return check_of(backend).name.format(arch=arch, device=device)


@dataclass(frozen=True)
class Result:
    """One kernel on one column."""

    mark: str  # "✓", "✗", "–" (not checked), "…" (interrupted)
    text: str  # the check's name with its result in words
    findings: tuple[fnd.Finding, ...] = ()
    refs: str = ""  # "#1, #3": the findings table's rows


def result(check: str, records: Sequence[Mapping[str, Any]], column: str, link_prefix: str,
           number: Mapping[tuple[Any, ...], int]) -> Result:
    """One check's verdict over one kernel's records on one column; `number` maps a finding's ident to its row."""
    scored = [r for r in records if r.get("suite") in (None, "accuracy", "compile")]
    ran = [r for r in scored if r["status"] not in ("skipped", "interrupted")]
    groups = fnd.group(scored, column, link_prefix)
    # a failure (known or not) that triage gives to the tier or the environment says nothing about the kernel
    limits = [f for f in groups if f.owner.get("who") in TIER_OWNERS]
    bad = [f for f in groups if f.outcome != "expected" and f not in limits]
    expected = [f for f in groups if f.outcome == "expected" and f not in limits]
    n_limit = sum(len(f.cases) for f in limits)
    limit_refs = ", ".join(f"#{number[f.ident]}" for f in limits if f.ident in number)
    limit = f", {n_limit} not checkable by this tier ({limit_refs})" if limits else ""
    n_known = sum(len(f.cases) for f in expected)
    known = f", and {n_known} of {len(ran)} fail as known and expected" if expected else ""
    if any(r["status"] == "interrupted" for r in scored) and not bad:
        return Result("…", f"{check}: interrupted, not finished", tuple(groups))
    refs = ", ".join(f"#{number[f.ident]}" for f in (bad or expected) if f.ident in number)
    if not bad and not expected and len(ran) == n_limit and ran:
        return Result("–", f"{check}: not checkable by this tier ({limit_refs})", tuple(groups), limit_refs)
    if bad:
        first = bad[0]
        why = fnd.clip(first.owner.get("evidence") or first.key, 70)
        return Result("✗", f"{check} ✗ {fnd.owner_words(first.owner)}" + (f": {why}" if why else "")
                      + (f" ({refs})" if refs else "") + known + limit, tuple(groups), refs)
    if not ran:
        why = next((r.get("reason") for r in scored if r.get("reason")), None) or "no case ran"
        declined = next((r["declined"] for r in scored if r.get("declined")), None)
        if declined:
            why = f"declined by {declined['library']}"
        return Result("–", f"{check}: not checked ({fnd.clip(why, 60)})", tuple(groups))
    if all(r.get("expected_compile_error") and (r.get("compile") or {}).get("ok") is False for r in ran):
        return Result("✓", f"{check}: rejected as the spec expects ✓", tuple(groups), refs)  # a probe
    if expected:  # not a failure of the run, but the kernel does not work there as it stands
        return Result("⚠", f"{check} ⚠ {n_known} of {len(ran)} fail as known and expected ({refs}){limit}",
                      tuple(groups), refs)
    return Result("✓", f"{check} ✓{limit}", tuple(groups), refs)


@dataclass(frozen=True)
class Verdict:
    targets: list[str]
    rows: list[tuple[str, list[str]]]  # kernel, one cell per target
    short_rows: list[tuple[str, list[str]]]  # the same in the terminal's words
    legend: list[str]  # what each terminal word stands for
    findings: list[fnd.Finding]  # numbered in order: the failing ones first, then the expected ones
    missing: dict[str, str]  # target -> the device check no column provides


def build(columns: Sequence[Any], records: Mapping[str, Sequence[Mapping[str, Any]]]) -> Verdict:
    """The verdict over columns (parity.report.divergence.Column: label, backend, env, link_prefix)."""
    cols = sorted(columns, key=lambda c: (list(CHECKS).index(c.backend) if c.backend in CHECKS else 99,
                                          c.label))
    targets = list(dict.fromkeys(check_of(c.backend).target for c in cols))
    targets.sort(key=lambda t: list(DEVICE_CHECKS).index(t) if t in DEVICE_CHECKS else 9)
    all_findings = [f for c in cols for f in fnd.group(records.get(c.label, ()), c.label, c.link_prefix)]
    ordered = sorted(all_findings, key=lambda f: (f.outcome == "expected", f.kernel, f.column))
    number = {f.ident: i + 1 for i, f in enumerate(ordered)}
    kernels = sorted({r["kernel"] for c in cols for r in records.get(c.label, ())})
    rows, short_rows, legend = [], [], {}
    for kernel in kernels:
        cells, shorts = [], []
        for target in targets:
            parts, short = [], []
            for c in sorted((c for c in cols if check_of(c.backend).target == target),
                            key=lambda c: check_of(c.backend).order):
                recs = [r for r in records.get(c.label, ()) if r["kernel"] == kernel]
                if not recs:
                    continue
                name = check_name(c.backend, c.env) + (f" [{c.label}]" if c.label != c.backend else "")
                res = result(name, recs, c.label, c.link_prefix, number)
                parts.append(res.text)
                word = check_of(c.backend).short + (f"@{c.label}" if c.label != c.backend else "")
                legend[(word, c.label)] = f"{word} = {name.split(' [')[0]} ({c.label})"
                n_known = 0 if res.mark == "–" else sum(
                    len(f.cases) for f in res.findings if f.outcome == "expected" and f.owner.get("who") not in
                    TIER_OWNERS)
                short.append(f"{word} {res.mark}" + (f" {res.refs}" if res.refs and res.mark == "✗" else "")
                             + (f" {n_known} known" if n_known else ""))
            device = DEVICE_CHECKS.get(target)
            if device and not any(check_of(c.backend).device and check_of(c.backend).target == target
                                  for c in cols):
                parts.append(f"{device}: not checked")
            cells.append(" / ".join(parts) if parts else "–")
            shorts.append(" · ".join(short) or "–")
        rows.append((kernel, cells))
        short_rows.append((kernel, shorts))
    missing = {t: DEVICE_CHECKS[t] for t in targets if t in DEVICE_CHECKS and not any(
        check_of(c.backend).device and check_of(c.backend).target == t for c in cols)}
    return Verdict(targets, rows, short_rows, list(legend.values()), ordered, missing)


def _finding_row(i: int, f: fnd.Finding, key_limit: int) -> list[str]:
    what = ("expected: " + fnd.clip(f.known["reason"], 90) if f.outcome == "expected" and f.known
            else f"{f.outcome}: {fnd.owner_words(f.owner)}")
    evidence = f.owner.get("evidence") if f.outcome != "expected" else ""
    if evidence:
        what += f" — {fnd.clip(evidence, 100)}"
    if f.fit:
        what += f"; {fnd.clip(fit_line(f.fit), 200)}"
    link = f.known.get("link") if f.outcome == "expected" and f.known else None
    repro = " ".join(x for x in (f"[repro]({f.repro})" if f.repro else "",
                                 f"[draft]({f.draft})" if f.draft and f.outcome != "expected" else "",
                                 f"[why]({link})" if link else "") if x)
    return [str(i), md_escape(f.kernel), md_escape(f.column), md_escape(fnd.cases_text(f), 200),
            md_escape(what, 400), f"`{md_escape(fnd.clip(f.key, key_limit), 400).replace(chr(96), '')}`"
            if f.key else "", repro]


FINDING_HEADERS = ["#", "kernel", "tier", "cases", "what, and whose", "compiler's key line", "repro"]


def render_md(v: Verdict, key_limit: int = 160) -> str:
    """The verdict table, what no tier here checks, and the numbered findings, as markdown."""
    if not v.rows:
        return "No records to judge."
    parts = [table([[md_escape(k), *(md_escape(c, 600) for c in cells)] for k, cells in v.rows],
                   ["kernel", *v.targets]), ""]
    parts += ["✓: every case that ran passed. ⚠: the cases that fail are known and expected (declared in the "
              "spec with a public source): the kernel does not work there as it stands, but nothing new broke. "
              "✗: a case failed, with whose change it is and its finding number (\"owner undecided\": no "
              "triage has named one for these records). "
              "Not checked: no results dir here runs that check.", ""]
    if v.missing:
        parts += [NOT_CHECKABLE.format(checks="` / `".join(v.missing.values())), ""]
    bad = [f for f in v.findings if f.outcome != "expected"]
    expected = [f for f in v.findings if f.outcome == "expected"]
    if bad:
        parts += ["### Findings", "", "Identical failures of a kernel on a tier are one row; `cases` counts them.",
                  "", table([_finding_row(v.findings.index(f) + 1, f, key_limit) for f in bad], FINDING_HEADERS), ""]
    if expected:
        parts += ["### Known and expected", "",
                  "Declared in the kernel's spec (`known_divergences`), each with its public source: these fail "
                  "here for a documented reason and are not counted as failures.", "",
                  table([_finding_row(v.findings.index(f) + 1, f, key_limit) for f in expected],
                        FINDING_HEADERS), ""]
    return "\n".join(parts)


def render_text(v: Verdict, width: int = 110) -> str:
    """The verdict for a terminal: a kernel × target table in short words, then the findings, one line each."""
    from tabulate import tabulate

    lines = [tabulate([[k, *cells] for k, cells in v.short_rows], headers=["kernel", *v.targets],
                      tablefmt="simple"), ""]
    lines += ["  " + fnd.clip(item, width - 2) for item in v.legend]
    if v.findings:
        lines.append("  ✗ #n: finding n below; ⚠ k known: k results fail as declared (expected, why and link "
                     "in the report)")
    for f in [f for f in v.findings if f.outcome != "expected"]:
        n = v.findings.index(f) + 1
        lines.append(fnd.clip(f"#{n} {f.kernel} [{f.column}]: {fnd.owner_words(f.owner)}", width))
        if f.key:
            lines.append("    " + fnd.clip(f.key, width - 4))
        lines.append("    " + fnd.clip(fnd.cases_text(f, 50), width - 4))
        if f.fit:  # the answer, then what to change, each on its line
            lines.append("    " + fnd.clip(f"fit advisor: {fit_answer(f.fit)}", width - 4))
            if f.fit.get("cap"):
                lines.append("    " + fnd.clip(f"change: {f.fit['cap']}", width - 4))
        if f.draft or f.repro:
            lines.append(f"    {f.draft or f.repro}")
    expected = sum(len(f.cases) for f in v.findings if f.outcome == "expected")
    if expected:
        lines.append(f"{expected} result(s) fail as declared known divergences (expected; why and link in the report)")
    if v.missing:
        lines.append(f"not checked by any tier here: {', '.join(v.missing.values())} (needs the device)")
    return "\n".join(lines)
