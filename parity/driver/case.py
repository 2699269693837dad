"""One case's state on its way through a table, and the phases every table shares: triage and write.

`triage` and `write` are the only places a record gets its owner and reaches the results file; the tables
(parity.driver.pipeline, parity.driver.sweep) and the dead worker's record (parity.plugin) all call them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from parity.driver import evidence
from parity.record.provenance import stamp_replay
from parity.repro.source import case_code
from parity.results import Record, Status, empty_record
from parity.spec import Case, KernelSpec
from parity.triage import interrupt, stage
from parity.triage.interrupt import interrupted_record


class Session(Protocol):
    """What the pipeline needs of a run's session (parity.plugin.ParitySession)."""

    backend: Any
    seed: int
    results_dir: Any
    ref_cache: Any
    perf: str
    retune: bool
    worker: str
    level: str
    sanitize: bool  # each accuracy case in a child under compute-sanitizer (parity.run.sanitize)
    kernels_option: str  # --kernels as given: what a sanitized child rebuilds its spec from
    replay: dict[str, Any] | None  # --replay: the bundle and the tier that recorded it, on every record

    def store(self, record: Record) -> None: ...
    def cases(self, spec: KernelSpec) -> list[Case]: ...


@dataclass
class CaseRun:
    """One case on its way through a table: what each phase leaves for the next."""

    session: Session
    spec: KernelSpec | None
    case: Case | None
    suite: str = "accuracy"
    records: list[Record] = field(default_factory=list)
    settled: bool = False  # a skip or a refusal: triage and write only
    outputs: Mapping[str, Any] | None = None  # a run tier's outputs, on the CPU
    cpu_inputs: Mapping[str, Any] | None = None  # a compile tier's inputs
    compiles: Sequence[Mapping[str, Any]] | None = None  # what the backend's compile_case returned
    raised: BaseException | None = None  # the launcher's raise outside any compile (a library's finding)
    bad_input: bool = False  # the inputs could not be made: the record gets the input's note, nothing compiles
    writes: bool = True  # False for a sweep's re-run of the case: the results dir is the sweep's to write

    @functools.cached_property
    def code(self) -> stage.CaseCode:
        return case_code(self.spec)

    @property
    def record(self) -> Record:
        return self.records[0]

    def settle(self, record: Record) -> None:
        self.records, self.settled = [record], True

    def blank(self, status: Status, reason: str | None) -> Record:
        spec, case, backend = self._known(), self._case(), self.session.backend
        record = empty_record(backend.name, "compile" if self.suite == "compile" else backend.mode, spec.name,
                              case.id, dict(case.params))
        record["suite"], record["status"], record["reason"] = self.suite, status, reason
        return record

    def _known(self) -> KernelSpec:
        assert self.spec is not None, "a phase that runs the case needs its spec"
        return self.spec

    def _case(self) -> Case:
        assert self.case is not None, "a phase that runs the case needs it"
        return self.case


# the phases every table shares
def triage_phase(run: CaseRun) -> None:
    """Once per record: the replay's provenance first, then the owner, from the sibling results passed in."""
    for record in run.records:
        triage(run.session, record, run.code)


def write_phase(run: CaseRun) -> None:
    if not run.writes:
        return
    for record in run.records:
        write(run.session, record)


def write_interrupted(run: CaseRun) -> None:
    """Ctrl-C in a case's triage, repro or warm-up: its record is written (settled `interrupted` there)."""
    interrupt.note()
    write_phase(run)


def record_interrupted(run: CaseRun) -> None:
    """Ctrl-C before the case had a record of its own: the case is `interrupted`, no finding."""
    run.settle(interrupted_record(run.session.backend, run.spec, run.case, run.suite))
    triage_phase(run)
    write_phase(run)


def triage(session: Session, record: Record, code: stage.CaseCode) -> None:
    """The triage phase for one record: stamped with the replay's provenance, then triaged once with the results
    dirs beside this run's own as evidence, which the record keeps (parity.driver.evidence)."""
    stamp_replay(record, getattr(session, "replay", None))
    facts = evidence.SiblingResults(Path(session.results_dir))
    stage.triage(record, facts, code)
    facts.note(record)


def write(session: Session, record: Record) -> None:
    """The write phase. A case the run's interruption cut after its triage (in its repro or its warm-up) is
    settled `interrupted` here, and any draft it got is removed: an interrupted case has no finding."""
    interrupt.settle_interrupted(record, session.results_dir)
    session.store(record)
