"""Run one function in a forked child, so a compiler that aborts or hangs costs one result, not the run.

Compilers reached through Triton (MLIR passes inside libtriton, ptxas, bishengir-compile)
can abort the whole process (Torch-FL PR #64) or hang. The child inherits everything the
parent has imported, so nothing is re-imported; its return value comes back as JSON
(never pickle: nothing the child sends can run code in the parent) through a pipe, and its
stdout/stderr are kept so a crash can quote what the compiler said.
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

OUTPUT_TAIL_CHARS = 2000


@dataclass
class Isolated:
    """What happened in the child: a value, an exception, a crash or a timeout."""

    value: Any = None
    error: str | None = None  # the child raised: its exception, formatted
    crashed: str | None = None  # the child died without answering: signal or exit code
    timed_out: bool = False
    output: str = ""  # the tail of the child's stdout and stderr
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and self.crashed is None and not self.timed_out


def _child(fn: Callable[[], Any], write_fd: int, log_fd: int) -> None:
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    if faulthandler.is_enabled():
        # pytest points faulthandler at the terminal; a crash's Python stack belongs in the log
        faulthandler.enable(file=open(2, "w", closefd=False))
    torch = sys.modules.get("torch")
    if torch is not None:
        # GNU OpenMP's pool does not survive fork: the child's first parallel region hangs
        # unless it runs on one thread
        torch.set_num_threads(1)
    try:
        payload = {"value": fn()}
    except BaseException as exc:
        payload = {"error": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))}
    try:
        data = json.dumps(payload).encode()
    except (TypeError, ValueError) as exc:  # a non-JSON value is the caller's bug; say so instead of hanging
        data = json.dumps({"error": f"isolate: the result is not JSON-serialisable: {exc!r}"}).encode()
    with os.fdopen(write_fd, "wb") as fh:
        fh.write(data)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _read_all(read_fd: int, deadline: float) -> tuple[bytes, bool]:
    """Everything the child writes, or (partial, True) once the deadline passes."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"the process was killed by {name} ({sig})"
    return f"the process exited with code {os.WEXITSTATUS(status)} without a result"


def run_isolated(fn: Callable[[], Any], *, timeout_s: float) -> Isolated:
    """fn() in a forked child; never raises for what happens inside the child."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as log:
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            os.close(read_fd)
            _child(fn, write_fd, log.fileno())
        os.close(write_fd)
        try:
            data, timed_out = _read_all(read_fd, t0 + timeout_s)
        finally:
            os.close(read_fd)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        seconds = time.monotonic() - t0
        log.seek(0)
        output = log.read().decode(errors="replace")[-OUTPUT_TAIL_CHARS:]
    result = Isolated(output=output, seconds=seconds, timed_out=timed_out)
    if timed_out:
        return result
    try:
        payload = json.loads(data)
    except Exception:
        result.crashed = _describe_exit(status)
        return result
    result.value = payload.get("value")
    result.error = payload.get("error")
    return result
