"""Interruption is not a finding: a case cut by Ctrl-C or a job stop is `interrupted`, with no draft, and a
SIGTERM to pytest alone (what nox sends after its interrupt timeout) still merges what the workers wrote."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from parity.driver import pipeline
from parity.triage import interrupt
from tests.tier_python import ROOT


def test_a_record_the_signal_cut_is_interrupted_and_a_finding_stays_failed():
    interrupt.reset()
    cut = {"status": "failed", "reason": "launch: KeyboardInterrupt", "compile": {"ok": False}}
    assert interrupt.settle(cut) and cut["status"] == "interrupted"
    finding = {"status": "failed", "reason": "output 'out': 3% of elements outside atol"}  # negative control
    assert not interrupt.settle(finding) and finding["status"] == "failed"
    interrupt.note()
    try:
        assert interrupt.settle(finding) and finding["status"] == "interrupted"  # after the signal, no finding
    finally:
        interrupt.reset()


def test_an_interrupted_case_gets_no_draft(tmp_path):
    from parity.backends import get_backend
    from parity.run.refcache import ReferenceCache
    from tests import planted_repro

    spec = planted_repro.SPECS[0]
    case = spec.cases("quick")[0]
    record = {"backend": "interpret", "kernel": spec.name, "case": case.id, "params": dict(case.params),
              "status": "failed", "reason": "KeyboardInterrupt", "metrics": {}}
    pipeline.judge_and_repro(record, spec, case, get_backend("interpret"), seed=0, cache=ReferenceCache(enabled=False),
                     results_dir=tmp_path)
    assert record["status"] == "interrupted" and "owner" not in record and not list(tmp_path.rglob("*.md"))


def test_sigterm_to_pytest_alone_merges_and_stops_the_workers(tmp_path):
    marks = tmp_path.parent / f"{tmp_path.name}-marks"
    env = {**os.environ, "TRITON_INTERPRET": "1", "PARITY_SLOW_MARK": str(marks)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "suites/test_accuracy.py", "-q", "-p", "no:cacheprovider",
         "--backend=interpret", "--kernels=tests.planted_slow", f"--results-dir={tmp_path}", "-n", "2"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(list(marks.glob("*"))) < 2:
            time.sleep(0.5)
        assert len(list(marks.glob("*"))) >= 2, "the workers never reached their launches"
        time.sleep(1)  # both workers are inside their 30 s launches
        os.kill(proc.pid, signal.SIGTERM)  # the controller alone, as nox does
        t0 = time.monotonic()
        out, _ = proc.communicate(timeout=120)
        seconds = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    merged = tmp_path / "results.jsonl"
    assert merged.exists(), out[-3000:]
    records = [json.loads(line) for line in merged.read_text().splitlines()]
    assert records and {r["status"] for r in records} == {"interrupted"}, records
    assert json.loads((tmp_path / "env.json").read_text())["interrupted"] is True
    assert not [p for p in tmp_path.rglob("*.md") if p.name != "REPORT.md"]  # no draft of any kind
    assert seconds < 25, f"the run took {seconds:.0f} s to stop: the workers were not stopped"


def test_a_draft_written_before_the_signal_goes_when_the_case_is_settled(tmp_path):
    from parity.triage import settle_interrupted

    drafted = tmp_path / "repros" / "k__n=1"
    drafted.mkdir(parents=True)
    (drafted / "AUTHOR.md").write_text("status error")
    record = {"status": "error", "reason": "boom", "repro": "repros/k__n=1"}
    interrupt.reset()
    assert not settle_interrupted(dict(record), tmp_path) and drafted.exists()  # negative control: no signal
    interrupt.note()
    try:
        assert settle_interrupted(record, tmp_path)
    finally:
        interrupt.reset()
    assert record["status"] == "interrupted" and "repro" not in record and not drafted.exists()
    assert tmp_path.exists()  # only the case's own dir, never the results dir
    outside = {"status": "error", "reason": "KeyboardInterrupt", "repro": ".."}
    assert settle_interrupted(outside, tmp_path) and tmp_path.exists()


def test_the_banner_points_at_previous_only_when_it_exists_and_the_counts_say_interrupted():
    from parity.report.backend_md import terminal_summary
    from parity.run import rundir

    without = rundir.banner(True, 3, 10, [], previous=False)
    assert "previous/" not in without and "no complete run" in without
    assert "`previous/`" in rundir.banner(True, 3, 10, [], previous=True)
    records = [{"backend": "interpret", "mode": "interpret", "kernel": "k", "case": f"n={i}", "status": s,
                "metrics": {}, "tolerance": {}} for i, s in enumerate(("passed", "interrupted", "interrupted"))]
    lines = terminal_summary(records).splitlines()
    head = next(line for line in lines if line.startswith("kernel") and "results" in line)
    row = lines[lines.index(head) + 2]
    assert "interrupted" in head and row.split()[6:8] == ["0", "2"], (head, row)  # skip 0, interrupted 2
    plain = terminal_summary(records[:1]).splitlines()
    assert "interrupted" not in next(line for line in plain if line.startswith("kernel") and "results" in line)
