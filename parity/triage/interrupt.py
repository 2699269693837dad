"""Interruption is not a finding: a case cut by Ctrl-C (SIGINT) or a job's stop (SIGTERM) is `interrupted`.

A compile in a forked child that the signal cut comes back as an error or a dead child; a launch cut
mid-way raises KeyboardInterrupt wherever it was. Either way the record would read `failed` and get a
vendor draft for a compile that is fine. The process notes the signal here (`install`), and every record
settled after it, or whose text shows the signal, becomes `interrupted`: no owner, no draft.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Mapping
from typing import Any

_SEEN = threading.Event()
_INSTALLED: dict[int, Any] = {}
SIGNALS = (signal.SIGINT, signal.SIGTERM)
EVIDENCE = re.compile(r"KeyboardInterrupt|killed by SIG(INT|TERM)|\bSIGINT\b|signal 2\b|Interrupted:", re.IGNORECASE)


def seen() -> bool:
    return _SEEN.is_set()


def note() -> None:
    _SEEN.set()


def reset() -> None:
    _SEEN.clear()


def install() -> None:
    """Note SIGINT/SIGTERM before the handler that was there runs (once per process, main thread only).
    SIGTERM (nox's terminate after its interrupt timeout, a CI job's stop) then ends the run as Ctrl-C
    does, so pytest's session end still merges what was written."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in SIGNALS:
        if sig in _INSTALLED:
            continue
        previous = signal.getsignal(sig)
        _INSTALLED[sig] = previous

        def handler(signum: int, frame: Any, previous: Any = previous) -> None:
            note()
            if callable(previous) and previous not in (signal.SIG_IGN, signal.SIG_DFL):
                previous(signum, frame)
            elif previous == signal.SIG_IGN:
                return
            else:
                raise KeyboardInterrupt(f"signal {signum}")

        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread of the interpreter
            _INSTALLED.pop(sig, None)


def was_cut(record: Mapping[str, Any]) -> bool:
    """Whether this failing record is the interruption's doing rather than the kernel's or a tool's."""
    if record.get("status") not in ("failed", "error", "crashed"):
        return False
    if seen():
        return True
    comp = record.get("compile") or {}
    text = "\n".join(str(x) for x in (record.get("reason"), comp.get("message"), comp.get("launch_error")) if x)
    return bool(EVIDENCE.search(text))


def settle(record: dict[str, Any]) -> bool:
    """Mark a record the interruption cut as `interrupted` (no owner, no draft); True when it did."""
    if not was_cut(record):
        return False
    before = record.get("reason")
    record["status"] = "interrupted"
    record["reason"] = "interrupted (Ctrl-C or a job stop) before the case finished" + (
        f"; what it had said: {str(before)[:200]}" if before else "")
    for key in ("owner", "finding_of"):
        record.pop(key, None)
    return True
