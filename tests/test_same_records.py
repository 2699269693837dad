"""bench/same_records.py: the before/after check of a refactor sees a changed verdict and nothing else."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.synthetic_records import rec

spec = importlib.util.spec_from_file_location("same_records", Path(__file__).parents[1] / "bench" / "same_records.py")
same_records = importlib.util.module_from_spec(spec)
spec.loader.exec_module(same_records)


def test_a_changed_verdict_is_reported_and_a_moved_path_is_not():
    before = [rec("interpret", "interpret", "k", "n=1", "failed", reason="RuntimeError: boom (raised at /old/k.py:3)"),
              rec("interpret", "interpret", "k", "n=2", "passed")]
    after = [rec("interpret", "interpret", "k", "n=1", "failed", reason="RuntimeError: boom (raised at /new/k.py:3)"),
             rec("interpret", "interpret", "k", "n=2", "failed", metrics=before[1]["metrics"])]  # the control
    same, total, lines = same_records.differences(before, after, [("/old/", "/new/")])
    assert (same, total) == (1, 2) and len(lines) == 1 and "status 'passed' -> 'failed'" in lines[0]
