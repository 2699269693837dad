"""Interruption is not a finding: a case cut by Ctrl-C (SIGINT) or a job's stop (SIGTERM) is `interrupted`.

A compile in a forked child that the signal cut comes back as an error or a dead child; a launch cut
mid-way raises KeyboardInterrupt wherever it was. Either way the record would read `failed` and get a
vendor draft for a compile that is fine. The process notes the signal here (`install`), and every record
settled after it, or whose text shows the signal, becomes `interrupted`: no owner, no draft.
"""

from __future__ import annotations

import os
import re
import signal
import threading
from typing import Any

from parity.results import Record, Status, empty_record

_SEEN = threading.Event()
_INSTALLED: dict[int, Any] = {}
SIGNALS = (signal.SIGINT, signal.SIGTERM)
CUTTABLE = (Status.FAILED, Status.ERROR, Status.CRASHED)  # the statuses an interruption may have caused
EVIDENCE = re.compile(r"KeyboardInterrupt|killed by SIG(INT|TERM)|\bSIGINT\b|signal 2\b|Interrupted:", re.IGNORECASE)


def seen() -> bool:
    return _SEEN.is_set()


def note() -> None:
    _SEEN.set()


def reset() -> None:
    _SEEN.clear()


def install(forward: bool = False) -> None:
    """Note SIGINT/SIGTERM before the handler that was there runs (once per process, main thread only).

    nox forwards no signal: on Ctrl-C it waits its interrupt_timeout, then sends SIGTERM to pytest alone.
    The first signal ends the run as Ctrl-C does (KeyboardInterrupt), so pytest's session end still merges
    what was written; later SIGTERMs (nox's, while that merge runs) are noted and ignored. With `forward`
    (the xdist controller) SIGTERM is passed on to the workers as SIGINT, so they stop writing too."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in SIGNALS:
        if sig in _INSTALLED:
            continue
        previous = signal.getsignal(sig)
        _INSTALLED[sig] = previous

        def handler(signum: int, frame: Any, previous: Any = previous) -> None:
            again = seen()
            note()
            if signum == signal.SIGTERM:
                if again:
                    return  # the run is already ending: let it finish merging
                if forward:
                    forward_to_children(signal.SIGINT)
                raise KeyboardInterrupt(f"signal {signum} (SIGTERM): the run was stopped")
            if callable(previous) and previous not in (signal.SIG_IGN, signal.SIG_DFL):
                previous(signum, frame)
            elif previous != signal.SIG_IGN:
                raise KeyboardInterrupt(f"signal {signum}")

        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread of the interpreter
            _INSTALLED.pop(sig, None)


def children() -> list[int]:
    """This process's child pids (Linux /proc; empty elsewhere)."""
    pids: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as fh:
                pids += [int(p) for p in fh.read().split()]
    except OSError:
        return []
    return sorted(set(pids))


def wait_for_children(timeout_s: float) -> None:
    """Give the workers a stopped run signalled the time to write their last records and exit."""
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(pid) for pid in children()):
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ", 1)[-1][:1] not in ("Z", "X")
    except OSError:
        return False


def forward_to_children(sig: int) -> None:
    for pid in children():
        try:
            os.kill(pid, sig)
        except OSError:
            continue


def was_cut(record: Record) -> bool:
    """Whether this failing record is the interruption's doing rather than the kernel's or a tool's."""
    if record.get("status") not in CUTTABLE:
        return False
    if seen():
        return True
    comp = record.get("compile") or {}
    text = "\n".join(str(x) for x in (record.get("reason"), comp.get("message"), comp.get("launch_error")) if x)
    return bool(EVIDENCE.search(text))


def settle(record: Record) -> bool:
    """Mark a record the interruption cut as `interrupted` (no owner, no draft); True when it did."""
    if not was_cut(record):
        return False
    before = record.get("reason")
    record["status"] = Status.INTERRUPTED
    record["reason"] = "interrupted (Ctrl-C or a job stop) before the case finished" + (
        f"; what it had said: {str(before)[:200]}" if before else "")
    record.pop("owner", None)
    record.pop("finding_of", None)
    return True


def drop_drafts(record: Record, results_dir: Any) -> None:
    """Remove the repro dir a settled record pointed at (written before the signal came) and the pointer."""
    import shutil
    from pathlib import Path

    rel = record.pop("repro", None)
    if not rel:
        return
    root = Path(results_dir).resolve()
    where = (root / str(rel)).resolve()
    if where != root and root in where.parents and where.is_dir():  # only ever inside the results dir
        shutil.rmtree(where, ignore_errors=True)


def interrupted_record(backend: Any, spec: Any, case: Any, suite: str) -> Record:
    """The record of a case the interruption cut before it had one of its own."""
    note()
    record = empty_record(backend.name, backend.mode, spec.name, case.id, dict(case.params))
    record["suite"] = suite
    record["status"] = Status.INTERRUPTED
    record["reason"] = "interrupted (Ctrl-C or a job stop) before the case finished"
    return record


def settle_interrupted(record: Record, results_dir: Any = None) -> bool:
    """settle; with `results_dir`, a draft the case got before the interruption settled it is removed (an
    interrupted case has no finding, so no AUTHOR.md or ISSUE.md may speak for it)."""
    if not settle(record):
        return False
    if results_dir is not None:
        drop_drafts(record, results_dir)
    return True
