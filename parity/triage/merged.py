"""Triage at report time: every failing record's owner again, with every merged results dir as evidence.

It annotates the merged view the report renders and never writes a results dir: each dir's results.jsonl
(and its REPORT.md) keep the owners its own run decided.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import parity.triage.evidence as evidence
from parity.results import Owner, OwnerKind, Record, Status
from parity.triage.case import same_way_elsewhere
from parity.triage.decide import decide
from parity.triage.owner import make_owner, owner_of

Tagged = tuple[str, str | None, Record]  # (dir label, its compiler release, a record)


@dataclass
class MergedEvidence:
    """The Evidence (parity.triage.stage) of records already loaded, each tagged with its dir and release:
    tiers are compared at one release, and a release's bug that a newer one fixes says so."""

    tagged: list[Tagged]

    def __post_init__(self) -> None:
        self._release = {id(r): v for _, v, r in self.tagged}

    def version(self, record: Record) -> str | None:
        return self._release.get(id(record))

    def others(self, record: Record) -> Mapping[str, Record]:
        return evidence.others_in_dirs(record, self.version(record), self.tagged)

    def versions(self, record: Record) -> Mapping[str, Record]:
        return evidence.versions_in(record, self.version(record), [(v, r) for _, v, r in self.tagged])


def retriage(records: Iterable[Record], tagged: list[Tagged] | None = None) -> int:
    """Every failing record's owner again, now with the merged records as evidence (`tagged`; default: each
    record under its own tier). A tier limit found with the kernel's source at run time is kept unless other
    tiers show the kernel fails the same way. Changes `owner` in the given (merged, in-memory) records only;
    returns how many changed."""
    records = list(records)
    facts = MergedEvidence(tagged if tagged is not None else [(str(r.get("backend")), None, r) for r in records])
    changed = 0
    for record in records:
        before = owner_of(record)
        if before is None or record.get("status") == Status.INTERRUPTED:
            continue
        others, versions = facts.others(record), facts.versions(record)
        if not others and not versions:
            continue
        if before.limit:  # found with the kernel's source at run time, which the merged dirs lack
            same = same_way_elsewhere(record, others) if before.who is OwnerKind.TIER else []
            if not same:
                settled = _settled(record, before, others, facts)
                if settled is not None:
                    record["owner"] = settled
                    changed += 1
                continue
            why = (f"{record.get('backend')} and {', '.join(same)} fail the same way; the kernel is wrong beyond "
                   f"the tier's own limit ({before.limit})")
            verdict: Owner | None = make_owner(OwnerKind.AUTHOR, "kernel author", why)
        else:
            verdict = decide(record, others, "", None, version=facts.version(record), versions=versions)
        if verdict is None:
            continue
        if before.who is OwnerKind.LIBRARY and verdict.who is OwnerKind.AUTHOR:
            verdict = replace(verdict, who=OwnerKind.LIBRARY, name=before.name)
        if before.who is OwnerKind.LIBRARY and verdict.provisional:
            continue
        if verdict.as_json() != before.as_json():
            record["owner"] = verdict
            changed += 1
    return changed


def _settled(record: Record, before: Owner, others: Mapping[str, Record], facts: MergedEvidence) -> Owner | None:
    """A provisional limit the merged dirs now settle: the same limit, decided again with their evidence (the
    record's source facts stand for its source), no longer provisional; else None (the run's verdict stands)."""
    if not before.provisional:
        return None
    again = decide(record, others, "", None, version=facts.version(record), versions=facts.versions(record))
    return again if again is not None and again.limit == before.limit and not again.provisional else None


def annotate(records: Mapping[str, list[Record]], where: Mapping[str, Path]) -> int:
    """retriage over every merged dir's loaded records (label -> records, label -> its dir, for its release).
    The records are the report's own copies: no results dir is written."""
    tagged: list[Tagged] = [(label, evidence.dir_version(where[label]), r)
                            for label, recs in records.items() for r in recs]
    return retriage([r for recs in records.values() for r in recs], tagged)
