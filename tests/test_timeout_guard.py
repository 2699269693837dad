"""The case bound holds whatever a worker does (issue 49): the xdist controller kills a worker whose case runs
past `--timeout` plus a grace, or that starts no case within the start bound, and the case is a `timeout`.
Controls: a worker inside its bound, an idle one, one that its own timeout revives, and a run without the
watchdog, which hangs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from parity.run import watchdog
from parity.run.watchdog import Bounds, Watchdog, overdue

ROOT = Path(__file__).resolve().parents[1]
BOUNDS = Bounds(case_s=2.0, grace_s=1.0, start_s=10.0)
NODE = "suites/test_accuracy.py::test_accuracy[hang_blocked[N=4,dtype=fp32]]"


def test_overdue_is_past_the_bound_plus_the_grace_and_never_idle():
    running = {"pid": 1, "nodeid": NODE, "started": 100.0}
    assert overdue(running, 0.0, 103.5, BOUNDS) == watchdog.Overdue("case", 2.0, 3.5, NODE)
    assert overdue(running, 0.0, 102.5, BOUNDS) is None  # past --timeout, inside the grace: the worker's own turn
    assert overdue({"pid": 1, "nodeid": None, "started": 0.0}, 0.0, 1e6, BOUNDS) is None  # idle between cases
    assert overdue(None, 100.0, 111.5, BOUNDS) == watchdog.Overdue("start", 10.0, 11.5, None)  # no case yet
    assert overdue(None, 100.0, 110.5, BOUNDS) is None


def _worker(body: str) -> subprocess.Popen:
    """A stand-in worker process: `body` runs, then it sleeps (killed at the latest by the test's end)."""
    return subprocess.Popen([sys.executable, "-c", f"import json, signal, time\n{body}\ntime.sleep(60)"])


def test_the_watchdog_kills_an_overdue_worker_only(tmp_path):
    folder = tmp_path / "progress"
    folder.mkdir()
    now = time.time()
    dog = Watchdog(folder, BOUNDS)
    dog.thread = SimpleNamespace()  # no thread: the test calls check() itself
    revive = ("def woken(*_):\n"
              f"    open({str(folder / 'gw3.json')!r}, 'w').write(json.dumps({{'nodeid': None, 'started': 0}}))\n"
              "signal.signal(signal.SIGUSR2, woken)")
    procs = {w: _worker(revive if w == "gw3" else "pass") for w in ("gw0", "gw1", "gw2", "gw3", "gw4")}
    try:
        progress = {"gw0": {"nodeid": NODE, "started": now - 10},  # overdue: killed
                    "gw1": {"nodeid": NODE, "started": now},  # inside its bound
                    "gw2": {"nodeid": None, "started": now - 100},  # idle
                    "gw3": {"nodeid": NODE, "started": now - 10}}  # overdue, but its own timeout ends the case
        for worker, state in progress.items():
            (folder / f"{worker}.json").write_text(json.dumps(state))
        time.sleep(0.5)  # gw3 installs its handler
        for worker, proc in procs.items():
            dog.pytest_xdist_newgateway(SimpleNamespace(id=worker, _io=SimpleNamespace(popen=proc)))
        dog.spawned["gw4"] = (procs["gw4"].pid, now - 20)  # spawned 20 s ago, no case started: the start bound
        kills = {k.worker: k for k in dog.check(time.time())}
        assert set(kills) == {"gw0", "gw4"}, kills
        assert kills["gw0"].bound == "case" and kills["gw0"].nodeid == NODE and kills["gw0"].stacks_asked
        assert kills["gw4"].bound == "start" and kills["gw4"].nodeid is None and not kills["gw4"].stacks_asked
        assert procs["gw0"].wait(10) < 0 and procs["gw4"].wait(10) == -signal.SIGKILL
        for worker in ("gw1", "gw2", "gw3"):  # the controls live on
            assert procs[worker].poll() is None, worker
        assert dog.check(time.time() + 0.1) == []  # a killed worker is not killed again
        assert "started no test item" in watchdog.describe(kills["gw4"])
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()


def _hook(tmp_path: Path, kill: watchdog.Kill | None, written: list[dict], crashitem: str = NODE) -> list[dict]:
    """parity's xdist crash hook over dead worker gw1, with a watchdog that made `kill`; the merged records."""
    from parity.backends import get_backend
    from parity.plugin import STATE_KEY, ParitySession, pytest_handlecrashitem
    from parity.results import merge_parts

    (tmp_path / "results-gw1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in written))
    state = ParitySession(backend=get_backend("interpret"), level="quick", seed=0, results_dir=tmp_path,
                          final_dir=tmp_path, specs=[], worker="main", workers=1)
    dog = Watchdog(tmp_path / "progress", BOUNDS)
    dog.kills += [kill] if kill else []
    manager = SimpleNamespace(get_plugin=lambda name: dog if name == "parity-watchdog" else None)
    config = SimpleNamespace(stash=pytest.Stash(), rootpath=ROOT, pluginmanager=manager)
    config.stash[STATE_KEY] = state
    node = SimpleNamespace(gateway=SimpleNamespace(id="gw1", _io=SimpleNamespace(popen=None)))
    pytest_handlecrashitem(crashitem=crashitem, report=SimpleNamespace(node=node), sched=SimpleNamespace(config=config))
    if state.writer is not None:
        state.writer.close()
    return merge_parts(tmp_path)


def _kill(nodeid: str = NODE) -> watchdog.Kill:
    return watchdog.Kill("gw1", 1, "case", 2.0, 1.0, 3.4, nodeid, False)


def test_a_killed_case_is_a_timeout_with_its_evidence_and_never_passed(tmp_path):
    from parity.results import OwnerKind, empty_record

    wrote = empty_record("interpret", "interpret", "hang_blocked", "N=4,dtype=fp32", {"N": 4})
    wrote.update(status="passed", suite="accuracy")  # then it hung in the case's teardown
    (only,) = _hook(tmp_path, _kill(), [wrote])
    assert only["status"] == "error" and only["reason"].startswith("timeout: the case ran 3.4 s"), only
    assert only["timeout"] == {"worker": "gw1", "bound": "case", "bound_s": 2.0, "grace_s": 1.0, "ran_s": 3.4,
                               "before": {"status": "passed", "reason": None}}
    assert only["owner"].who is not OwnerKind.TRITON  # a hang under the interpreter is no vendor's


def test_a_death_the_watchdog_did_not_cause_is_still_a_crash(tmp_path):
    (only,) = _hook(tmp_path, None, [])  # control: no kill, the usual crashed record
    assert only["status"] == "crashed" and "timeout" not in only


def test_a_case_the_kill_caught_at_its_start_is_not_run_not_a_crash(tmp_path):
    other = "suites/test_accuracy.py::test_accuracy[hang_after[N=4,dtype=fp32]]"
    (only,) = _hook(tmp_path, _kill(), [], crashitem=other)
    assert only["kernel"] == "hang_after" and only["status"] == "skipped" and only["reason"].startswith("not run")


def _run(results: Path, kernels: str = "tests.planted_hang", **env: str) -> subprocess.Popen:
    args = [sys.executable, "-m", "pytest", "suites/test_accuracy.py", "-q", "-p", "no:cacheprovider",
            "--backend=interpret", f"--kernels={kernels}", f"--results-dir={results}", "-n", "1", "--timeout=2"]
    # a fresh run: not this test's own xdist worker (with PYTEST_XDIST_WORKER=gw0 inherited, the run's controller
    # took itself for gw0 and hung in tests/planted_start_hang, where no watchdog can reach it)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    return subprocess.Popen(args, cwd=ROOT, env={**clean, "PARITY_HANG_GRACE_S": "1", **env},
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _end(proc: subprocess.Popen) -> str:
    """Kill the run's process group (its workers too: a hung one would outlive the test) and return its output."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    return proc.communicate()[0]


def test_a_hang_in_a_replacement_worker_is_cut_recorded_and_the_run_goes_on(tmp_path):
    proc = _run(tmp_path)
    try:
        out = proc.communicate(timeout=240)[0]
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run did not end: {_end(proc)[-3000:]}")
    assert proc.returncode == 1, out[-3000:]
    records = {r["kernel"]: r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert records["hang_kill_worker"]["status"] == "crashed"  # the first worker's death
    hang = records["hang_blocked"]
    assert hang["status"] == "error" and hang["reason"].startswith("timeout: the case ran"), hang
    assert hang["timeout"]["bound"] == "case" and hang["timeout"]["ran_s"] >= 4.0, hang["timeout"]
    stacks = (tmp_path / hang["crash_stacks"]).read_text()  # where it hung, dumped before the kill
    assert "planted_hang.py" in stacks and "_blocked_sleep" in stacks, stacks[-2000:]
    assert records["correct_add"]["status"] == "passed" and records["hang_after"]["status"] == "passed"
    env = json.loads((tmp_path / "env.json").read_text())
    assert [k["nodeid"] for k in env["worker_kills"]] == [NODE]
    assert not (tmp_path / "progress").exists()


def test_without_the_watchdog_the_same_run_hangs(tmp_path):
    """The negative control: the hang is seen running past the bound and the grace, with the run still alive."""
    proc = _run(tmp_path, PARITY_NO_WATCHDOG="1")
    try:
        deadline, seen = time.monotonic() + 180, None
        while time.monotonic() < deadline and proc.poll() is None:
            found = watchdog.read_progress(tmp_path / ".running" / "progress" / "gw1.json") or {}
            if found.get("nodeid") == NODE and time.time() - found["started"] > BOUNDS.case_s + BOUNDS.grace_s + 5:
                seen = found
                break
            time.sleep(0.5)
        assert seen is not None and proc.poll() is None, "the run ended or never reached the hang"
        assert not (tmp_path / "results.jsonl").exists()
    finally:
        _end(proc)


def test_a_worker_that_never_starts_a_case_is_replaced(tmp_path):
    """The run-level bound: gw0 hangs while it loads the specs; killed 60 s + 1 s after its spawn, gw1 runs the
    case (a worker starts in about 10 s on a quiet machine, longer beside CI's venv builds)."""
    proc = _run(tmp_path, "tests.planted_start_hang", PARITY_WORKER_START_S="60")
    try:
        out = proc.communicate(timeout=480)[0]
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run did not end: {_end(proc)[-3000:]}")
    assert proc.returncode == 0, out[-3000:]
    (only,) = map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())
    assert only["kernel"] == "correct_add" and only["status"] == "passed" and only["worker"] == "gw1"
    (kill,) = json.loads((tmp_path / "env.json").read_text())["worker_kills"]
    assert kill["worker"] == "gw0" and kill["bound"] == "start" and kill["nodeid"] is None and kill["ran_s"] >= 61
    assert "worker gw0 started no test item" in out
