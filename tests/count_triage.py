"""A pytest plugin for tests/test_pipeline.py: counts the triage stage's calls on every record the session
stores, and writes {"stored": n, "calls": [per stored record]} to $PARITY_TRIAGE_COUNTS at the session's end."""

from __future__ import annotations

import json
import os
from typing import Any

import parity.triage.stage as stage
from parity.plugin import ParitySession

CALLS: dict[int, int] = {}
KEEP: list[dict[str, Any]] = []  # every record triage saw, kept alive so that an id is never reused
STORED: list[dict[str, Any]] = []
_triage, _store = stage.triage, ParitySession.store


def counted_triage(record: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    CALLS[id(record)] = CALLS.get(id(record), 0) + 1
    KEEP.append(record)
    return _triage(record, *args, **kwargs)


def counted_store(self: ParitySession, record: dict[str, Any]) -> None:
    STORED.append(record)
    _store(self, record)


stage.triage = counted_triage  # type: ignore[assignment]  (a test's spy, removed with its process)
ParitySession.store = counted_store  # type: ignore[method-assign]


def pytest_unconfigure(config: Any) -> None:
    out = os.environ.get("PARITY_TRIAGE_COUNTS")
    if out and STORED:
        calls = [CALLS.get(id(r), 0) for r in STORED]
        with open(f"{out}.{os.getpid()}", "w", encoding="utf-8") as fh:
            json.dump({"stored": len(STORED), "calls": calls,
                       "statuses": [r.get("status") for r in STORED]}, fh)
