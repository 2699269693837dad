"""The case bound, held by the xdist controller whatever a worker does (issue 49).

pytest-timeout's `--timeout` runs inside the worker: SIGALRM, whose Python handler runs on the worker's main thread
between bytecodes. It never ends a worker stuck in C code that does not return, or with SIGALRM blocked, its
timer reset, or the exception the handler raises swallowed (the timer fires once); it covers no worker start-up
or collection either; and xdist's controller waits for a worker's next event without limit. So each worker notes
the item it runs and since when (`progress/<worker>.json` in the staging results dir, replaced atomically), and a
thread in the controller kills a worker whose item runs past `--timeout` plus a grace (first asking faulthandler
for its thread stacks), or that started no item within the start bound after it was spawned. xdist then reports
the item as crashed; parity's crash hook asks `Watchdog.killed` and records a `timeout` instead, with the
bound, its seconds and how long the case ran; xdist replaces the worker and the run goes on.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from parity import settings
from parity.results import Record, Status, empty_record
from parity.results.dirs import ResultsDir
from parity.results.files import retire_record
from parity.run import crash_log
from parity.run.faults import parse_node_id, suite_of

FOLDER = "progress"
DUMP_WAIT_S = 1.0  # between the stack dump and SIGKILL
POLL_S = 0.5


@dataclass(frozen=True)
class Bounds:
    case_s: float  # --timeout: one item, setup to teardown (a larger timeout marker on an item is not read)
    grace_s: float  # beyond it, for the worker's own bound to act and write its record
    start_s: float  # a worker's spawn to its first item (start-up and collection), before the grace


@dataclass(frozen=True)
class Overdue:
    bound: str  # "case" or "start"
    bound_s: float
    ran_s: float  # how long the item (or the start-up) had run when it was found overdue
    nodeid: str | None  # the item, for the case bound


@dataclass(frozen=True)
class Kill:
    worker: str
    pid: int
    bound: str
    bound_s: float
    grace_s: float
    ran_s: float
    nodeid: str | None
    stacks_asked: bool


def overdue(progress: dict[str, Any] | None, spawned_at: float, now: float, bounds: Bounds) -> Overdue | None:
    """What a worker is past, from its progress file (None: it has started no item) and when it was spawned.
    An idle worker (between items, or waiting for work) is past nothing."""
    if progress is None:
        ran = now - spawned_at
        return Overdue("start", bounds.start_s, ran, None) if ran > bounds.start_s + bounds.grace_s else None
    nodeid, started = progress.get("nodeid"), progress.get("started")
    if not nodeid or not isinstance(started, (int, float)):
        return None
    ran = now - started
    return Overdue("case", bounds.case_s, ran, str(nodeid)) if ran > bounds.case_s + bounds.grace_s else None


def progress_path(results_dir: Path, worker: str) -> Path:
    return results_dir / FOLDER / f"{worker}.json"


def read_progress(path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


class Progress:
    """A worker's pytest plugin: the item it runs and since when (epoch seconds), or none between items."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _note(self, nodeid: str | None) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "nodeid": nodeid, "started": time.time()}), encoding="utf-8")
        os.replace(tmp, self.path)  # the controller never reads half a file

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._note(nodeid)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self._note(None)


class Watchdog:
    """The controller's plugin: which worker was spawned when (xdist's newgateway hook), a thread that reads their
    progress files and kills the overdue ones, and the kills, for the crash hook and env.json."""

    def __init__(self, folder: Path, bounds: Bounds, poll_s: float = POLL_S) -> None:
        self.folder, self.bounds, self.poll_s = folder, bounds, poll_s
        self.spawned: dict[str, tuple[int, float]] = {}  # worker -> (pid, spawn time)
        self.kills: list[Kill] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_newgateway(self, gateway: Any) -> None:
        popen = getattr(getattr(gateway, "_io", None), "popen", None)  # a local worker; no pid, no bound (ssh)
        pid = getattr(popen, "pid", None)
        if not isinstance(pid, int):
            return
        with self.lock:
            self.spawned[str(gateway.id)] = (pid, time.time())
        if self.thread is None:
            self.thread = threading.Thread(target=self._watch, name="parity-watchdog", daemon=True)
            self.thread.start()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        with self.lock:
            self.spawned.pop(str(node.gateway.id), None)

    def pytest_sessionfinish(self) -> None:
        self.stop.set()

    def _watch(self) -> None:
        while not self.stop.wait(self.poll_s):
            self.check(time.time())

    def check(self, now: float) -> list[Kill]:
        with self.lock:
            workers = dict(self.spawned)
        done = []
        for worker, (pid, spawned_at) in workers.items():
            path = self.folder / f"{worker}.json"
            found = overdue(read_progress(path), spawned_at, now, self.bounds)
            if found is not None:
                kill = self._kill(worker, pid, found, path)
                done += [kill] if kill else []
        return done

    def _kill(self, worker: str, pid: int, found: Overdue, path: Path) -> Kill | None:
        began = time.monotonic()
        # a worker past its start bound has no stack file yet, and SIGUSR2 would end it unheard
        asked = found.bound == "case" and _signal(pid, crash_log.DUMP_SIGNAL)
        if asked:
            time.sleep(DUMP_WAIT_S)
            # the signal woke the worker, whose own timeout then ended the case: it may run the next one now
            if (read_progress(path) or {}).get("nodeid") != found.nodeid:
                return None
        with self.lock:
            self.spawned.pop(worker, None)  # killed once: xdist's replacement is another gateway
        _signal(pid, signal.SIGKILL)
        ran_s = round(found.ran_s + time.monotonic() - began, 1)  # to the kill, the stack dump's wait included
        kill = Kill(worker, pid, found.bound, found.bound_s, self.bounds.grace_s, ran_s, found.nodeid, asked)
        self.kills.append(kill)
        print(f"\nparity: {describe(kill)}; xdist replaces the worker", file=sys.stderr, flush=True)
        return kill

    def killed(self, worker: str) -> Kill | None:
        """This watchdog's kill of `worker`, if it made one (else the worker's death is a crash)."""
        return next((k for k in self.kills if k.worker == worker), None)

    def summary(self) -> list[dict[str, Any]]:
        return [asdict(k) for k in self.kills]


def _signal(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
    except OSError:  # already gone
        return False
    return True


def describe(kill: Kill) -> str:
    if kill.bound == "start":
        return (f"worker {kill.worker} started no test item within {kill.ran_s:g} s of its start (the start bound "
                f"{kill.bound_s:g} s plus {kill.grace_s:g} s grace): the controller killed it (SIGKILL)")
    return (f"the case ran {kill.ran_s:g} s, past the case bound (--timeout {kill.bound_s:g} s) plus "
            f"{kill.grace_s:g} s grace, and the worker's own timeout did not end it: the controller killed the "
            "worker (SIGKILL)")


def timeout_record(kill: Kill, crashitem: str, backend: Any, results_dir: Path) -> Record | None:
    """The `timeout` record of the case the watchdog killed its worker in: status error, reason `timeout: ...`
    (as pytest-timeout's own, so triage reads both alike), never passed. A record the worker wrote for it before
    (a pass, then a hang in its teardown) is retired from its part: the kill overrules it."""
    parsed = parse_node_id(crashitem)
    if parsed is None:
        return None
    kernel, case, params = parsed
    suite = suite_of(crashitem)
    before = None
    for part in [ResultsDir(results_dir).part(kill.worker)]:
        before = retire_record(part, kernel, case, suite) or before
    record = empty_record(backend.name, backend.mode, kernel, case, params)
    evidence = {k: v for k, v in asdict(kill).items() if k not in ("nodeid", "pid", "stacks_asked")}
    if before is not None:
        evidence["before"] = {"status": before.get("status"), "reason": before.get("reason")}
    record.update({"status": Status.ERROR, "suite": suite, "reason": f"timeout: {describe(kill)}", "timeout": evidence})
    stacks = crash_log.stacks_of(results_dir, kill.worker) if kill.stacks_asked else None
    if stacks:
        record["crash_stacks"] = stacks  # where each thread was when it was killed
    return record


def install(config: Any, results_dir: Path, worker: str, workers: int) -> None:
    """Each xdist worker notes its items; the controller of a run with workers and a `--timeout` watches them."""
    if worker != "main":
        config.pluginmanager.register(Progress(progress_path(results_dir, worker)), "parity-progress-file")
        return
    case_s = case_bound(config)
    s = settings.current()
    if workers and case_s > 0 and not s.no_watchdog:
        bounds = Bounds(case_s=case_s, grace_s=s.hang_grace_s, start_s=max(case_s, s.worker_start_s))
        config.pluginmanager.register(Watchdog(results_dir / FOLDER, bounds), "parity-watchdog")


def case_bound(config: Any) -> float:
    """pytest-timeout's bound per item: its option, else its ini value; 0 without either (or without it)."""
    try:
        return float(config.getoption("timeout", None) or config.getini("timeout") or 0)
    except ValueError:  # pytest-timeout is not loaded
        return 0.0


def kill_record(config: Any, crashitem: str, node: Any, backend: Any, results_dir: Path) -> Record | None:
    """The timeout record of a worker death the watchdog caused, else None (the death is a crash)."""
    manager = getattr(config, "pluginmanager", None)
    dog = manager.get_plugin("parity-watchdog") if manager is not None else None
    worker = str(getattr(getattr(node, "gateway", None), "id", "") or "")
    kill = dog.killed(worker) if isinstance(dog, Watchdog) else None
    if kill is None:
        return None
    if kill.nodeid == crashitem:
        return timeout_record(kill, crashitem, backend, results_dir)
    return not_run_record(kill, crashitem, backend)


def not_run_record(kill: Kill, crashitem: str, backend: Any) -> Record | None:
    """The item xdist names when the kill landed as its worker moved on to it: it did not run, so it is a skip
    (no crash of its own, no finding)."""
    parsed = parse_node_id(crashitem)
    if parsed is None:
        return None
    record = empty_record(backend.name, backend.mode, *parsed)
    record.update({"status": Status.SKIPPED, "suite": suite_of(crashitem),
                   "reason": f"not run: parity's watchdog killed its worker as it started this case ({describe(kill)}, "
                             f"in {kill.nodeid}); run it again"})
    return record


def env_fields(config: Any) -> dict[str, Any]:
    """env.json's `worker_kills`, where the watchdog killed any worker."""
    dog = config.pluginmanager.get_plugin("parity-watchdog")
    return {"worker_kills": dog.summary()} if isinstance(dog, Watchdog) and dog.kills else {}


def tidy(results_dir: Path) -> None:
    """The progress files are the run's own business: none reaches the results dir."""
    shutil.rmtree(results_dir / FOLDER, ignore_errors=True)
