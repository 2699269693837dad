"""The run's end, the driver's second table: what the controller does once every case is written.

    RUN_END: wait -> merge -> carry -> perf -> write -> promote -> env -> report

- wait: an interrupted run's workers get the time to write their last records;
- merge: every worker's part file into one list (parity.results.merge_parts);
- carry: a run over a kernel selection keeps the previous records of the kernels it did not select;
- perf: the perf pass, over the merged records (parity.perf.stage), where the tier times kernels;
- write: the staging dir's results.jsonl, and the crash and watchdog files tidied;
- promote: the staged run into the results dir, the one it replaces aside (parity.run.rundir);
- env: env.json, the environment and the run's own facts;
- report: REPORT.md, with a banner when the run was cut short or carries records over.

parity.plugin hands the pytest facts in (the exit status, the items that reported) and runs the table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from parity.driver.phases import Phase, run_phases
from parity.perf import stage as perf_stage
from parity.report import backend_md, envinfo
from parity.results import (
    Record,
    ResultsDir,
    atomic_write_text,
    merge_parts,
    outputs_store,
    read_records,
    write_results,
)
from parity.run import crash_log, rundir, watchdog
from parity.spec import Case, KernelSpec
from parity.triage import interrupt

WORKER_STOP_S = 15.0  # how long an interrupted run's controller waits for its workers' last records


class Clock(Protocol):
    def stamp(self, name: str, at: float | None = None) -> None: ...
    def phases(self) -> dict[str, float]: ...


class Finishing(Protocol):
    """What the run's end needs of the session (parity.plugin.ParitySession)."""

    backend: Any
    level: str
    seed: int
    results_dir: Path
    final_dir: Path
    specs: list[KernelSpec]
    selected: bool
    perf: str
    retune: bool
    unavailable: str | None
    workers: int
    replay: dict[str, Any] | None
    records: list[Record]

    @property
    def clock(self) -> Clock: ...

    def cases(self, spec: KernelSpec) -> list[Case]: ...


@dataclass
class RunEnd:
    """The run's end on its way through RUN_END: the pytest facts handed in, and what each phase leaves."""

    session: Finishing
    interrupted: bool
    items_done: int  # test items that reported an outcome
    items_total: int  # test items collected
    env_fields: Mapping[str, Any] = field(default_factory=dict)  # the watchdog's and the shard's
    records: list[Record] = field(default_factory=list)
    carried: list[Record] = field(default_factory=list)
    had_previous: bool = False  # previous/ holds a complete run's results now
    env: dict[str, Any] = field(default_factory=dict)
    head: str = ""  # REPORT.md's banner ('' for a whole run)
    settled: bool = False  # never set: every phase of the run's end runs


def wait(end: RunEnd) -> None:
    if end.interrupted:  # the workers were told to stop: take what they write last
        interrupt.wait_for_children(WORKER_STOP_S)


def merge(end: RunEnd) -> None:
    end.records = merge_parts(end.session.results_dir)


def carry(end: RunEnd) -> None:
    """A selection run keeps the previous records (and their files) of the kernels it did not select."""
    state, final = end.session, ResultsDir(end.session.final_dir)
    if state.selected and final.results.exists():
        ran = {spec.name for spec in state.specs} | {r["kernel"] for r in end.records}
        end.carried = rundir.carried_records(list(read_records(final.results)), ran)
        rundir.carry_files(final.path, end.carried,
                           (outputs_store.path_for(final.path, r["kernel"], r["case"]) for r in end.carried))
    end.records = sorted([*end.records, *end.carried], key=lambda r: (r["kernel"], r["case"], r.get("suite", "")))


def perf(end: RunEnd) -> None:
    state = end.session
    if state.perf != "off" and not state.unavailable and state.backend.mode != "compile" and not end.interrupted:
        state.backend.select_device(0)
        cases = {(spec.name, case.id): (spec, case) for spec in state.specs for case in state.cases(spec)}
        # perf sizes only where a device times them; an explicit --perf on interpret times accuracy cases
        at_perf_sizes = state.backend.mode == "run" and state.backend.times_kernels
        perf_stage.run(cases, end.records, state.backend, seed=state.seed, mode=state.perf, specs=state.specs,
                       use_perf_cases=at_perf_sizes, retune=state.retune)
    state.clock.stamp("perf_done")


def write(end: RunEnd) -> None:
    staging = end.session.results_dir
    write_results(staging, end.records)
    crash_log.tidy(staging)
    watchdog.tidy(staging)


def promote(end: RunEnd) -> None:
    state = end.session
    end.had_previous = rundir.promote(state.final_dir)
    state.results_dir = state.final_dir
    state.records = end.records


def env(end: RunEnd) -> None:
    state = end.session
    try:
        backend_env = state.backend.env() if not state.unavailable else {}
    except Exception as exc:  # env probing must never lose the results
        backend_env = {"env_error": str(exc)[:300]}
    found = envinfo.collect(state.backend.name, backend_env)
    found["level"] = state.level
    found["seed"] = state.seed
    if state.replay:  # the verdict then says what the run tiers compared with, and an unverified (old) bundle
        found["replay"], found["replay_verified"] = state.replay["bundle"], state.replay.get("verified")
    found["xdist_workers"] = state.workers
    found["interrupted"] = end.interrupted
    found.update(end.env_fields)
    state.clock.stamp("report")
    found["wall_phases"] = state.clock.phases()  # REPORT.md: where the session's wall time went
    end.env = found
    atomic_write_text(ResultsDir(state.final_dir).env, json.dumps(found, indent=2, sort_keys=True) + "\n")


def report(end: RunEnd) -> None:
    state = end.session
    end.head = rundir.banner(end.interrupted, end.items_done, end.items_total, end.carried, end.had_previous)
    extra: list[tuple[str, str]] = []
    if state.replay:  # the recorded workload per kernel and module: launches, specializations, compiles, agreement
        from parity.record.summary import report_sections  # only a --replay run: the bundle reader, safetensors

        extra = report_sections(end.records, end.env, state.replay["bundle"])
    atomic_write_text(ResultsDir(state.final_dir).report,
                      end.head + backend_md.render_report(end.records, end.env, extra))


RUN_END: tuple[Phase[RunEnd], ...] = (
    Phase("wait", wait),
    Phase("merge", merge),
    Phase("carry", carry),
    Phase("perf", perf),
    Phase("write", write),
    Phase("promote", promote),
    Phase("env", env),
    Phase("report", report),
)


def finish(end: RunEnd) -> RunEnd:
    end.session.clock.stamp("finish")
    return run_phases(end, RUN_END)
