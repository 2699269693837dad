"""A case's way through parity, phase by phase, each called once:

    run -> compare -> store -> triage -> shrink -> capture -> repro -> verify -> write

- run, compare: parity.run.runner.run_case (run tiers), the backend's compile_case and
  parity.run.compile_judge (compile tiers): the record and its status, judged once;
- store: the case's outputs for the cross-tier comparison (parity.results.outputs_store);
- triage: the owner (parity.triage.stage), from the evidence of the same case elsewhere;
- shrink, capture, repro, verify: the repro folder the owner calls for (parity.repro), which reads the
  owner and never changes the status the run and triage judged;
- write: the record, to this worker's results file (the session's writer).

Every record a suite writes goes through `conclude` (triage, then write), or through `triage` and `write`
around the repro phases: no other place decides an owner. The suites and the plugin are thin callers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from parity.errors import error_text, input_error
from parity.perf import warm
from parity.perf.proof import attach as prove_ub_claims
from parity.record.provenance import stamp_replay
from parity.repro import run_repro
from parity.repro.compile_prelaunch import attach_compile_tier
from parity.repro.compile_repro import attach_all
from parity.repro.source import case_code
from parity.results import empty_record, outputs_store
from parity.run import distribution
from parity.run.compile_judge import compile_records
from parity.run.faults import is_timeout
from parity.run.fit_proof import attach as prove_fits
from parity.run.runner import (
    build_inputs,
    mark_declined,
    memory_skip,
    reference_outputs,
    reference_raised,
    run_case,
    skip_reason,
)
from parity.run.sanitize import sanitized_case
from parity.spec import Case, KernelSpec
from parity.triage import interrupt, stage
from parity.triage.drafts import plan_drafts
from parity.triage.interrupt import interrupted_record
from parity.triage.source_facts import random_calls

Record = dict[str, Any]  # a results record in memory (its keys: parity.results.record.Record)
PHASES = ("run", "compare", "store", "triage", "shrink", "capture", "repro", "verify", "write")


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

    def store(self, record: Record) -> None: ...
    def cases(self, spec: KernelSpec) -> list[Case]: ...


def triage(session: Session, record: Record, code: stage.CaseCode) -> None:
    """The triage phase: once per record, with this run's evidence (the results dirs beside its own) and, on a
    replay, the recording's provenance on the record first."""
    stamp_replay(record, getattr(session, "replay", None))
    stage.triage(record, stage.RunEvidence(session.results_dir), code)


def write(session: Session, record: Record) -> None:
    """The write phase. A case the run's interruption cut after its triage (in its repro or its warm-up) is
    settled `interrupted` here, and any draft it got is removed: an interrupted case has no finding."""
    interrupt.settle_interrupted(record, session.results_dir)
    session.store(record)


def conclude_dead_worker(session: Session, record: Record, spec: KernelSpec | None,
                         attach_repro: Callable[[Record], None] | None) -> Record:
    """triage -> the crash repro -> write, for the case a dead worker was running: AUTHOR.md and rerun.py only
    where triage gives the crash to the kernel's author (a tier's limit or a vendor's crash gets none)."""
    triage(session, record, case_code(spec))
    if attach_repro is not None and plan_drafts(record).kind == "author":
        attach_repro(record)
    write(session, record)
    return record


def conclude(session: Session, record: Record, spec: KernelSpec | None = None) -> Record:
    """triage -> write, for a record that gets no repro (a skip, a timeout, an interrupted case, a crash)."""
    triage(session, record, case_code(spec))
    write(session, record)
    return record


def random_evidence(session: Session, spec: KernelSpec, case: Case, record: Record,
                    outputs: Mapping[str, Any] | None) -> None:
    """A random kernel's (tl.rand ...) wrong values judged as distributions too (parity.run.distribution): its
    stream may differ by compiler, and triage reads `random_stream` (parity.triage.random_stream)."""
    if record.get("status") != "failed" or not outputs or not record.get("metrics"):
        return
    try:
        if random_calls(case_code(spec).source()):  # the reference is cached: no second fp64 computation
            ref = reference_outputs(spec, case, build_inputs(spec, case, session.seed), session.ref_cache)
            record["random_stream"] = distribution.compare(outputs, ref, record.get("tolerance"))
    except Exception as exc:  # evidence that could not be had: the rules without it, and why
        record["random_stream"] = {"agrees": None, "error": f"{type(exc).__name__}: {exc}"[:300]}


def judge_and_repro(record: Record, spec: KernelSpec, case: Case, backend: Any, *, seed: int, cache: Any,
                    results_dir: Path) -> None:
    """triage -> shrink -> capture -> repro -> verify, for a run tier's record (parity.repro.run_repro.attach)."""
    stage.triage(record, stage.RunEvidence(results_dir), case_code(spec))
    run_repro.attach(record, spec, case, backend, seed=seed, cache=cache, results_dir=results_dir)


def judge_and_repro_compiles(records: Sequence[Record], spec: KernelSpec, case: Case, backend: Any,
                             cpu_inputs: Mapping[str, Any], results_dir: Path, seed: int = 0) -> None:
    """triage each of a case's compile records, then their repros (parity.repro.compile_repro.attach_all)."""
    code = case_code(spec)
    for record in records:
        stage.triage(record, stage.RunEvidence(results_dir), code)
    attach_all(records, spec, case, backend, cpu_inputs, results_dir, seed)


def judge_and_repro_prelaunch(record: Record, spec: KernelSpec, case: Case, backend: Any,
                              cpu_inputs: Mapping[str, Any], results_dir: Path, seed: int,
                              exc: BaseException) -> None:
    """triage a launcher's raise outside any compile, then the library's draft (attach_compile_tier)."""
    stage.triage(record, stage.RunEvidence(results_dir), case_code(spec))
    attach_compile_tier(record, spec, case, backend, cpu_inputs, results_dir, seed, exc)


def accuracy_case(session: Session, spec: KernelSpec, case: Case) -> Record:
    """A run tier's case through every phase; returns the record written. A KeyboardInterrupt or a timeout
    is re-raised after the case's record is written."""
    backend = session.backend
    skip = memory_skip(spec, case, backend)
    if skip:
        record = empty_record(backend.name, backend.mode, spec.name, case.id, dict(case.params))
        record.update(suite="accuracy", status="skipped", reason=skip)
        return conclude(session, record, spec)
    try:
        if session.sanitize:  # run, compare: in a fresh child under compute-sanitizer's memcheck
            record, outputs = sanitized_case(spec, case, backend, seed=session.seed, level=session.level,
                                             kernels=session.kernels_option)
        else:  # run, compare
            record, outputs = run_case(spec, case, backend, seed=session.seed, cache=session.ref_cache)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):  # Ctrl-C or a job stop: the case is `interrupted`, no finding
            conclude(session, interrupted_record(backend, spec, case, "accuracy"), spec)
        elif is_timeout(exc):  # a hang: record it before pytest-timeout fails the test
            record = empty_record(backend.name, backend.mode, spec.name, case.id, dict(case.params))
            record.update(suite="accuracy", status="error", reason=f"timeout: {str(exc).splitlines()[0]}")
            conclude(session, record, spec)
        raise
    stamp_replay(record, getattr(session, "replay", None))  # whose recording the values came from, for triage
    t0 = time.perf_counter()
    outputs_store.save_case(session.results_dir, spec, case, outputs, record.get("input_digest"))  # store
    record["timing"]["store_s"] = time.perf_counter() - t0
    random_evidence(session, spec, case, record, outputs)  # compare: a random stream's distribution
    try:  # triage; then shrink, capture, repro, verify: only a failed/errored case pays for those
        judge_and_repro(record, spec, case, backend, seed=session.seed, cache=session.ref_cache,
                        results_dir=session.results_dir)
        part = warm.share(spec, case, backend, cases=session.cases(spec), perf=session.perf, worker=session.worker)
        if part and record["status"] in ("passed", "failed", "xfailed", "xpassed"):  # one that raised would again
            # the perf pass's autotune compiles, done here beside the other workers (parity.perf.warm)
            record["perf_warm"] = warm.perf_configs(spec, backend, seed=session.seed, part=part,
                                                    retune=session.retune)
            record["timing"]["warm_s"] = record["perf_warm"]["seconds"]
    except KeyboardInterrupt:
        interrupt.note()
        write(session, record)  # settled as `interrupted` there, with any draft it got removed
        raise
    write(session, record)
    return record


def compile_case(session: Session, spec: KernelSpec, case: Case) -> list[Record]:
    """A compile tier's case through every phase: one record per compile; returns the records written. A
    launcher that raised outside any compile gives one `error` record (`declined` where the library itself
    refuses the target); a KeyboardInterrupt is re-raised after the case's record is written."""
    backend = session.backend
    missing = spec.unavailable() if spec.unavailable is not None else None
    if missing:  # e.g. the library the spec tests is not installed: a skip with the install command
        record = empty_record(backend.name, "compile", spec.name, case.id, dict(case.params))
        record.update(suite="compile", status="skipped", reason=missing)
        return [conclude(session, record, spec)]
    try:
        cpu_inputs = build_inputs(spec, case, session.seed)
    except Exception as exc:  # a damaged bundle, or the spec's own make_inputs: nothing to compile with
        return [bad_input(session, spec, case, exc)]
    try:
        compiles = backend.compile_case(spec, case, cpu_inputs)  # run, compare
    except KeyboardInterrupt:
        conclude(session, interrupted_record(backend, spec, case, "compile"), spec)
        raise
    except Exception as exc:  # the launcher itself failed, outside any compile
        record = empty_record(backend.name, "compile", spec.name, case.id, dict(case.params))
        record.update(suite="compile", status="error", reason=error_text(exc))
        if mark_declined(spec, exc, record):  # the library's own guard for this target (KernelSpec.declines)
            return [conclude(session, record, spec)]
        skip = skip_reason(exc)  # this tier cannot run the case at all (a replay's "not replayable here")
        if skip is not None:
            record.update(status="skipped", reason=skip)
            return [conclude(session, record, spec)]
        # a library's raise before any compile is its finding: an ISSUE.md to it and a standalone call
        stamp_replay(record, getattr(session, "replay", None))
        judge_and_repro_prelaunch(record, spec, case, backend, cpu_inputs, session.results_dir, session.seed, exc)
        write(session, record)
        return [record]
    records = compile_records(backend.name, spec, case, compiles)
    for record in records:
        stamp_replay(record, getattr(session, "replay", None))
    # a config that fits is a fix only if it computes: run it on a tier that computes, before any draft says so
    prove_fits(records, compiles, spec, case, session.seed, backend)
    prove_ub_claims(records, spec, case, session.seed, backend)  # "larger tiles fit" too (parity.perf.proof)
    judge_and_repro_compiles(records, spec, case, backend, cpu_inputs, session.results_dir, session.seed)
    for record in records:
        write(session, record)
    return records


def bad_input(session: Session, spec: KernelSpec, case: Case, exc: BaseException) -> Record:
    """A compile tier's case whose inputs could not be made (a damaged replay bundle: parity.errors.input_error):
    an `error` owned by that input, with its note (no draft against the kernel); nothing is compiled."""
    bad = input_error(exc)
    record = empty_record(session.backend.name, "compile", spec.name, case.id, dict(case.params))
    if bad is None:  # the spec's make_inputs raised: its author's, as a raising reference is
        record.update(suite="compile", status="error", error_kind="inputs",
                      reason=reference_raised(spec, exc, "make_inputs"))
    else:
        record.update(suite="compile", status="error", error_kind=getattr(bad, "parity_error_kind", None),
                      reason=error_text(bad))
    triage(session, record, case_code(spec))
    run_repro.input_note_dir(record, spec, case, session.backend, session.results_dir)
    write(session, record)
    return record


def failures(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r["status"] in ("failed", "error", "xpassed")]
