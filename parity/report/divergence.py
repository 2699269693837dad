"""Divergences between results dirs (backends, machines): pure functions from records to findings.

A divergence is a case (or a kernel) where the columns disagree:

- numeric: computes the fp64 answer on one column, fails against fp64 on another;
- compile: builds on one column only (UB overflow included);
- launch: launches on one column, is refused at launch on another (e.g. a grid over 65535);

Each column is named with the words its own record earns (parity.report.claims): "compiles on" only a compile
tier whose record passed, "computes the fp64 answer on" only a tier that runs the kernel and passed.
- specialization: a kernel's compile counts differ over the same cases;
- cross-output: both pass against fp64, but their outputs differ from each other beyond tolerance;
- perf: the speed (relative to the torch baseline where there is one) differs by more than a ratio;
- version: one backend on two triton versions builds or behaves differently (parity/report/versions.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parity.backends import backend_class
from parity.report import claims
from parity.results import Record, Status

KINDS = ("numeric", "compile", "launch", "specialization", "version", "cross-output", "perf")
RUN_MODES = ("run", "interpret")
UNRANKED = 1000  # after every tier with a report_rank
NUMERIC_PASS = (Status.PASSED, Status.XPASSED)
NUMERIC_FAIL = (Status.FAILED, Status.XFAILED)
PERF_RATIO = 2.0
# errors raised when a kernel is launched rather than compiled (launch limits, argument checks)
LAUNCH_PATTERNS = re.compile(r"grid should be less than|grid.*(too large|exceed|limit)|coreDim|launch failed|"
                             r"invalid configuration argument|too many resources requested for launch", re.I)
# Python's own exceptions from a launcher or the interpreter: "unsupported operand" is no compile error
RUNTIME_PATTERNS = re.compile(r"^\s*(TypeError|AttributeError|IndexError|KeyError|NameError|ZeroDivisionError)\b")
COMPILE_PATTERNS = re.compile(r"CompilationError|ub overflow|bishengir|ptxas|MLIR|lowering|"
                              r"out of resource|unsupported|compile", re.I)


@dataclass(frozen=True)
class Column:
    """One results dir: a backend on one machine."""

    label: str
    backend: str
    mode: str
    env: Mapping[str, Any]
    link_prefix: str = ""  # where the dir lies relative to the report, for repro links


@dataclass
class Facts:
    """What one column says about one case, gathered over its suites."""

    status: Status | None = None  # the accuracy verdict (run/interpret records)
    record: Record | None = None
    compiled: bool | None = None
    built_status: Status | None = None  # the status of the record that says whether it compiled (what it earns)
    compile_error: str | None = None
    error_kind: str | None = None  # of a failed compile (compile tiers)
    resources: dict[str, int] = field(default_factory=dict)  # n_regs, shared_bytes of a cuda compile
    launch_error: str | None = None
    compiles: dict[str, int] = field(default_factory=dict)  # suite -> count
    perf_ms: float | None = None
    baseline_ms: float | None = None
    roof_pct: float | None = None  # share of the machine's own measured roofline (perf pass)
    repro: str | None = None
    known: str | None = None  # the declared known divergence of a failed compile (compile tiers)


@dataclass(frozen=True)
class Divergence:
    kind: str
    kernel: str
    case: str | None
    summary: str
    cells: dict[str, str]  # column label -> what that column saw
    repros: dict[str, str] = field(default_factory=dict)  # column label -> repro path (relative to the report)
    known: str | None = None  # a declared known divergence explains it


def column_labels(backends_and_dirs: Sequence[tuple[str, str]]) -> list[str]:
    """Unique labels for (backend, results dir name): the backend alone, or backend@dir for every
    column of a backend that two dirs share, so one table never mixes machine and dir names."""
    counts = Counter(backend for backend, _ in backends_and_dirs)
    labels: list[str] = []
    for backend, dirname in backends_and_dirs:
        # the backend's own dir keeps its name; a matrix dir already says what it is: interpret@triton-3.2.0
        label = backend if counts[backend] == 1 or dirname == backend else \
            dirname if dirname.startswith(f"{backend}@") else f"{backend}@{dirname}"
        n = 2
        while label in labels:  # two dirs of the same name from different places
            label, n = f"{backend}@{dirname}-{n}", n + 1
        labels.append(label)
    return labels


def order_key(column: Column) -> tuple[int, str]:
    """A column's place among DIVERGENCE.md's: its tier's report_rank, unranked tiers after the ranked ones."""
    rank = backend_class(column.backend).report_rank
    return (rank if rank is not None else UNRANKED, column.label)


def classify_error(reason: str | None) -> str:
    """'launch', 'compile' or 'runtime' for an errored record, from its message.

    Only a message that says so is a refused launch or a failed compile: anything else (an
    interpreter TypeError, a Python exception in a launcher) is an error while running.
    """
    text = reason or ""
    if RUNTIME_PATTERNS.search(text):
        return "runtime"
    if LAUNCH_PATTERNS.search(text):
        return "launch"
    return "compile" if COMPILE_PATTERNS.search(text) else "runtime"


def _float(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def gather(records: Iterable[Record]) -> dict[tuple[str, str], Facts]:
    """(kernel, case) -> Facts for one column."""
    out: dict[tuple[str, str], Facts] = defaultdict(Facts)
    for r in records:
        f = out[(r["kernel"], r["case"])]
        status, mode, suite = r["status"], r.get("mode"), r.get("suite") or "accuracy"
        if r.get("repro"):
            f.repro = r["repro"]
        if mode in RUN_MODES and suite == "accuracy" and status != Status.SKIPPED:
            f.status, f.record = status, r
            if status == Status.ERROR:
                kind = classify_error(r.get("reason"))
                if kind == "launch":
                    f.launch_error = r.get("reason")
                elif kind == "compile":
                    f.compiled, f.compile_error = False, r.get("reason")
            elif mode == "run" and status in (*NUMERIC_PASS, *NUMERIC_FAIL):
                f.compiled = True  # it ran, so it compiled
            f.built_status = status
        c = r.get("compile")
        if c and status != Status.SKIPPED:  # a config the Autotuner drops while another fits is no failure
            if c.get("ok") is False:
                if status == Status.XFAILED:
                    from parity.report.findings import known_of

                    f.known = (known_of(r) or {}).get("reason") or f.known
                f.compiled, f.error_kind = False, c.get("error_kind") or "error"
                f.compile_error = f"{f.error_kind}: {c.get('message') or ''}".strip()
                if c.get("ub_bits"):
                    f.compile_error += f" (UB needs {c['ub_bits']} bits of {c.get('ub_limit_bits')})"
            elif c.get("ok") and f.compiled is None:
                f.compiled = True
            f.built_status = status if f.built_status is None or status not in claims.PASSED else f.built_status
            f.resources.update({k: int(c[k]) for k in ("n_regs", "shared_bytes") if c.get(k) is not None})
            if c.get("launch_error"):
                f.launch_error = c["launch_error"]
        elif mode == "compile" and status == Status.ERROR:
            f.compiled, f.compile_error, f.built_status = False, r.get("reason"), status
        if (n := r.get("compiles")) is not None:
            f.compiles[suite] = f.compiles.get(suite, 0) + int(n)
        p = r.get("perf") or {}
        if _float(p.get("ms")):
            f.perf_ms, f.baseline_ms = _float(p.get("ms")), _float(p.get("baseline_ms"))
            f.roof_pct = _float(p.get("pct_of_roofline"))
    return dict(out)


def _link(column: Column, facts: Facts) -> str | None:
    return f"{column.link_prefix}{facts.repro}" if facts.repro else None


def _reason(f: Facts) -> str | None:
    return f.record.get("reason") if f.record is not None else None


def _status_cell(f: Facts) -> str:
    m = (f.record.get("metrics") if f.record is not None else None) or {}
    err = f" err_ratio {float(m['err_ratio']):.3g}" if m.get("err_ratio") is not None else ""
    return f"{f.status}{err}"


def _mode(column: Column) -> str:
    return claims.tier_mode(column.backend, column.mode)


def _launch_status(f: Facts) -> Status | None:
    """What a launched column's record says: its fp64 verdict where it ran, its compile record's status else."""
    return f.status if f.status in (*NUMERIC_PASS, *NUMERIC_FAIL) else f.built_status


def _built_cell(column: Column, f: Facts) -> str:
    """One column's cell of a compile or launch divergence: what its record shows, in the words it earns."""
    if f.compiled is False:
        return f"failed: {f.compile_error}"
    if _mode(column) != "compile":
        return _status_cell(f) if f.status else "ran"
    if f.built_status in claims.PASSED:
        return "compiled"
    return f"compile ok, status {f.built_status} for another reason"  # (never ending on "failed": a key line)


def numeric(kernel: str, case: str, per: Mapping[str, tuple[Column, Facts]]) -> Divergence | None:
    good = [c for c, (_, f) in per.items() if f.status in NUMERIC_PASS]
    bad = [c for c, (_, f) in per.items() if f.status in NUMERIC_FAIL]
    if not good or not bad:
        return None
    known = [_reason(per[c][1]) for c in bad if per[c][1].status == Status.XFAILED]
    reasons = [str(reason) for c in bad if per[c][1].status == Status.FAILED and (reason := _reason(per[c][1]))]
    summary = claims.sentence([(claims.earned(_mode(per[c][0]), per[c][1].status), c) for c in good],
                              [(claims.earned(_mode(per[c][0]), per[c][1].status), c) for c in bad]) \
        + (f": {reasons[0]}" if reasons else "")
    return Divergence("numeric", kernel, case, summary,
                      {c: _status_cell(f) for c, (_, f) in per.items() if f.status},
                      {c: link for c, (col, f) in per.items() if (link := _link(col, f))},
                      known=known[0] if known and len(known) == len(bad) else None)


def compile_divergence(kernel: str, case: str, per: Mapping[str, tuple[Column, Facts]]) -> Divergence | None:
    ok = [c for c, (_, f) in per.items() if f.compiled is True]
    bad = [c for c, (_, f) in per.items() if f.compiled is False]
    if not ok or not bad:
        return None
    first = per[bad[0]][1].compile_error or ""
    known = [per[c][1].known for c in bad]
    said = claims.sentence([(claims.earned(_mode(per[c][0]), per[c][1].built_status), c) for c in ok],
                           [(claims.refused(_mode(per[c][0])), c) for c in bad], failing_first=True)
    return Divergence("compile", kernel, case, f"{said}: {first}",
                      {c: _built_cell(col, f) for c, (col, f) in per.items() if f.compiled is not None},
                      {c: link for c, (col, f) in per.items() if (link := _link(col, f)) and f.compiled is False},
                      known=known[0] if all(known) else None)


def launch_divergence(kernel: str, case: str, per: Mapping[str, tuple[Column, Facts]]) -> Divergence | None:
    refused = [c for c, (_, f) in per.items() if f.launch_error]
    launched = [c for c, (col, f) in per.items()
                if not f.launch_error and (f.status in (*NUMERIC_PASS, *NUMERIC_FAIL) or
                                           (col.mode == "compile" and f.compiled))]
    if not refused or not launched:
        return None
    said = claims.sentence([(claims.earned(_mode(per[c][0]), _launch_status(per[c][1])), c) for c in launched],
                           [("refused at launch on", c) for c in refused], failing_first=True)
    return Divergence("launch", kernel, case, f"{said}: {per[refused[0]][1].launch_error}",
                      {c: f"refused: {f.launch_error}" if f.launch_error else _built_cell(col, f)
                       for c, (col, f) in per.items() if c in refused or c in launched},
                      {c: link for c, (col, f) in per.items() if (link := _link(col, f)) and c in refused})


def specialization(kernel: str, cases: Mapping[str, Mapping[str, tuple[Column, Facts]]]) -> list[Divergence]:
    """Per suite: a kernel's total compiles over the cases every counting column ran."""
    found = []
    suites = {s for per in cases.values() for _, f in per.values() for s in f.compiles}
    for suite in sorted(suites):
        counting = {c for per in cases.values() for c, (_, f) in per.items() if suite in f.compiles}
        common = [case for case, per in cases.items()
                  if all(c in per and suite in per[c][1].compiles for c in counting)]
        if len(counting) < 2 or not common:
            continue
        totals = {c: sum(cases[case][c][1].compiles[suite] for case in common) for c in sorted(counting)}
        if len(set(totals.values())) > 1:
            found.append(Divergence(
                "specialization", kernel, None,
                f"{suite}: compile counts differ over {len(common)} common case(s): "
                + ", ".join(f"{c} {n}" for c, n in totals.items()),
                {c: f"{n} compiles / {len(common)} cases" for c, n in totals.items()}))
    return found


def perf(kernel: str, case: str, per: Mapping[str, tuple[Column, Facts]], ratio: float) -> Divergence | None:
    timed = {c: ms for c, (_, f) in per.items() if (ms := f.perf_ms)}
    if len(timed) < 2:
        return None
    # each figure kept where it is set (non-zero), so a column holds every one of them or the kind is not used
    roofs = {c: roof for c, (_, f) in per.items() if c in timed and (roof := f.roof_pct)}
    bases = {c: base for c, (_, f) in per.items() if c in timed and (base := f.baseline_ms)}
    with_roof = len(roofs) == len(timed)
    with_base = not with_roof and len(bases) == len(timed)
    # on different hardware only a share of each machine's own roof, or the speed relative to its
    # own torch baseline, compares
    score = {c: (roofs[c] if with_roof else bases[c] / ms if with_base else 1.0 / ms) for c, ms in timed.items()}
    hi, lo = max(score, key=score.__getitem__), min(score, key=score.__getitem__)
    if score[hi] / score[lo] <= ratio:
        return None
    if with_roof:
        return Divergence("perf", kernel, case, f"share of own roofline differs {score[hi] / score[lo]:.1f}x: "
                          f"{hi} vs {lo}", {c: f"{ms:.4g} ms, {roofs[c]:.0f}% of its roofline"
                                            for c, ms in timed.items()})
    what = "speedup over torch" if with_base else "speed"
    return Divergence("perf", kernel, case, f"{what} differs {score[hi] / score[lo]:.1f}x: {hi} vs {lo}",
                      {c: f"{ms:.4g} ms" + (f" ({bases[c] / ms:.2f}x torch)" if with_base else "")
                       for c, ms in timed.items()})


def cross_output_diff(a: Any, b: Any, tolerance: Mapping[str, Any]) -> str | None:
    """Why two stored outputs (outputs_store.StoredCase) differ beyond tolerance, or None."""
    if a.input_digest and b.input_digest and a.input_digest != b.input_digest:
        return "inputs differ (input digests do not match), so the outputs cannot be compared"
    rtol, atol = float(tolerance.get("rtol") or 0.0), float(tolerance.get("atol") or 0.0)
    max_ratio = tolerance.get("max_err_ratio")
    for name in sorted(set(a.outputs) & set(b.outputs)):
        oa, ob = a.outputs[name], b.outputs[name]
        if oa.shape != ob.shape:
            return f"{name}: shapes {oa.shape} and {ob.shape}"
        if oa.digest and oa.digest == ob.digest:
            continue
        va, ia = oa.values()
        vb, ib = ob.values()
        if ia is not None and ib is not None and not np.array_equal(ia, ib):
            return f"{name}: sampled at different positions; re-run both with the same parity version"
        va, vb = va.astype(np.float64), vb.astype(np.float64)
        both_nan = np.isnan(va) & np.isnan(vb)
        finite = np.isfinite(va) & np.isfinite(vb)
        nonfinite = int((~finite & ~both_nan & ~(va == vb)).sum())
        diff = np.abs(va - vb)[finite]
        bound = atol + rtol * np.abs(vb[finite])
        n_bad = int((diff > bound).sum()) + nonfinite
        rms = float(np.sqrt(np.mean(vb[finite] ** 2))) if finite.any() else 0.0
        ratio = float(np.sqrt(np.mean(diff ** 2))) / rms if rms > 0 else 0.0
        over = (ratio > float(max_ratio) or nonfinite > 0) if max_ratio is not None else n_bad > 0
        if over:
            where = "of the sampled" if ia is not None else "of"
            return (f"{name}: {n_bad} {where} {va.size} elements differ beyond atol + rtol·|b| "
                    f"(max |a-b| {float(diff.max()) if diff.size else math.nan:.3g}, rms ratio {ratio:.3g})")
    return None


def cross_output(kernel: str, case: str, per: Mapping[str, tuple[Column, Facts]],
                 stored: Mapping[tuple[str, str, str], Any]) -> list[Divergence]:
    """Every passing column against the first passing one, on their stored outputs. A column that passed within a
    correct kernel's rounding (parity.run.rounding) is left out: two such answers may differ by the sum of their
    rounding, which the elementwise tolerance does not allow and the arithmetic does."""
    passing = [c for c, (_, f) in per.items() if f.status == Status.PASSED and (c, kernel, case) in stored
               and not (f.record is not None and (f.record.get("rounding") or {}).get("judged"))]
    found = []
    for other in passing[1:]:
        base = passing[0]
        base_record = per[base][1].record
        tol = (base_record.get("tolerance") if base_record is not None else None) or {}
        why = cross_output_diff(stored[(other, kernel, case)], stored[(base, kernel, case)], tol)
        if why:
            found.append(Divergence("cross-output", kernel, case, f"{other} vs {base}: {why}",
                                    {base: "passed (baseline)", other: "passed, differs"}))
    return found


def find(columns: Sequence[Column], records: Mapping[str, Sequence[Record]],
         stored: Mapping[tuple[str, str, str], Any] | None = None, perf_ratio: float = PERF_RATIO) -> list[Divergence]:
    """Every divergence across the columns, grouped by kind in KINDS order."""
    cols = sorted(columns, key=order_key)
    facts = {c.label: gather(records.get(c.label, ())) for c in cols}
    table: dict[str, dict[str, dict[str, tuple[Column, Facts]]]] = defaultdict(lambda: defaultdict(dict))
    for col in cols:
        for (kernel, case), f in facts[col.label].items():
            table[kernel][case][col.label] = (col, f)
    found: list[Divergence] = []
    for kernel in sorted(table):
        for case in sorted(table[kernel]):
            per = table[kernel][case]
            if len(per) < 2:
                continue
            for check in (numeric, compile_divergence, launch_divergence):
                d = check(kernel, case, per)
                if d:
                    found.append(d)
            d = perf(kernel, case, per, perf_ratio)
            if d:
                found.append(d)
            found += cross_output(kernel, case, per, stored or {})
        found += specialization(kernel, table[kernel])
    return sorted(found, key=lambda d: KINDS.index(d.kind))
