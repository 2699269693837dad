"""The evidence triage reads beyond its record, handed in by the driver and kept on the record it decided.

Triage (parity.triage.stage) asks an `Evidence` for the same case on other tiers and other releases; at run
time that is the results dirs beside this run's own (reports/<tier>/, the version matrix's dirs), read afresh
for each record since another tier may be writing them meanwhile. `SiblingResults` reads them through
parity.triage.evidence and notes what it handed over, so the record says what its owner was decided from
(`triage_evidence`), and a reader can tell a verdict made alone from one made beside other tiers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import parity.triage.evidence as sibling
from parity.results import Record, TriageEvidence


@dataclass
class SiblingResults:
    """The Evidence (parity.triage.stage.Evidence) of a run's results dir, and what triage read of it."""

    results_dir: Path
    read: TriageEvidence = field(default_factory=lambda: TriageEvidence())

    def dirs(self) -> list[Path]:
        found = sibling.sibling_dirs(self.results_dir)
        self.read["dirs"] = [d.name for d in found]
        return found

    def version(self, record: Record) -> str | None:
        release = sibling.installed_version()
        self.read["release"] = release
        return release

    def others(self, record: Record) -> Mapping[str, Record]:
        found = sibling.others_for(record, self.dirs(), self.version(record))
        self.read["tiers"] = {tier: str(r.get("status")) for tier, r in sorted(found.items())}
        return found

    def versions(self, record: Record) -> Mapping[str, Record]:
        found = sibling.versions_for(record, self.version(record), self.dirs())
        self.read["releases"] = {v: str(r.get("status")) for v, r in sorted(found.items())}
        return found

    def note(self, record: Record) -> None:
        """Keep what triage read on the record (nothing where it read nothing: a record that did not fail)."""
        if self.read:
            record["triage_evidence"] = self.read
