"""A failing case as the owner rules read it (parity.triage.rules): the record's own signs (a failure, a crash while
the kernel ran, its error's signature) and `CaseEvidence`, what the rules read beside it, gathered once."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from parity.reasons import key_line
from parity.results import OwnerKind, Record, Status
from parity.triage.evidence import PASSING
from parity.triage.limit_fits import failure_text, is_numeric
from parity.triage.owner import VENDORS, owner_of
from parity.triage.tiers import computes, family, interpreted

FAILING = (Status.FAILED, Status.ERROR, Status.CRASHED, Status.XFAILED)
# owners whose verdict on another tier's record explains its failure by that tier's own tool (explained)
EXPLAINING = (OwnerKind.TIER, OwnerKind.ENVIRONMENT, OwnerKind.RANDOM)
SIGNATURE_MIN = 24  # a shorter signature inside a longer one is too generic to name the same error
_EXC_PREFIX = re.compile(r"^(?:[\w.]+\.)?\w+(?:Error|Exception):\s*")
_AT_LOC = re.compile(r"^at \d+:\d+:\s*")


@dataclass(frozen=True)
class CaseEvidence:
    """What every rule reads beside the record: the same case on other tiers (`others`: tier -> its record), the
    kernel's source, and what they say, read once before any rule runs."""

    others: Mapping[str, Record]
    source: str
    tier: str  # the record's own tier
    comp: Mapping[str, Any]  # the record's one compile (a compile tier's), {} where none
    kind: str | None  # the error's kind: the compile's, else the record's own
    text: str  # the reason and compile messages (parity.triage.limit_fits.failure_text)
    # another compiler, or the reference tier, failing the same way: evidence against the kernel (two tiers of one
    # compiler failing alike are not: they share its frontend)
    failing_same: tuple[str, ...]
    passing: tuple[str, ...]  # the other tiers that pass the case

    @classmethod
    def of(cls, record: Record, others: Mapping[str, Record], source: str) -> CaseEvidence:
        comp = record.get("compile") or {}
        return cls(others, source, str(record.get("backend")), comp, comp.get("error_kind") or record.get("error_kind"),
                   failure_text(record), tuple(same_way_elsewhere(record, others)),
                   tuple(sorted(t for t, r in others.items() if passes(r))))


def is_failing(record: Record) -> bool:
    return record.get("status") in FAILING


def passes(record: Record) -> bool:
    return record.get("status") in PASSING


def where_words(record: Record) -> str:
    """Where the worst element sits, for an evidence line ('' where the metrics do not say)."""
    m = record.get("metrics") or {}
    return f" (worst at {m['worst_index']})" if m.get("worst_index") is not None else ""


def key(text: str) -> str:
    """The message's key line, for one-line evidence."""
    return key_line(text)[:160]


def same_way(mine: Record, other: Record) -> bool:
    """Both give wrong values, or both fail before any value with the same error (error_signature): two
    different errors are two findings, and counting them as one blamed the kernel for two tools' bugs."""
    if not is_failing(other) or other.get("status") == Status.XFAILED:
        return False
    if is_numeric(mine) or is_numeric(other):
        return is_numeric(mine) and is_numeric(other)
    a, b = error_signature(mine), error_signature(other)
    return bool(a and b) and (a == b or (min(len(a), len(b)) >= SIGNATURE_MIN and (a in b or b in a)))


def error_signature(record: Record) -> str:
    """What an error says, comparable across tiers: its key line without the exception's class (the interpreter
    raises the frontend's message bare, a compiler wraps it), source positions, numbers, case and spacing;
    '' where there is no message (a dead worker)."""
    line = key(failure_text(record)).strip()
    for _ in range(3):  # CompilationError: at 3:20: ValueError: ...
        line = _AT_LOC.sub("", _EXC_PREFIX.sub("", line)).strip()
    line = re.sub(r"0x[0-9a-f]+|\d+", "#", line.lower())
    return " ".join(line.split())


def same_way_elsewhere(record: Record, others: Mapping[str, Record]) -> list[str]:
    """The tiers whose record fails as this one does and counts as evidence against the kernel: another
    compiler, or the reference tier (two tiers of one compiler failing alike share its frontend)."""
    tier = str(record.get("backend"))
    return sorted(t for t, r in others.items() if same_way(record, r) and not explained(r)
                  and (family(t) != family(tier) or (interpreted(t) or interpreted(tier))))


def explained(record: Record) -> bool:
    """A record whose failure its own tool explains (a tier limit, a settled vendor verdict) says nothing
    about the kernel."""
    owner = owner_of(record)
    return owner is not None and (owner.who in EXPLAINING or (owner.who in VENDORS and not owner.provisional))


def died_running(record: Record) -> bool:
    """A crash on a tier that runs the kernel, outside any compile (a compiler's own abort has compile evidence)."""
    comp = record.get("compile") or {}
    return record.get("status") == Status.CRASHED and computes(str(record.get("backend"))) and not comp.get("message")


def failed_at_run_time(record: Record) -> bool:
    """Wrong values, or a process that died running the kernel: a compile tier's pass is no evidence against it."""
    return is_numeric(record) or died_running(record)


def comp_stage(record: Record) -> str | None:
    stage: str | None = (record.get("compile") or {}).get("stage_reached")
    return stage


def oob_stores(record: Record) -> list[str]:
    """The unmasked tl.store lines behind the red-zone writes a record found (parity.run.redzone); a write with no
    unmasked store in sight (a lowering that drops a mask) is left to the other rules."""
    oob = record.get("oob") or {}
    writes = oob.get("writes") or []  # a store the red zone ties to the argument it caught first (its `accesses`)
    found = list(dict.fromkeys([*(a["where"] for w in writes for a in w.get("accesses") or []),
                                *(line for w in writes for line in w.get("unmasked_stores") or [])]))
    return found + list(oob.get("unmasked") or [])  # memcheck's invalid accesses (parity.run.sanitize)
