"""The triage stage: one call per record, after the run's evidence of its case is in, which never raises.

It settles a case the run's interruption cut, applies the library rule to a failing library kernel, decides
the owner (parity.triage.decide) from the evidence it is handed (an `Evidence`: the same case on other tiers
and releases) and the case's code, and states what a tier limit means for the record's status. The repro
stage and the report read `record["owner"]` afterwards; neither decides an owner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import parity.triage.evidence as evidence
import parity.triage.interrupt as interrupt
import parity.triage.library_rule as library_rule
import parity.triage.source_facts as source_facts
from parity.results import Owner, OwnerKind, Record, Status
from parity.triage.case import is_failing
from parity.triage.decide import decide
from parity.triage.limits import LIMITS
from parity.triage.owner import owner_of

# an owner found by a tier limit turns the run's failure into an expected one (as a spec's known divergence
# would): these owners, on these suites' statuses
LIMIT_OWNERS = (OwnerKind.TIER, OwnerKind.TRITON, OwnerKind.TRITON_ASCEND, OwnerKind.RANDOM)
EXPECTED_ON = {"accuracy": (Status.FAILED, Status.ERROR)}
TRIAGED_SUITES = (None, "accuracy", "compile")  # the suites whose failures triage decides


class Evidence(Protocol):
    """What triage may know beyond the record: the same case elsewhere. Implementations read it from a
    run's sibling results dirs (`RunEvidence`) or from a report's merged records (parity.triage.merged)."""

    def version(self, record: Record) -> str | None:
        """The compiler release the record was built with."""

    def others(self, record: Record) -> Mapping[str, Record]:
        """tier -> that tier's record of the same case, on the same inputs."""

    def versions(self, record: Record) -> Mapping[str, Record]:
        """another release of the record's own compiler -> this tier's record of the same case built with it."""


class NoEvidence:
    """The record alone: nothing else is known about its case."""

    def version(self, record: Record) -> str | None:
        return None

    def others(self, record: Record) -> Mapping[str, Record]:
        return {}

    def versions(self, record: Record) -> Mapping[str, Record]:
        return {}


@dataclass
class RunEvidence:
    """A run's evidence: the results dirs beside its own (reports/<tier>/, the version matrix's dirs), read
    afresh for each record (another tier may be writing them meanwhile), and this process's release."""

    results_dir: Path

    def _dirs(self) -> list[Path]:
        return evidence.sibling_dirs(self.results_dir)

    def version(self, record: Record) -> str | None:
        return evidence.installed_version()

    def others(self, record: Record) -> Mapping[str, Record]:
        return evidence.others_for(record, self._dirs(), self.version(record))

    def versions(self, record: Record) -> Mapping[str, Record]:
        return evidence.versions_for(record, self.version(record), self._dirs())


@dataclass(frozen=True)
class CaseCode:
    """What triage knows of a case's code: its spec's family and kernels, and their source (read on demand)."""

    family: str | None = None
    kernels: tuple[Any, ...] = ()
    source: Callable[[], str] = field(default=lambda: "")


def triage(record: Record, facts: Evidence, code: CaseCode = CaseCode()) -> Owner | None:
    """Settle, decide and record `owner` (None for a record that did not fail). Keeps `finding_of`, the
    library drafts' input, in step with it. A raise here leaves the record as it was, with `repro_error`."""
    if interrupt.settle(record):  # a case the run's interruption cut is no finding
        return None
    if record.get("suite") not in TRIAGED_SUITES or record.get("status") == Status.INTERRUPTED:
        return None
    try:
        if not is_failing(record):
            return None
        if code.family is not None or code.kernels:  # which failures of a library's kernel are the library's
            library_rule.mark(record, code.family, code.kernels)
        source_facts.note(record, code.source())  # what the report's re-triage, which has no source, reads
        library = library_rule.library_of(code.family, code.kernels)
        verdict = decide(record, facts.others(record), code.source(), library,
                         library_rule.library_owns(record) if library is not None else None,
                         version=facts.version(record), versions=facts.versions(record))
    except Exception as exc:  # triage must never cost a record
        record["repro_error"] = f"triage: {type(exc).__name__}: {exc}"[:600]
        return None
    if verdict is None:
        return None
    record["owner"] = verdict
    if verdict.who is not OwnerKind.LIBRARY:
        record.pop("finding_of", None)  # the library rule named the library; the evidence names someone else
    expect(record, verdict)
    return verdict


def expect(record: Record, verdict: Owner) -> None:
    """A tier limit (or a vendor bug already reported) found for a run's failure: expected on this tier for
    every kernel, as a spec's known divergence would be. The verdict's word on the status, said here once."""
    if verdict.who not in LIMIT_OWNERS or not verdict.limit:
        return
    if record.get("status") not in EXPECTED_ON.get(str(record.get("suite")), ()):
        return
    limit = next(x for x in LIMITS if x.id == verdict.limit)
    record["known_divergence"] = {"reason": limit.what, "link": limit.link, "expected_by": None}
    label = {OwnerKind.TIER: "tier limit", OwnerKind.RANDOM: limit.name}.get(limit.who, f"known {limit.name} bug")
    record["status"] = Status.XFAILED
    record["reason"] = f"{label}: {limit.what} ({limit.link}); observed: {record.get('reason')}"


def limit_owned(record: Record) -> bool:
    """A record `expect` turned into an expected failure: its repro folder holds TIER.md alone."""
    owner = owner_of(record)
    known = record.get("known_divergence")
    return (record.get("status") == Status.XFAILED and owner is not None and owner.who in LIMIT_OWNERS
            and bool(owner.limit) and known is not None and known.get("expected_by", "") is None)
