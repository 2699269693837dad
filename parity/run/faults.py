"""Telling crashes and hangs apart from ordinary failures, so none of them loses a result.

A sticky device error (an illegal memory access on CUDA, an AI-core exception on Ascend)
poisons the process's device context: every later case in that process would fail too.
Such a case is recorded as `crashed`, and an xdist worker then exits so that a fresh one,
with a clean context, runs the rest. A worker that dies outright (segfault, compiler abort)
is recorded by the controller from xdist's crash report. A hang is cut by pytest-timeout
and recorded as `error` with reason "timeout".
"""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import Any

from parity.results import Record, Status, empty_record
from parity.results.dirs import ResultsDir
from parity.results.files import retire_record
from parity.run import crash_log

STICKY_DEVICE_ERROR_RE = re.compile(
    r"illegal memory access|misaligned address|device-side assert|unspecified launch failure|"
    r"illegal instruction|CUDA error: an? |aicore exception|AICore.*(error|exception)|ACL_ERROR_RT",
    re.IGNORECASE)
TIMEOUT_PREFIX = "Timeout"  # pytest-timeout's failure message starts with it


def is_sticky_device_error(text: str | None) -> bool:
    return text is not None and STICKY_DEVICE_ERROR_RE.search(text) is not None


def is_timeout(exc: BaseException) -> bool:
    """pytest-timeout's signal method fails the test with a message starting "Timeout"."""
    import pytest

    return isinstance(exc, pytest.fail.Exception) and str(exc).startswith(TIMEOUT_PREFIX)


def parse_node_id(nodeid: str) -> tuple[str, str, dict[str, str]] | None:
    """(kernel, case id, params as text) from `...::test_x[kernel[k=v,...]]`, or None."""
    match = re.search(r"\[([A-Za-z0-9_]+)\[(.*)\]\]$", nodeid)
    if not match:
        return None
    kernel, case = match.group(1), match.group(2)
    params = dict(part.split("=", 1) for part in case.split(",") if "=" in part)
    return kernel, case, params


def suite_of(nodeid: str) -> str | None:
    return "accuracy" if "test_accuracy" in nodeid else "compile" if "test_compile" in nodeid else None


def crash_record(nodeid: str, backend: str, mode: str, reason: str,
                 crash: dict[str, Any] | None = None) -> Record | None:
    """The record for a case whose process died: before it wrote its own, or after (`crash["before"]` then
    keeps what it wrote, which the death overrules)."""
    parsed = parse_node_id(nodeid)
    if parsed is None:
        return None
    kernel, case, params = parsed
    record = empty_record(backend, mode, kernel, case, params)
    record.update({"status": Status.CRASHED, "reason": reason, "suite": suite_of(nodeid)})
    if crash is not None:
        record["crash"] = crash
    return record


def exit_words(returncode: int | None) -> str:
    """A dead process's exit status in words: `killed by SIGSEGV (signal 11)`, `exit code 3`."""
    if returncode is None:
        return "exit status unknown"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "signal"
        return f"killed by {name} (signal {-returncode})"
    return f"exit code {returncode}"


def worker_returncode(node: Any, wait_s: float = 5.0) -> int | None:
    """The dead xdist worker's exit status, from the Popen that execnet started it with (None where it
    cannot be read: another gateway kind, or a process that has not exited within `wait_s`)."""
    popen = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
    if popen is None:
        return None
    try:
        return int(popen.wait(timeout=wait_s))
    except Exception:  # (TimeoutExpired, or an execnet that holds it elsewhere)
        return None


def crash_reason(returncode: int | None) -> str:
    """The reason of a crashed record: what died and how, with the usual cause on a tier that computes. No
    worker id or node id: those differ between two crashes of one bug and would split its finding."""
    if returncode == -int(signal.SIGFPE):  # x86 traps a division by zero; GPUs and NPUs do not
        return (f"the process running this case died ({exit_words(returncode)}) before the case finished; on the "
                "CPU this is an integer division or remainder by zero (or INT_MIN / -1), which x86 traps")
    return (f"the process running this case died ({exit_words(returncode)}) before the case finished; "
            "under the interpreter or a CPU lowering this usually means an out-of-bounds access "
            "(an unmasked tl.load or tl.store)")


def dead_worker_record(results_dir: Path, crashitem: str, node: Any, backend: Any) -> Record | None:
    """The `crashed` record of the case an xdist worker died running, or None where the worker recorded its own
    crash (a sticky device error, after which it exits on purpose) or the run's interruption. A record it wrote
    before dying (a pass, then a heap the kernel corrupted) is retired from its part and kept as crash.before."""
    from parity.results import read_records

    parsed = parse_node_id(crashitem)
    if parsed is None:
        return None
    kernel, case, _ = parsed
    suite = suite_of(crashitem)
    worker = str(getattr(getattr(node, "gateway", None), "id", "") or "")
    for part in ResultsDir(results_dir).parts():
        for r in read_records(part):
            if (r["kernel"], r["case"]) == (kernel, case) and r["status"] in (Status.CRASHED, Status.INTERRUPTED):
                return None
    returncode = worker_returncode(node)
    before = None
    for part in (ResultsDir(results_dir).parts() if worker is None else [ResultsDir(results_dir).part(worker)]):
        before = retire_record(part, kernel, case, suite) or before
    crash: dict[str, Any] = {"returncode": returncode, "worker": worker or None}
    reason = crash_reason(returncode)
    if before is not None:
        crash["before"] = {"status": before.get("status"), "reason": before.get("reason"),
                           "metrics": before.get("metrics")}
        reason += f"; it had recorded `{before.get('status')}` before it died, which the death overrules"
    record = crash_record(crashitem, backend.name, backend.mode, reason, crash)
    stacks = crash_log.stacks_of(results_dir, worker)
    if stacks and record is not None:
        record["crash_stacks"] = stacks  # faulthandler's thread stacks, kept off the terminal
    return record
