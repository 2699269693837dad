"""The pytest plugin: the session object, parametrization and the end-of-run hooks (options: parity.options)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from parity.backends import Backend, get_backend
from parity.driver import progress, shard
from parity.options import pytest_addoption  # noqa: F401  (a pytest hook: pytest finds it here)
from parity.paths import triton_cache_dir
from parity.record.provenance import stamp_replay
from parity.results import Record, ResultsDir, ResultWriter
from parity.run import crash_log, heap, rundir, watchdog
from parity.run.refcache import ReferenceCache
from parity.run.wallclock import ItemSpans, SessionClock, process_start
from parity.seams.env import point_triton_at
from parity.spec import Case, KernelSpec, SpecError, check_sweeps, registry, validate_cases, validate_compile_cases
from parity.spec.context import set_current_backend

STATE_KEY = pytest.StashKey["ParitySession"]()


@dataclass
class ParitySession:
    """Everything a run shares: one explicit object instead of module globals."""

    backend: Backend
    level: str
    seed: int
    results_dir: Path  # where this run writes: the staging dir inside final_dir until the run ends
    final_dir: Path  # the results dir the user named; results_dir moves there when the run ends
    specs: list[KernelSpec]
    worker: str
    unavailable: str | None = None
    ref_cache: ReferenceCache = field(default_factory=ReferenceCache)
    perf: str = "off"  # "off", "largest" or "all" (parity.perf.figures.pick_cases)
    retune: bool = False  # --retune: the perf pass ignores stored autotune picks (parity.perf.pick_cache)
    sanitize: bool = False  # --sanitize: each accuracy case in a child under compute-sanitizer (parity.run.sanitize)
    kernels_option: str = ""  # --kernels as given: what a sanitized child rebuilds its spec from
    workers: int = 0  # xdist workers, so a report can say when timings shared a device
    writer: ResultWriter | None = None
    records: list[Record] = field(default_factory=list)
    # worker clock (perf_counter) for the timeline stamps: where the last stamped stretch ended,
    # and the wait before the current test item (pytest, xdist, and worker start-up for the first)
    mark: float = field(default_factory=time.perf_counter)
    wait_s: float = 0.0
    selected: bool = False  # --kernels named a selection: records of other kernels are carried over
    clock: SessionClock = field(default_factory=SessionClock)  # the session's wall-clock phases (controller)
    replay: dict[str, Any] | None = None  # --replay: the bundle and the tier that recorded it, on every record

    @property
    def is_controller(self) -> bool:
        return self.worker == "main"

    def item_started(self) -> None:
        # accumulates: an item that writes no record (a skip mark) leaves its time to the next one
        now = time.perf_counter()
        self.wait_s, self.mark = self.wait_s + now - self.mark, now

    def store(self, record: Record) -> None:
        """The pipeline's write phase: append a record, stamped with the worker time it accounts for.
        timing.case_wall_s (since the previous record) and timing.wait_s (before this item) partition each
        worker's time; `worker` names the process (bench/suite_speed.py reports all three)."""
        if not (self.is_controller and self.workers):  # an xdist controller runs no items
            now = time.perf_counter()
            timing = record.setdefault("timing", {})
            timing["case_wall_s"], timing["wait_s"] = now - self.mark, self.wait_s
            self.mark, self.wait_s = now, 0.0
            record["worker"] = self.worker
        stamp_replay(record, self.replay)
        if self.backend.mode == "run" and not self.unavailable:
            record.setdefault("device", self.backend.device)  # which of a multi-device host's devices ran it
        if self.writer is None:
            self.writer = ResultWriter(self.results_dir, self.worker)
        self.writer.write(record)

    def write(self, record: Record) -> None:
        """A record that gets no repro (a skip, a suite's check, a dead worker's case): triage, then store."""
        from parity.driver import pipeline

        pipeline.conclude(self, record, next((s for s in self.specs if s.name == record.get("kernel")), None))

    def cases(self, spec: KernelSpec) -> list[Case]:
        if self.backend.mode == "compile":  # compile tiers warm up each spec's compile signature
            return validate_compile_cases(spec, self.level)
        if spec.compile_only:  # a compile probe: nothing to run or compare
            return []
        return validate_cases(spec, self.level)


def _worker_id(config: pytest.Config) -> str:
    workerinput = getattr(config, "workerinput", None)
    return workerinput["workerid"] if workerinput else "main"


def _share_cpu_threads(config: pytest.Config) -> None:
    """Split the cores between xdist workers: with every worker using all of them, torch's CPU
    ops (references, comparisons) thrash; on a 16-core host with 14 workers a 6000-element
    comparison took 10 s."""
    import os

    import torch

    workers = int(config.workerinput.get("workercount", 1))  # type: ignore[attr-defined]
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(workers, 1)))


def _is_engine_selftest(config: pytest.Config) -> bool:
    """tests/ exercise the engine itself and must not need a backend or kernels."""
    args = [str(a) for a in config.args]
    return bool(args) and all(Path(a.split("::")[0]).resolve().is_relative_to(Path("tests").resolve())
                              for a in args)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "parity_modes(*modes): backend modes a suite runs under")
    if _is_engine_selftest(config):
        return
    configure_began = time.time()
    if config.getoption("--no-fit"):
        from parity.fit.hook import turn_off
        turn_off()
    from parity.report.notes import BLOCK_PTR_FILTER
    config.addinivalue_line("filterwarnings", BLOCK_PTR_FILTER)  # said once in the terminal summary instead
    backend = get_backend(config.getoption("--backend"))
    set_current_backend(backend.name)  # launchers ask parity.current_backend(); one backend per process
    arch_option = backend.arch_option  # compile tiers name their target (--cuda-arch, ...)
    if arch_option and config.getoption(arch_option, None) is not None:
        backend.arch = config.getoption(arch_option)
    if backend.mode != "compile":  # compile tiers also stop the disk autotune cache (parity.compile.sandbox)
        point_triton_at(triton_cache_dir(backend.name))
    backend.prepare()
    from parity.run import redzone

    if redzone.applies(backend):  # kernels run on host memory: every launch between red zones, first layer in
        redzone.install()
    reason = backend.unavailable()
    if reason and backend.hardware:
        raise pytest.UsageError(f"the {backend.name} session needs its device: {reason}.\n"
                                f"No such device here? Run a hardware-free tier instead: {backend.fallback_hint}")
    worker = _worker_id(config)
    from parity.triage import interrupt

    interrupt.install(forward=worker == "main")  # Ctrl-C or a job stop: cases it cuts are `interrupted`
    if worker != "main":
        _share_cpu_threads(config)
        if not reason:
            backend.select_device(int(worker.lstrip("gw") or 0))
        if backend.mode == "run":  # workers share one Triton cache: compile each binary in one of them
            from parity.compile import once
            once.install(triton_cache_dir(backend.name) / "compile-locks")
    try:
        requested = [k.strip() for k in config.getoption("--kernels").split(",")]
        replay = config.getoption("--replay")
        if replay:  # a recorded workload's launches instead of the specs (parity.record.replay)
            from parity.record.replay import selected
            specs, replayed = selected(replay, [r for r in requested if r])
        else:
            replayed = None
            _, specs = registry.build(requested)
        check_sweeps(specs, config.getoption("--level"))  # a dynamic arg no case has: an error before any run
    except SpecError as exc:
        raise pytest.UsageError(str(exc)) from None
    final_dir = Path(config.getoption("--results-dir") or Path("reports") / backend.name)
    problem = rundir.unusable(final_dir)
    if problem:
        raise pytest.UsageError(problem.replace("<backend>", backend.name))
    results_dir = rundir.staging_dir(final_dir)
    state = ParitySession(backend=backend, level=config.getoption("--level"), seed=config.getoption("--seed"),
                          results_dir=results_dir, final_dir=final_dir, specs=specs, worker=worker,
                          unavailable=reason, selected=bool(config.getoption("--kernels").strip()),
                          ref_cache=ReferenceCache(enabled=not config.getoption("--no-ref-cache")))
    state.replay = replayed
    if config.getoption("--shard"):  # this run's share of the kernels, every case of each (parity.driver.shard)
        state.specs = shard.apply(config, state.specs, lambda s: len(state.cases(s)))
    perf_option = config.getoption("perf")
    if perf_option is None:
        timed = backend.mode == "run" and backend.times_kernels
        perf_option = "largest" if timed and state.level == "full" else "off"
    state.perf = perf_option
    state.retune = bool(config.getoption("retune"))
    state.kernels_option = config.getoption("--kernels")
    if config.getoption("--sanitize", False):
        from parity.run import sanitize

        if not (backend.mode == "run" and backend.target == "cuda"):
            raise pytest.UsageError(f"--sanitize runs cases under NVIDIA's compute-sanitizer, on a CUDA tier "
                                    f"(nox -s cuda); {backend.name} has no CUDA device. The CPU tiers (interpret, "
                                    "ascend-lowered) guard every launch with red zones already")
        if not reason and sanitize.missing():
            raise pytest.UsageError(sanitize.missing())
        state.sanitize = True
    state.workers = int(getattr(config.option, "numprocesses", 0) or 0)
    if worker != "main":  # a segfault's thread stacks go to a file the crashed record names, not the terminal
        config.pluginmanager.register(crash_log.StackFile(crash_log.stacks_path(results_dir, worker)))
    watchdog.install(config, results_dir, worker, state.workers)  # the case bound, held from the controller
    if state.is_controller:
        # the last complete results stay in place until this run has its own (rundir.promote)
        rundir.begin(final_dir)
        started = process_start()
        if started is not None:
            state.clock.stamp("process", started)
        state.clock.stamp("configure", configure_began)
        state.clock.stamp("configured")
        config.pluginmanager.register(ItemSpans(state.clock), "parity-item-spans")
        config.pluginmanager.register(progress.status_line(config, backend.name, final_dir, state.level, state.workers),
                                      "parity-progress")  # its time left: an earlier complete run's, or none
        if state.perf != "off" and state.workers and backend.mode == "run" and backend.times_kernels and not reason:
            from parity.perf.stage import preload_peers
            preload_peers(specs)
    config.pluginmanager.register(heap, "parity-heap")  # the start-up heap leaves full collections (gc.freeze)
    config.stash[STATE_KEY] = state


def session_of(config: pytest.Config) -> ParitySession | None:
    return config.stash.get(STATE_KEY, None)


def pytest_report_header(config: pytest.Config) -> str | None:
    state = session_of(config)
    return crash_log.no_workers_header(state.workers, state.backend.mode) if state else None


ALL_MODES = ("run", "interpret", "compile")


def declared_modes(*holders: Any) -> tuple[str, ...]:
    """The modes a parity_modes marker on a test function (or its module) allows; every mode without one."""
    for holder in holders:
        marks = getattr(holder, "pytestmark", [])
        for mark in marks if isinstance(marks, list) else [marks]:
            if getattr(mark, "name", None) == "parity_modes":
                return tuple(mark.args)
    return ALL_MODES


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> list[Any] | None:
    """Collect nothing from a suite whose parity_modes exclude this tier's mode: a compile suite is no
    skip in an interpret run, it is simply not part of it."""
    state = session_of(collector.config)
    if state is None or not callable(obj) or not name.startswith("test"):
        return None  # pytest's own collection
    module = getattr(collector, "obj", None)
    if name in state.backend.excluded_tests:  # e.g. a sweep another tier already covers
        return []
    return [] if state.backend.mode not in declared_modes(obj, module) else None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = session_of(metafunc.config)
    wants_case = "kernel_case" in metafunc.fixturenames
    wants_spec = "kernel_spec" in metafunc.fixturenames
    if not (wants_case or wants_spec):
        return
    name = "kernel_case" if wants_case else "kernel_spec"
    if state is None:
        metafunc.parametrize(name, [pytest.param(None, marks=pytest.mark.skip(
            reason="no parity session (engine self-tests run without a backend)"))])
        return
    try:
        if wants_case:
            params = [pytest.param((spec, case), id=f"{spec.name}[{case.id}]")
                      for spec in state.specs for case in state.cases(spec)]
        else:
            params = [pytest.param(spec, id=spec.name) for spec in state.specs]
    except SpecError as exc:
        raise pytest.UsageError(str(exc)) from None
    metafunc.parametrize(name, params)


@pytest.fixture(scope="session")
def parity(request: pytest.FixtureRequest) -> ParitySession:
    state = session_of(request.config)
    if state is None:
        pytest.skip("no parity session: pass --backend (the engine self-tests in tests/ need none)")
    if state.unavailable:
        pytest.skip(f"backend {state.backend.name} unavailable: {state.unavailable}")
    return state


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    state = session_of(item.config)
    if state is not None:
        state.item_started()


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: Any, sched: Any) -> None:
    """xdist: a worker died running `crashitem`: a `timeout` where parity's watchdog killed it (parity.run.watchdog),
    else `crashed`, with the signal, whatever the worker wrote for it before (parity.run.faults), and, where triage
    gives it to the kernel's author, AUTHOR.md and rerun.py (parity.repro.crash_repro)."""
    config = getattr(sched, "config", None)  # xdist's schedulers keep the controller's config
    state = session_of(config) if config is not None else None
    if config is None or state is None:
        return
    from parity.driver import pipeline
    from parity.repro import crash_repro
    from parity.run import faults

    node = getattr(report, "node", None)
    timed_out = watchdog.kill_record(config, crashitem, node, state.backend, state.results_dir)
    record = timed_out or faults.dead_worker_record(state.results_dir, crashitem, node, state.backend)
    if record is not None:  # a hang is no crash: no out-of-bounds hint, no rerun.py
        root = Path(config.rootpath)
        attach = None if timed_out else lambda r: crash_repro.attach(r, crashitem, state, root=root)
        spec = next((s for s in state.specs if s.name == record.get("kernel")), None)
        pipeline.conclude_dead_worker(state, record, spec, attach)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The run's end: each worker closes its part file; the controller runs the driver's RUN_END table
    (parity.driver.finish) with the pytest facts it needs handed in."""
    state = session_of(session.config)
    if state is None:
        return
    if state.writer is not None:
        state.writer.close()
    if not state.is_controller:
        return
    from parity.driver import finish  # the report and the perf pass: only a parity session's controller loads them

    config = session.config
    fields = {**watchdog.env_fields(config), **shard.env_fields(config.getoption("--shard", None), state.specs)}
    end = finish.finish(finish.RunEnd(state, interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
                                      items_done=_items_done(config), items_total=session.testscollected,
                                      env_fields=fields))
    if end.head:
        print(end.head.replace("> ", "parity: ").replace("**", "").strip(), file=sys.stderr)


def _items_done(config: pytest.Config) -> int:
    """Test items that reported an outcome (the terminal reporter sees xdist workers' reports too)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", {}) if reporter is not None else {}
    return len({getattr(r, "nodeid", None) for key, reps in stats.items() if key not in ("", "warnings")
                for r in reps if getattr(r, "nodeid", None)})


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = session_of(config)
    if state is None or not state.is_controller or not state.records:
        return
    from parity.report import terminal
    terminalreporter.section(f"parity: {state.backend.name} ({state.level})")
    terminalreporter.write_line(terminal.text(state.records, state.results_dir, state.backend.name, state.specs))
    terminalreporter.write_line(f"report: {ResultsDir(state.results_dir).report}")
