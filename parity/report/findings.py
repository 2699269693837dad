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

from parity.reasons import key_line
from parity.triage.owner import SPEC_AUTHOR, fixed_in, vendor_note
from parity.triage.precision import LIMIT as PRECISION_LIMIT

BAD = ("failed", "error", "crashed", "xpassed")
UNSCORED = "fails the fp64 check, as declared (not scored)"
_KNOWN_IN_REASON = re.compile(r"known divergence: (?P<reason>.+?) \((?P<link>https?://[^\s)]+)\)")


# a cut that ends at an exception's name keeps its name and loses its text
_NAMES_ONLY = re.compile(r"\b\w*(?:Error|Exception)$")


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut after a sentence (or a clause, or a word), never mid-word."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    for stop in (". ", "; ", " / ", ": ", ", ", " ", ","):  # "," last: between a case id's parameters
        cut = head.rfind(stop)
        kept = head[: cut + (1 if stop.strip() in (".", ";") else 0)].rstrip(" ,:")
        if cut > limit // 3 and not _NAMES_ONLY.search(kept):  # "raised TypeError …" would drop what it says
            return kept + " …"
    return head + "…"


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


OWNER_WORDS = {
    "author": "needs a change in the kernel",
    "library": "{name} finding",
    "triton": "Triton bug",
    "triton-ascend": "triton-ascend bug",
    "tier": "limit of this tier ({name}), not the kernel's",
    "environment": "environment ({name}), not the kernel's",
    "tolerance": "tolerance tighter than a correct kernel's rounding, not the kernel's",
    "random": "a different random stream, by design: not a bug, not the kernel's",
    "bundle": "damaged replay bundle, not the kernel's: re-record it",
}
SPEC_WORDS = "needs a change in the spec's reference, not the kernel"  # the author owner named SPEC_AUTHOR
# the author owner of a TF32 dot (the limit cuda-tf32-dot): a choice the kernel makes, not a fault in it
PRECISION_WORDS = "precision mode the kernel chose (fp32 dots as TF32 on NVIDIA)"
DRAFTS = {"author": "AUTHOR.md", "library": "ISSUE.md", "triton": "ISSUE.md", "triton-ascend": "ISSUE.md",
          "tier": "TIER.md", "environment": "TIER.md", "tolerance": "TIER.md", "random": "TIER.md",
          "bundle": "BUNDLE.md"}


def owner_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record's owner (parity.triage's `owner` field); without one, what parity.triage.library_rule and the
    record say today: the library's finding, a diagnosed kernel mistake, else undecided."""
    owner = record.get("owner")
    if owner:
        return dict(owner)
    lib = record.get("finding_of")
    if lib:
        return {"who": "library", "name": lib.get("name", "the library"), "evidence": lib.get("why", ""),
                "provisional": False, "settle": None}
    diagnosis = record.get("diagnosis")
    if diagnosis:
        return {"who": "author", "name": "kernel author", "evidence": diagnosis.get("what", ""),
                "provisional": False, "settle": None, "line": diagnosis.get("line")}
    return {"who": None, "name": "", "evidence": "", "provisional": True, "settle": None}


def owner_words(owner: Mapping[str, Any]) -> str:
    who = owner.get("who")
    if who is None:
        return "owner undecided"
    words = SPEC_WORDS if owner.get("name") == SPEC_AUTHOR else PRECISION_WORDS if owner.get("limit") == \
        PRECISION_LIMIT else OWNER_WORDS.get(who, str(who)).format(name=owner.get("name") or who)
    if fixed_in(owner):
        words += f", fixed in {fixed_in(owner)}; upgrade"
    if owner.get("line"):
        words += f", {owner['line']}"
    if owner.get("also"):
        words += f" (drafts also for {', '.join(owner['also'])})"
    if owner.get("provisional"):
        words += " (provisional" + (f"; settled by {owner['settle']}" if owner.get("settle") else "") + ")"
    return words


@dataclass
class Finding:
    """Identical outcomes of one kernel on one results dir."""

    kernel: str
    column: str
    outcome: str  # "failed", "expected", ...
    owner: dict[str, Any]
    key: str
    cases: list[str] = field(default_factory=list)
    repro: str | None = None  # one repro dir of the group, relative to the report
    known: dict[str, str] | None = None
    total: int = 0  # cases of the kernel on this column
    fit: dict[str, Any] | None = None  # an overflow's configs that fit (parity.fit), from its first record with one

    @property
    def ident(self) -> tuple[Any, ...]:
        return (self.kernel, self.column, self.outcome, self.owner.get("who"), self.key)

    @property
    def draft(self) -> str | None:
        name = "TIER.md" if vendor_note(self.owner) else DRAFTS.get(self.owner.get("who") or "")
        return f"{self.repro}/{name}" if self.repro and name else None  # undecided: the repro dir only


SCORED_SUITES = (None, "accuracy", "compile")


def scored(record: Mapping[str, Any]) -> bool:
    """Whether the verdict judges the kernel by this record: every case of the accuracy and compile suites,
    and a specialization sweep that failed (a recompile storm is the kernel's or its library's finding;
    a sweep that passed adds no case, one that raised repeats what the compile suite says)."""
    suite = record.get("suite")
    return suite in SCORED_SUITES or (suite == "specialization" and record.get("status") == "failed")


def _outcome(record: Mapping[str, Any]) -> str | None:
    status = record["status"]
    if status == "xfailed":
        return "expected"
    return status if status in BAD else None


def group(records: Iterable[Mapping[str, Any]], column: str, link_prefix: str = "") -> list[Finding]:
    """The failing and expected records of one column as findings, in kernel order."""
    out: dict[tuple[Any, ...], Finding] = {}
    totals: dict[str, int] = {}
    for r in records:
        if not scored(r) or r["status"] == "skipped":
            continue
        totals[r["kernel"]] = totals.get(r["kernel"], 0) + 1
        outcome = _outcome(r)
        if outcome is None:
            continue
        owner, known = owner_of(r), known_of(r) if outcome == "expected" else None
        # an expected numeric failure is not scored: its error figures are never shown
        key = UNSCORED if outcome == "expected" and r.get("metrics") else grouping_key(key_line(message_of(r)))
        ident = (r["kernel"], outcome, owner.get("who"), owner.get("name"), key, (known or {}).get("link"))
        f = out.get(ident)
        if f is None:
            f = out[ident] = Finding(r["kernel"], column, outcome, owner, key, known=known)
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
