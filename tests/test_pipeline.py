"""The pipeline: a case's phases in order, triage called exactly once per record, and report time writing
no results dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.driver import pipeline
from parity.results import MERGED_NAME, empty_record, write_results

ROOT = Path(__file__).resolve().parents[1]


def test_the_phases_are_named_in_their_order():
    assert pipeline.PHASES == ("run", "compare", "store", "triage", "shrink", "capture", "repro", "verify", "write")
    doc = pipeline.__doc__ or ""
    assert all(phase in doc for phase in pipeline.PHASES)


def _counts(tmp_path: Path, backend: str, kernels: str) -> dict[str, list]:
    env = {**os.environ, "TRITON_INTERPRET": "1" if backend == "interpret" else "0",
           "PARITY_TRIAGE_COUNTS": str(tmp_path / "counts")}
    if backend != "interpret":
        env.pop("TRITON_INTERPRET")
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites", "-q", "-p", "no:cacheprovider", "-p",
                           "tests.count_triage", f"--backend={backend}", f"--kernels={kernels}",
                           f"--results-dir={tmp_path / backend}", "-n", "0"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    found = [json.loads(p.read_text()) for p in tmp_path.glob("counts.*")]
    assert len(found) == 1, "the spy plugin must report from the one pytest process"
    lines = (tmp_path / backend / MERGED_NAME).read_text().splitlines()
    assert found[0]["stored"] == len(lines), "every record written went through the spy"
    return found[0]


@pytest.mark.parametrize(("backend", "kernels"), [("interpret", "tests.planted_mistakes"),
                                                  ("cuda-compile", "tests.planted_mistakes")])
def test_triage_runs_exactly_once_per_record(tmp_path, backend, kernels):
    if backend == "cuda-compile":
        pytest.importorskip("triton.backends.nvidia", reason="cuda-compile needs upstream triton's nvidia backend")
    counts = _counts(tmp_path, backend, kernels)
    failing = [s for s in counts["statuses"] if s in ("failed", "error", "xfailed", "crashed")]
    assert failing, "the planted kernels must fail, or the check saw no failing record's triage"
    assert set(counts["calls"]) == {1}, list(zip(counts["statuses"], counts["calls"], strict=True))


def test_the_spy_would_catch_a_second_triage(tmp_path, monkeypatch):
    """Negative control: a record triaged twice (as the plugin once did after the repro stage) counts 2."""
    from tests import count_triage

    record = {**empty_record("interpret", "interpret", "k", "N=8", {"N": 8}), "suite": "accuracy",
              "status": "failed", "reason": "x"}
    monkeypatch.setattr(count_triage, "CALLS", {})
    from parity.triage import NoEvidence

    count_triage.counted_triage(record, NoEvidence())
    count_triage.counted_triage(record, NoEvidence())
    assert count_triage.CALLS[id(record)] == 2


def _failing_compile(tier: str, ok: bool) -> dict:
    record = empty_record(tier, "compile", "k", "N=8", {"N": 8})
    record.update(suite="compile", status="passed" if ok else "failed", reason=None if ok else "error: x",
                  compile={"ok": ok, "error_kind": None if ok else "mlir_error", "message": "" if ok else "error: x",
                           "stage_reached": "ttir"})
    return record


def test_report_time_triage_leaves_every_results_file_byte_identical(tmp_path):
    from parity import cli
    from parity.triage import decide
    from parity.triage.merged import annotate

    alone = _failing_compile("ascend-compile", False)
    alone["owner"] = decide(alone, {})  # run alone: a provisional vendor guess
    upstream = _failing_compile("cuda-compile", False)
    upstream["owner"] = decide(upstream, {})
    dirs = {}
    for record in (alone, upstream):
        d = tmp_path / record["backend"]
        write_results(d, [record])
        (d / "env.json").write_text(json.dumps({"backend": record["backend"]}))
        dirs[record["backend"]] = d
    before = {name: (d / MERGED_NAME).read_bytes() for name, d in dirs.items()}
    # control: the merged view's owners do change, so a report that wrote them back would change the files
    loaded = {name: [json.loads(line) for line in b.decode().splitlines()] for name, b in before.items()}
    assert annotate(loaded, dirs) >= 1
    assert cli.main(["report", *map(str, dirs.values()), "--out", str(tmp_path / "DIVERGENCE.md")]) == 0
    assert {name: (d / MERGED_NAME).read_bytes() for name, d in dirs.items()} == before
