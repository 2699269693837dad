"""A case's way through parity: a table of phases (parity.driver.phases) that one loop runs in order.

    ACCURACY (run tiers):    skip -> run -> store -> compare -> triage -> repro -> warm -> npu -> write
    COMPILE (compile tiers): skip -> inputs -> run -> compare -> fit -> triage -> repro -> npu -> write

- skip: a case this tier cannot run (its library missing, too little memory): `skipped`, settled;
- run (and its comparison): parity.run.runner.run_case, or the backend's compile_case; a launcher's raise
  outside any compile is its record here (a library's guard or a tier's refusal settles it);
- store: the case's outputs for the cross-tier comparison (parity.results.outputs_store);
- compare: the record judged once (parity.run.compile_judge per compile; a random kernel's distribution);
- fit: a config that fits is proven to compute before any draft says so (parity.run.fit_proof, parity.perf.proof);
- triage: the owner (parity.triage.stage), with the evidence of the same case elsewhere passed in and recorded
  (parity.driver.evidence);
- repro: shrink, capture, write and verify the folder the owner calls for (parity.repro), which reads the owner
  and never changes the status the run and triage judged;
- warm: the perf pass's autotune compiles, beside the other workers (parity.perf.warm);
- npu: a pass on a triton-ascend tier without the device names the known NPU bugs it cannot see (parity.known_npu);
- write: the record, to this worker's results file (the session's store).

A phase may settle the case (a skip, a refusal, an interruption): the loop then runs only triage and write.
The specialization sweep is a third table of the same loop (parity.driver.sweep); the run's end is the
driver's other table (parity.driver.finish). The suites and the plugin are thin callers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import parity.known_npu as known_npu
from parity.backends import tiers_where
from parity.driver import evidence
from parity.driver.case import (
    CaseRun,
    Session,
    record_interrupted,
    triage,
    triage_phase,
    write,
    write_interrupted,
    write_phase,
)
from parity.driver.phases import Phase, run_phases
from parity.errors import error_text, input_error, skip_reason
from parity.perf import warm
from parity.perf.proof import attach as prove_ub_claims
from parity.repro import run_repro
from parity.repro.compile_prelaunch import attach_compile_tier
from parity.repro.compile_repro import attach_all
from parity.repro.source import case_code
from parity.results import OwnerKind, Record, Status, outputs_store
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
)
from parity.run.sanitize import sanitized_case
from parity.spec import Case, KernelSpec
from parity.triage import stage
from parity.triage.drafts import plan_drafts
from parity.triage.source_facts import random_calls

# compared with == and in: records parity.run judged may still hold the plain word, which a Status (a str-enum) equals
FAILING = (Status.FAILED, Status.ERROR, Status.XPASSED)
AUTHOR_DRAFT = OwnerKind.AUTHOR.value  # parity.triage.drafts.DraftPlan.kind of AUTHOR.md, the kernel author's
WARMED = (Status.PASSED, Status.FAILED, Status.XFAILED, Status.XPASSED)  # one that raised would raise again


# a run tier's phases
def skip_run(run: CaseRun) -> None:
    reason = memory_skip(run._known(), run._case(), run.session.backend)
    if reason:
        run.settle(run.blank(Status.SKIPPED, reason))


def run_accuracy(run: CaseRun) -> None:
    """run, compare: in this process, or in a fresh child under compute-sanitizer's memcheck. A hang is recorded
    before pytest-timeout fails the test."""
    session, spec, case = run.session, run._known(), run._case()
    try:
        if session.sanitize:
            record, run.outputs = sanitized_case(spec, case, session.backend, seed=session.seed, level=session.level,
                                                 kernels=session.kernels_option)
        else:
            record, run.outputs = run_case(spec, case, session.backend, seed=session.seed, cache=session.ref_cache)
    except BaseException as exc:  # pytest-timeout's failure is a BaseException
        if not isinstance(exc, KeyboardInterrupt) and is_timeout(exc):
            run.settle(run.blank(Status.ERROR, f"timeout: {str(exc).splitlines()[0]}"))
            triage_phase(run)
            write_phase(run)
        raise
    run.records = [record]


def store_outputs(run: CaseRun) -> None:
    t0 = time.perf_counter()
    record = run.record
    outputs_store.save_case(run.session.results_dir, run._known(), run._case(), run.outputs,
                            record.get("input_digest"))
    record["timing"]["store_s"] = time.perf_counter() - t0


def compare_random(run: CaseRun) -> None:
    """A random kernel's (tl.rand ...) wrong values judged as distributions too (parity.run.distribution): its
    stream may differ by compiler, and triage reads `random_stream` (parity.triage.random_stream)."""
    record, session, spec, case = run.record, run.session, run._known(), run._case()
    if record.get("status") != Status.FAILED or not run.outputs or not record.get("metrics"):
        return
    try:
        if random_calls(run.code.source()):  # the reference is cached: no second fp64 computation
            ref = reference_outputs(spec, case, build_inputs(spec, case, session.seed), session.ref_cache)
            record["random_stream"] = distribution.compare(run.outputs, ref, record.get("tolerance"))
    except Exception as exc:  # evidence that could not be had: the rules without it, and why
        record["random_stream"] = {"agrees": None, "error": f"{type(exc).__name__}: {exc}"[:300]}


def repro_run(run: CaseRun) -> None:
    """shrink -> capture -> repro -> verify: only a failed/errored case pays for those (parity.repro.run_repro)."""
    session = run.session
    run_repro.attach(run.record, run._known(), run._case(), session.backend, seed=session.seed,
                     cache=session.ref_cache, results_dir=session.results_dir)


def warm_perf(run: CaseRun) -> None:
    session, spec, record = run.session, run._known(), run.record
    part = warm.share(spec, run._case(), session.backend, cases=session.cases(spec), perf=session.perf,
                      worker=session.worker)
    if part and record["status"] in WARMED:
        record["perf_warm"] = warm.perf_configs(spec, session.backend, seed=session.seed, part=part,
                                                retune=session.retune)
        record["timing"]["warm_s"] = record["perf_warm"]["seconds"]


def note_npu_unseen(run: CaseRun) -> None:
    """A pass on a triton-ascend tier without the device, of a kernel whose source has a known NPU bug's pattern,
    names the bug that tier cannot see (parity.known_npu): never a bare pass, and still a pass."""
    tier = run.session.backend.name
    passed = [r for r in run.records if r["status"] in (Status.PASSED, Status.XPASSED)]
    if passed and tier in tiers_where(language="triton-ascend", hardware=False):
        unseen = known_npu.unseen(run.code.source(), tier)
        for record in passed if unseen else ():
            record["npu_unseen"] = unseen


ACCURACY: tuple[Phase[CaseRun], ...] = (
    Phase("skip", skip_run),
    Phase("run", run_accuracy, interrupted=record_interrupted),
    Phase("store", store_outputs),
    Phase("compare", compare_random),
    Phase("triage", triage_phase, settled=True, interrupted=write_interrupted),
    Phase("repro", repro_run, interrupted=write_interrupted),
    Phase("warm", warm_perf, interrupted=write_interrupted),
    Phase("npu", note_npu_unseen),
    Phase("write", write_phase, settled=True),
)


# a compile tier's phases
def skip_compile(run: CaseRun) -> None:
    """The library the spec tests is not installed: a skip with the install command."""
    spec = run._known()
    missing = spec.unavailable() if spec.unavailable is not None else None
    if missing:
        run.settle(run.blank(Status.SKIPPED, missing))


def make_inputs(run: CaseRun) -> None:
    """A damaged bundle (parity.errors.input_error), or the spec's own make_inputs raising: an `error` owned by
    that input, with its note (no draft against the kernel); nothing is compiled."""
    spec, case = run._known(), run._case()
    try:
        run.cpu_inputs = build_inputs(spec, case, run.session.seed)
    except Exception as exc:
        bad = input_error(exc)
        if bad is None:  # the spec's make_inputs raised: its author's, as a raising reference is
            record = run.blank(Status.ERROR, reference_raised(spec, exc, "make_inputs"))
            record["error_kind"] = "inputs"
        else:
            record = run.blank(Status.ERROR, error_text(bad))
            record["error_kind"] = getattr(bad, "parity_error_kind", None)  # type: ignore[typeddict-item]
        run.records, run.bad_input = [record], True


def run_compiles(run: CaseRun) -> None:
    """The backend's compile_case; a launcher that raised outside any compile gives one `error` record
    (`declined` where the library itself refuses the target, `skipped` where this tier cannot run it)."""
    if run.bad_input:
        return
    spec, case = run._known(), run._case()
    try:
        run.compiles = run.session.backend.compile_case(spec, case, run.cpu_inputs)
    except Exception as exc:
        record = run.blank(Status.ERROR, error_text(exc))
        if mark_declined(spec, exc, record):  # the library's own guard for this target (KernelSpec.declines)
            return run.settle(record)
        skip = skip_reason(exc)  # this tier cannot run the case at all (a replay's "not replayable here")
        if skip is not None:
            record["status"], record["reason"] = Status.SKIPPED, skip
            return run.settle(record)
        run.records, run.raised = [record], exc  # a library's raise before any compile is its finding


def judge_compiles(run: CaseRun) -> None:
    if run.compiles is not None:
        run.records = compile_records(run.session.backend.name, run._known(), run._case(), run.compiles)


def prove(run: CaseRun) -> None:
    """A config that fits is a fix only if it computes: run it on a tier that computes, before any draft says so;
    "larger tiles fit" too (parity.perf.proof)."""
    if run.compiles is None:
        return
    session, spec, case = run.session, run._known(), run._case()
    prove_fits(run.records, run.compiles, spec, case, session.seed, session.backend)
    prove_ub_claims(run.records, spec, case, session.seed, session.backend)


def repro_compiles(run: CaseRun) -> None:
    """The input's note, the library's draft of a launcher's raise, or each failed compile's repro."""
    session, spec, case = run.session, run._known(), run._case()
    if run.bad_input:
        run_repro.input_note_dir(run.record, spec, case, session.backend, session.results_dir)
    elif run.raised is not None:
        attach_compile_tier(run.record, spec, case, session.backend, run.cpu_inputs or {}, session.results_dir,
                            session.seed, run.raised)
    else:
        attach_all(run.records, spec, case, session.backend, run.cpu_inputs or {}, session.results_dir,
                   session.seed)


COMPILE: tuple[Phase[CaseRun], ...] = (
    Phase("skip", skip_compile),
    Phase("inputs", make_inputs),
    Phase("run", run_compiles, interrupted=record_interrupted),
    Phase("compare", judge_compiles),
    Phase("fit", prove),
    Phase("triage", triage_phase, settled=True),
    Phase("repro", repro_compiles),
    Phase("npu", note_npu_unseen),
    Phase("write", write_phase, settled=True),
)
# what a sweep's re-run of one case leaves out (parity.driver.sweep): its outputs and the perf pass's warm-up
RERUN_SKIPS = ("store", "warm")


def table(session: Session) -> tuple[Phase[CaseRun], ...]:
    return COMPILE if session.backend.mode == "compile" else ACCURACY


def accuracy_case(session: Session, spec: KernelSpec, case: Case) -> Record:
    """A run tier's case through ACCURACY; returns the record written. A KeyboardInterrupt or a timeout is
    re-raised after the case's record is written."""
    return run_phases(CaseRun(session, spec, case, "accuracy"), ACCURACY).record


def compile_case(session: Session, spec: KernelSpec, case: Case) -> list[Record]:
    """A compile tier's case through COMPILE: one record per compile; returns the records written."""
    return run_phases(CaseRun(session, spec, case, "compile"), COMPILE).records


def rerun(session: Session, spec: KernelSpec, case: Case) -> list[Record]:
    """The case's records as its tier's own suite makes them, repros attached and verified, none written."""
    suite = "compile" if session.backend.mode == "compile" else "accuracy"
    return run_phases(CaseRun(session, spec, case, suite, writes=False), table(session), skip=RERUN_SKIPS).records


def conclude(session: Session, record: Record, spec: KernelSpec | None = None) -> Record:
    """triage -> write, for a record that gets no repro (a skip, a suite's check, an interrupted case)."""
    triage(session, record, case_code(spec))
    write(session, record)
    return record


def conclude_dead_worker(session: Session, record: Record, spec: KernelSpec | None,
                         attach_repro: Callable[[Record], None] | None) -> Record:
    """triage -> the crash repro -> write, for the case a dead worker was running: AUTHOR.md and rerun.py only
    where triage gives the crash to the kernel's author (a tier's limit or a vendor's crash gets none)."""
    triage(session, record, case_code(spec))
    if attach_repro is not None and plan_drafts(record).kind == AUTHOR_DRAFT:
        attach_repro(record)
    write(session, record)
    return record


# the triage and repro phases alone, for tests that judge a record built by hand
def judge_and_repro(record: Record, spec: KernelSpec, case: Case, backend: Any, *, seed: int, cache: Any,
                    results_dir: Path) -> None:
    """triage -> shrink -> capture -> repro -> verify, for a run tier's record (parity.repro.run_repro.attach)."""
    stage.triage(record, evidence.SiblingResults(results_dir), case_code(spec))
    run_repro.attach(record, spec, case, backend, seed=seed, cache=cache, results_dir=results_dir)


def judge_and_repro_compiles(records: Sequence[Record], spec: KernelSpec, case: Case, backend: Any,
                             cpu_inputs: Mapping[str, Any], results_dir: Path, seed: int = 0) -> None:
    """triage each of a case's compile records, then their repros (parity.repro.compile_repro.attach_all)."""
    code = case_code(spec)
    for record in records:
        stage.triage(record, evidence.SiblingResults(results_dir), code)
    attach_all(records, spec, case, backend, cpu_inputs, results_dir, seed)


def judge_and_repro_prelaunch(record: Record, spec: KernelSpec, case: Case, backend: Any,
                              cpu_inputs: Mapping[str, Any], results_dir: Path, seed: int,
                              exc: BaseException) -> None:
    """triage a launcher's raise outside any compile, then the library's draft (attach_compile_tier)."""
    stage.triage(record, evidence.SiblingResults(results_dir), case_code(spec))
    attach_compile_tier(record, spec, case, backend, cpu_inputs, results_dir, seed, exc)


def failures(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r["status"] in FAILING]
