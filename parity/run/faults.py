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
from typing import Any

from parity.results import empty_record

STICKY_DEVICE_ERROR_RE = re.compile(
    r"illegal memory access|misaligned address|device-side assert|unspecified launch failure|"
    r"illegal instruction|CUDA error: an? |aicore exception|AICore.*(error|exception)|ACL_ERROR_RT",
    re.IGNORECASE)
TIMEOUT_PREFIX = "Timeout"  # pytest-timeout's failure message starts with it


def is_sticky_device_error(text: str | None) -> bool:
    return bool(text) and STICKY_DEVICE_ERROR_RE.search(text) is not None


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


def crash_record(nodeid: str, backend: str, mode: str, reason: str) -> dict[str, Any] | None:
    """The record for a case whose process died before it could write its own."""
    parsed = parse_node_id(nodeid)
    if parsed is None:
        return None
    kernel, case, params = parsed
    record = empty_record(backend, mode, kernel, case, params)
    record.update(status="crashed", reason=reason, suite="accuracy" if "test_accuracy" in nodeid else None)
    return record
