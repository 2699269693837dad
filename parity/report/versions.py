"""Triton versions treated like backends: divergences of kind `version`, pure functions.

Results dirs of one backend built with different triton versions (env.json `triton`) are not
compared as backends. The backend kinds (numeric, compile, ...) use each backend's main version
only (its default dir's, else the newest); every version is compared with the next newer one
present, and whatever changed between the two is a `version` divergence naming both versions:

- status: an interpret (or run) case passes on one version, fails or errors on the other
  (an API that exists only in some versions shows up here as an AttributeError);
- compile: it compiles on one version only, or fails on both with a different error kind;
- resources: registers or shared memory of the same compile move by more than RESOURCE_JUMP;
- compile count: a kernel's compiles over the common cases differ (a specialization change).

Findings are grouped per kernel, version pair and check, with one example case and a count.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from parity.report import claims, divergence
from parity.report.divergence import KINDS, Column, Divergence, Facts
from parity.results import Record, Status
from parity.seams.versions import version_key

RESOURCE_JUMP = 0.20  # of the older version's figure
RESOURCES = (("n_regs", "registers"), ("shared_bytes", "shared memory bytes"))


def triton_of(column: Column) -> str | None:
    return column.env.get("triton") or None


def split_columns(columns: Sequence[Column]) -> tuple[list[Column], dict[str, list[Column]]]:
    """(columns at their backend's main triton, {backend: one column per version, oldest first}) for the
    backends whose dirs span two or more triton versions. The main version is that of the backend's
    own dir (reports/<backend>, the default pin), else the newest."""
    by_backend: dict[str, list[Column]] = defaultdict(list)
    for col in columns:
        by_backend[col.backend].append(col)
    primary: list[Column] = []
    spans: dict[str, list[Column]] = {}
    for backend, cols in by_backend.items():
        versions = sorted({triton_of(c) for c in cols if triton_of(c)}, key=version_key)
        if len(versions) < 2:
            primary += cols
            continue
        # the backend's own dir (the default session's, labelled by the backend alone) sets the version the
        # backend kinds compare at; without one, the newest
        main = next((triton_of(c) for c in cols if c.label == backend and triton_of(c)), versions[-1])
        primary += [c for c in cols if triton_of(c) in (main, None)]
        spans[backend] = [next(c for c in cols if triton_of(c) == v) for v in versions]
    return [c for c in columns if c in primary], spans


def _verdict(f: Facts) -> Status | None:
    if f.status in divergence.NUMERIC_PASS:
        return Status.PASSED
    if f.status in divergence.NUMERIC_FAIL:
        return Status.FAILED
    return Status.ERROR if f.status in (Status.ERROR, Status.CRASHED) else None


def _status(f: Facts) -> str:
    reason = str((f.record or {}).get("reason") or "")
    return f"{f.status}: {reason}" if reason and f.status not in divergence.NUMERIC_PASS else str(f.status)


def _compile_cell(f: Facts, mode: str = "compile") -> str:
    if not f.compiled:
        return f"failed: {f.compile_error}"
    if mode != "compile":  # it ran: its verdict, not a compile it was never judged on
        return _status(f)
    if f.built_status not in (None, *claims.PASSED):
        return f"compile ok, status {f.built_status} for another reason"
    figures = [f"{f.resources[k]} {what}" for k, what in RESOURCES if f.resources.get(k) is not None]
    return "compiled" + (f" ({', '.join(figures)})" if figures else "")


def _jump(old: Any, new: Any) -> bool:
    if old is None or new is None:
        return False
    return abs(float(new) - float(old)) > RESOURCE_JUMP * max(float(old), 1.0)


def case_changes(fa: Facts, fb: Facts, va: str, vb: str, mode: str = "compile") -> list[tuple[str, str, str, str]]:
    """(check, what changed, cell a, cell b) for one case on two versions, a the older; `mode` the tier's (the
    words each version's record earns: parity.report.claims)."""
    found = []
    sa, sb = _verdict(fa), _verdict(fb)
    if sa and sb and sa != sb:
        why = next((_status(f) for f, s in ((fb, sb), (fa, sa)) if s != Status.PASSED), "")
        found.append(("status", f"{sa} on triton {va}, {sb} on triton {vb}: {why}", _status(fa), _status(fb)))
    if fa.compiled is not None and fb.compiled is not None:
        if fa.compiled != fb.compiled:
            ok, bad = (va, vb) if fa.compiled else (vb, va)
            error = fb.compile_error if fa.compiled else fa.compile_error
            built = (fa if fa.compiled else fb).built_status
            found.append(("compile", f"{claims.refused(mode)} triton {bad}; {claims.earned(mode, built)} triton {ok}: "
                          f"{error}", _compile_cell(fa, mode), _compile_cell(fb, mode)))
        elif not fa.compiled and fa.error_kind != fb.error_kind:
            found.append(("compile error", f"a different compile error on triton {vb} ({fb.error_kind}) than on "
                          f"triton {va} ({fa.error_kind}): {fb.compile_error}", _compile_cell(fa, mode),
                          _compile_cell(fb, mode)))
        else:
            for key, what in RESOURCES:
                old, new = fa.resources.get(key), fb.resources.get(key)
                if fa.compiled and _jump(old, new):
                    found.append((key, f"{what} {old} on triton {va} → {new} on triton {vb}",
                                  _compile_cell(fa, mode), _compile_cell(fb, mode)))
    return found


def _counts(kernel: str, cases: Mapping[str, Mapping[str, Facts]], a: str, b: str, va: str,
            vb: str) -> list[Divergence]:
    found = []
    suites = {s for per in cases.values() for f in per.values() for s in f.compiles}
    for suite in sorted(suites):
        # only where both versions built: a failed compile stops a launcher early, so its count says nothing
        common = [c for c, per in cases.items()
                  if a in per and b in per and suite in per[a].compiles and suite in per[b].compiles
                  and per[a].compiled is not False and per[b].compiled is not False]
        if not common:
            continue
        na, nb = (sum(cases[c][x].compiles[suite] for c in common) for x in (a, b))
        if na != nb:
            found.append(Divergence("version", kernel, None,
                                    f"{suite}: compile count {na} on triton {va}, {nb} on triton {vb} over "
                                    f"{len(common)} common case(s)",
                                    {a: f"{na} compiles / {len(common)} cases",
                                     b: f"{nb} compiles / {len(common)} cases"}))
    return found


def pair(a: Column, b: Column, facts: Mapping[str, Mapping[tuple[str, str], Facts]]) -> list[Divergence]:
    """Every version divergence between two columns of one backend, a on the older triton."""
    va, vb = str(triton_of(a)), str(triton_of(b))
    table: dict[str, dict[str, dict[str, Facts]]] = defaultdict(lambda: defaultdict(dict))
    for col in (a, b):
        for (kernel, case), f in facts[col.label].items():
            table[kernel][case][col.label] = f
    found: list[Divergence] = []
    for kernel in sorted(table):
        groups: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)
        for case in sorted(table[kernel]):
            per = table[kernel][case]
            if a.label in per and b.label in per:
                for check, what, cell_a, cell_b in case_changes(per[a.label], per[b.label], va, vb,
                                                                claims.tier_mode(a.backend, a.mode)):
                    groups[check].append((case, what, cell_a, cell_b))
        for hits in groups.values():
            case, what, cell_a, cell_b = hits[0]
            more = f" ({len(hits)} cases; e.g. this one)" if len(hits) > 1 else ""
            links = {}
            for col, f in ((a, table[kernel][case][a.label]), (b, table[kernel][case][b.label])):
                if f.repro:
                    links[col.label] = f"{col.link_prefix}{f.repro}"
            found.append(Divergence("version", kernel, case, what + more, {a.label: cell_a, b.label: cell_b}, links))
        found += _counts(kernel, table[kernel], a.label, b.label, va, vb)
    return found


def find_all(columns: Sequence[Column], records: Mapping[str, Sequence[Record]],
             stored: Mapping[tuple[str, str, str], Any] | None = None,
             perf_ratio: float = divergence.PERF_RATIO) -> list[Divergence]:
    """Backend divergences at each backend's main triton, plus version divergences, in KINDS order."""
    primary, spans = split_columns(columns)
    found = divergence.find(primary, records, stored, perf_ratio=perf_ratio)
    for cols in spans.values():
        facts = {c.label: divergence.gather(records.get(c.label, ())) for c in cols}
        for older, newer in itertools.pairwise(cols):
            found += pair(older, newer, facts)
    return sorted(found, key=lambda d: KINDS.index(d.kind))
