"""Findings: failing (or expected) records grouped, so identical failures read as one row.

A group is one kernel on one results dir with one outcome, one owner and one key line (the
compiler's own line that says what went wrong); its configs are counted, not repeated. Pure
functions of records; the key line is picked from the message, never a source or array dump.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from parity.findings import finding as one
from parity.findings.markdown import clip
from parity.reasons import key_line
from parity.results import Record, Status
from parity.triage.drafts import OWNER_WORDS, ShownOwner, finding_of, owner_of, owner_words

BAD = (Status.FAILED, Status.ERROR, Status.CRASHED, Status.XPASSED)
UNSCORED = "fails the fp64 check, as declared (not scored)"
_KNOWN_IN_REASON = re.compile(r"known divergence: (?P<reason>.+?) \((?P<link>https?://[^\s)]+)\)")


# what differs between two occurrences of one failure: the xdist worker that ran it, a memory address
_WORKER_ID = re.compile(r"\bgw\d+\b")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def grouping_key(line: str) -> str:
    """A key line with worker ids and addresses masked, so one bug hit in two workers is one finding."""
    return _ADDRESS.sub("0x…", _WORKER_ID.sub("gw…", line))


def known_of(record: Mapping[str, Any]) -> dict[str, str] | None:
    """The record's known divergence {reason, link}: the field, or (results written before every tier
    carried the field) the `known divergence: <reason> (<link>)` note in its reason."""
    known = record.get("known_divergence")
    if known:
        return {"reason": str(known.get("reason") or ""), "link": str(known.get("link") or "")}
    found = _KNOWN_IN_REASON.search(str(record.get("reason") or ""))
    return {"reason": found["reason"], "link": found["link"]} if found else None


def observed(record: Mapping[str, Any]) -> str:
    """What the case did, without the known-divergence note put in front of it."""
    reason = str(record.get("reason") or "")
    return reason.partition("; observed: ")[2] or reason


def message_of(record: Mapping[str, Any]) -> str:
    compile_ = record.get("compile") or {}
    return str(compile_.get("message") or compile_.get("launch_error") or observed(record))


@dataclass
class Finding:
    """Identical outcomes of one kernel on one results dir."""

    kernel: str
    column: str
    outcome: str  # "failed", "expected", ...
    owner: ShownOwner
    key: str
    cases: list[str] = field(default_factory=list)
    repro: str | None = None  # one repro dir of the group, relative to the report
    known: dict[str, str] | None = None
    total: int = 0  # cases of the kernel on this column
    fit: dict[str, Any] | None = None  # an overflow's configs that fit (parity.fit), from its first record with one
    finding: one.Finding | None = None  # its first record's Finding (parity.findings): the draft its row links

    @property
    def ident(self) -> tuple[Any, ...]:
        return (self.kernel, self.column, self.outcome, self.owner.who, self.key)

    @property
    def draft(self) -> str | None:
        name = self.finding.link if self.finding else None
        return f"{self.repro}/{name}" if self.repro and name else None  # undecided: the repro dir only


SCORED_SUITES = (None, "accuracy", "compile")
SPECIALIZATION = "specialization"


def scored(record: Mapping[str, Any]) -> bool:
    """Whether the verdict judges the kernel by this record: every case of the accuracy and compile suites,
    and a specialization sweep that failed (a recompile storm is the kernel's or its library's finding;
    a sweep that passed adds no case, one that raised repeats what the compile suite says)."""
    suite = record.get("suite")
    return suite in SCORED_SUITES or (suite == SPECIALIZATION and record.get("status") == Status.FAILED)


def _outcome(record: Record | Mapping[str, Any]) -> str | None:
    status = record["status"]
    if status == Status.XFAILED:
        return "expected"
    return str(status) if status in BAD else None


def group(records: Iterable[Mapping[str, Any]], column: str, link_prefix: str = "") -> list[Finding]:
    """The failing and expected records of one column as findings, in kernel order."""
    out: dict[tuple[Any, ...], Finding] = {}
    totals: dict[str, int] = {}
    for r in records:
        if not scored(r) or r["status"] == Status.SKIPPED:
            continue
        totals[r["kernel"]] = totals.get(r["kernel"], 0) + 1
        outcome = _outcome(r)
        if outcome is None:
            continue
        owner, known = owner_of(r), known_of(r) if outcome == "expected" else None
        # an expected numeric failure is not scored: its error figures are never shown
        key = UNSCORED if outcome == "expected" and r.get("metrics") else grouping_key(key_line(message_of(r)))
        ident = (r["kernel"], outcome, owner.who, owner.name, key, (known or {}).get("link"))
        f = out.get(ident)
        if f is None:
            f = out[ident] = Finding(r["kernel"], column, outcome, owner, key, known=known, finding=finding_of(r))
        f.cases.append(str(r["case"]))
        if f.repro is None and r.get("repro"):
            f.repro = f"{link_prefix}{r['repro']}"
        if f.fit is None and r.get("fit"):
            f.fit = r["fit"]
    for f in out.values():
        f.total = totals.get(f.kernel, len(f.cases))
    return sorted(out.values(), key=lambda f: (f.kernel, f.outcome == "expected", -len(f.cases)))


def cases_text(f: Finding, limit: int = 70) -> str:
    """`3 of 16: BT=16, BT=32, …` — the count, and as many case ids as fit."""
    head = f"{len(f.cases)} of {f.total}" if f.total else str(len(f.cases))
    if len(f.cases) == f.total and f.total > 1:
        return f"all {f.total}"
    shown = clip(", ".join(sorted(f.cases)), limit)
    return f"{head}: {shown}"


# the words and helpers the report's modules read here, from the floor the drafts share (parity.findings)
__all__ = ["BAD", "OWNER_WORDS", "UNSCORED", "Finding", "cases_text", "clip", "group", "grouping_key", "key_line",
           "known_of", "message_of", "observed", "owner_of", "owner_words", "scored"]
