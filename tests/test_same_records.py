"""bench/same_records.py: the before/after check of a refactor sees a changed verdict and nothing else."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from parity.results import Status
from parity.results.files import plain
from tests.synthetic_records import rec

spec = importlib.util.spec_from_file_location("same_records", Path(__file__).parents[1] / "bench" / "same_records.py")
same_records = importlib.util.module_from_spec(spec)
spec.loader.exec_module(same_records)


def _failed(reason: str) -> dict:
    return plain(rec("interpret", "interpret", "k", "n=1", Status.FAILED, reason=reason))


def test_a_changed_verdict_is_reported_and_a_moved_path_or_address_is_not():
    before = [_failed("RuntimeError: <obj at 0x7f3ef1be0a10> (raised at /old/k.py:3)"),
              plain(rec("interpret", "interpret", "k", "n=2", Status.PASSED))]  # as results.jsonl holds them
    after = [_failed("RuntimeError: <obj at 0x7fef4c46bb90> (raised at /new/k.py:3)"),
             plain(rec("interpret", "interpret", "k", "n=2", Status.FAILED, metrics=before[1]["metrics"]))]  # control
    same, total, lines = same_records.differences(before, after, [("/old/", "/new/")])
    assert (same, total) == (1, 2) and len(lines) == 1 and "status 'passed' -> 'failed'" in lines[0]
