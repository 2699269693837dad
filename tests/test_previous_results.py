"""previous/ holds the last complete results of a results dir, however many runs after it are interrupted; a run
that replaces interrupted results puts them in unfinished/ (parity.run.rundir)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from parity.run import rundir
from tests.tier_python import ROOT


def finish(d: Path, tag: str, interrupted: bool) -> bool:
    """One run's end as the plugin does it: staged records, promote, then its env.json."""
    staging = rundir.begin(d)
    (staging / "results.jsonl").write_text(json.dumps({"kernel": tag}) + "\n")
    kept = rundir.promote(d)
    (d / "env.json").write_text(json.dumps({"backend": "interpret", "interrupted": interrupted}))
    return kept


def tag(d: Path) -> str | None:
    path = d / "results.jsonl"
    return json.loads(path.read_text())["kernel"] if path.exists() else None


def test_two_interruptions_after_a_complete_run_leave_it_in_previous(tmp_path):
    d = tmp_path / "interpret"
    assert finish(d, "A", interrupted=False) is False  # nothing before it
    assert finish(d, "B", interrupted=True) is True
    assert finish(d, "C", interrupted=True) is True
    assert (tag(d), tag(d / "previous"), tag(d / "unfinished")) == ("C", "A", "B")
    assert json.loads((d / "previous" / "env.json").read_text())["interrupted"] is False


def test_previous_follows_the_newest_complete_run(tmp_path):
    """Control: previous/ is not frozen at the first complete run; each complete run that is replaced goes there."""
    d = tmp_path / "interpret"
    finish(d, "A", interrupted=False)
    finish(d, "B", interrupted=True)
    finish(d, "C", interrupted=False)
    finish(d, "D", interrupted=True)
    assert (tag(d), tag(d / "previous")) == ("D", "C")
    finish(d, "E", interrupted=False)
    # D was interrupted: E replaces it, C (complete) stays in previous/, D goes to unfinished/
    assert (tag(d), tag(d / "previous"), tag(d / "unfinished")) == ("E", "C", "D")
    finish(d, "F", interrupted=False)
    assert tag(d / "previous") == "E"


def test_without_a_complete_run_the_banner_does_not_point_at_previous(tmp_path):
    d = tmp_path / "interpret"
    finish(d, "A", interrupted=True)
    assert finish(d, "B", interrupted=True) is False and tag(d / "previous") is None
    assert "previous/" not in rundir.banner(True, 1, 4, [], previous=False)


def tier(results_dir: Path, kernels: str, **popen: object) -> subprocess.Popen[str]:
    env = {**os.environ, "TRITON_INTERPRET": "1", **popen.pop("env", {})}  # type: ignore[dict-item]
    return subprocess.Popen([sys.executable, "-m", "pytest", "suites/test_accuracy.py", "-q", "-p", "no:cacheprovider",
                             "--backend=interpret", f"--kernels={kernels}", f"--results-dir={results_dir}", "-n", "0"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def interrupted_run(results_dir: Path, marks: Path) -> str:
    """A run of tests.planted_slow stopped by SIGTERM (what nox sends pytest on Ctrl-C) inside its first case."""
    proc = tier(results_dir, "tests.planted_slow", env={"PARITY_SLOW_MARK": str(marks)})
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not list(marks.glob("*")):
            time.sleep(0.5)
        assert list(marks.glob("*")), "the run never reached its launch"
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    for mark in marks.glob("*"):
        mark.unlink()
    return out


def test_a_real_complete_run_survives_two_real_interruptions(tmp_path):
    d = tmp_path / "interpret"
    proc = tier(d, "vector_add")
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out[-3000:]
    complete = (d / "results.jsonl").read_text()
    marks = tmp_path / "marks"
    for _ in range(2):
        out = interrupted_run(d, marks)
        assert json.loads((d / "env.json").read_text())["interrupted"] is True, out[-3000:]
    assert (d / "previous" / "results.jsonl").read_text() == complete
    assert json.loads((d / "previous" / "env.json").read_text())["interrupted"] is False
    unfinished = [json.loads(line) for line in (d / "unfinished" / "results.jsonl").read_text().splitlines()]
    assert {r["kernel"] for r in unfinished if not r.get("carried_over")} == {"slow_add"}  # the first interrupted run
    assert "the last complete results are in `previous/`" in (d / "REPORT.md").read_text()
