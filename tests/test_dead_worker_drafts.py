"""A dead worker's case gets AUTHOR.md and rerun.py only where triage gives the crash to the kernel's author
(parity.driver.pipeline.conclude_dead_worker): a spin lock that the red-zone tier computed right is the tier's limit."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from parity.driver import pipeline
from parity.results import empty_record


def _crashed() -> dict[str, Any]:
    record = empty_record("ascend-lowered", "run", "locked_colsum", "launch=0", {"launch": 0, "out": "fp32"})
    record.update(suite="accuracy", status="crashed", input_digest="d",
                  reason="the process running this case died (killed by SIGKILL (signal 9)) before the case finished",
                  crash={"returncode": -9, "worker": "gw0"},
                  source_facts={"spin_lock": ["while tl.atomic_cas(lock, 0, 1) == 1"]})
    return record


def _conclude(tmp_path: Path, interpret_passed: bool) -> tuple[dict[str, Any], list[str]]:
    if interpret_passed:  # the red-zone tier's record of the same case, beside this run's results dir
        other = empty_record("interpret", "interpret", "locked_colsum", "launch=0", {"launch": 0, "out": "fp32"})
        other.update(suite="accuracy", status="passed", input_digest="d")
        (tmp_path / "interpret").mkdir()
        (tmp_path / "interpret" / "results.jsonl").write_text(json.dumps(other) + "\n")
    stored: list[dict[str, Any]] = []
    session = SimpleNamespace(results_dir=tmp_path / "ascend-lowered", store=stored.append)
    session.results_dir.mkdir()
    attached: list[str] = []
    pipeline.conclude_dead_worker(session, _crashed(), None, lambda r: attached.append(r["case"]))  # type: ignore[arg-type]
    return stored[0], attached


def test_a_spin_lock_the_red_zone_tier_computed_gets_no_author_draft(tmp_path):
    record, attached = _conclude(tmp_path, interpret_passed=True)
    assert record["owner"].who == "tier" and record["owner"].limit == "lowered-spin-lock"
    assert attached == []


def test_a_crash_nothing_settles_keeps_its_author_draft(tmp_path):
    # control: with no red-zone tier's record the crash stays the author's (provisional), with AUTHOR.md
    record, attached = _conclude(tmp_path, interpret_passed=False)
    assert record["owner"].who == "author" and record["owner"].provisional
    assert attached == ["launch=0"]


def test_the_interpreters_replay_of_its_own_recording_settles_the_spin_lock_too(tmp_path):
    # a bundle recorded under the interpreter: its replay there compared it with itself, but it ran to its end
    other = empty_record("interpret", "interpret", "locked_colsum", "launch=0", {"launch": 0, "out": "fp32"})
    other.update(suite="accuracy", status="passed", input_digest="d", replay={"recorded_on": "interpret"})
    (tmp_path / "interpret").mkdir()
    (tmp_path / "interpret" / "results.jsonl").write_text(json.dumps(other) + "\n")
    stored: list[dict[str, Any]] = []
    session = SimpleNamespace(results_dir=tmp_path / "ascend-lowered", store=stored.append)
    session.results_dir.mkdir()
    crashed = {**_crashed(), "replay": {"recorded_on": "interpret"}}
    pipeline.conclude_dead_worker(session, crashed, None, None)  # type: ignore[arg-type]
    owner = stored[0]["owner"]
    assert owner.limit == "lowered-spin-lock" and "interpret ran the same case to its end" in owner.evidence
