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


def test_the_phases_are_tables_in_their_order():
    from parity.driver import finish, sweep
    from parity.driver.phases import names

    assert names(pipeline.ACCURACY) == ("skip", "run", "store", "compare", "triage", "repro", "warm", "npu",
                                       "write")
    assert names(pipeline.COMPILE) == ("skip", "inputs", "run", "compare", "fit", "triage", "repro", "npu",
                                      "write")
    assert names(sweep.SPECIALIZATION) == ("compare", "triage", "repro", "write")
    assert names(finish.RUN_END) == ("wait", "merge", "carry", "perf", "write", "promote", "env", "report")
    for module, tables in ((pipeline, (pipeline.ACCURACY, pipeline.COMPILE)), (sweep, (sweep.SPECIALIZATION,)),
                           (finish, (finish.RUN_END,))):
        doc = module.__doc__ or ""
        assert all(" -> ".join(names(t)) in doc for t in tables), f"{module.__name__}'s docstring draws its tables"
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    for t in (pipeline.ACCURACY, pipeline.COMPILE, sweep.SPECIALIZATION, finish.RUN_END):
        assert " -> ".join(names(t)) in architecture, "docs/architecture.md draws the tables as the code runs them"


def test_the_table_is_what_runs_a_planted_phase_runs_in_its_place(monkeypatch):
    """The loop runs the table, not a fixed sequence: a phase planted in the table runs, in order, and a phase
    that settles the case leaves only the settled ones (triage, write) to run."""
    from dataclasses import dataclass, field

    from parity.driver.phases import Phase, run_phases

    @dataclass
    class Value:
        settled: bool = False
        seen: list[str] = field(default_factory=list)

    def step(name: str, settles: bool = False):
        def run(value: Value) -> None:
            value.seen.append(name)
            value.settled = value.settled or settles
        return run

    table = (Phase("run", step("run")), Phase("planted", step("planted")), Phase("repro", step("repro")),
             Phase("write", step("write"), settled=True))
    assert run_phases(Value(), table).seen == ["run", "planted", "repro", "write"]
    settling = (Phase("skip", step("skip", settles=True)), *table)
    assert run_phases(Value(), settling).seen == ["skip", "write"]
    assert run_phases(Value(), table, skip=("repro",)).seen == ["run", "planted", "write"]
    interrupted: list[str] = []

    def cut(value: Value) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_phases(Value(), (Phase("run", cut, interrupted=lambda v: interrupted.append("written")),
                             Phase("write", step("write"), settled=True)))
    assert interrupted == ["written"], "a phase's interruption handler runs before the re-raise"


def test_the_pipeline_runs_its_own_table(monkeypatch, tmp_path):
    """accuracy_case runs pipeline.ACCURACY: a planted phase in that table runs between its neighbours."""
    from parity.driver.phases import Phase

    order: list[str] = []

    def spy(name: str):
        def run(value) -> None:
            order.append(name)
            value.records.append({"phase": name})
        return run

    planted = tuple(Phase(p.name, spy(p.name), p.settled) for p in pipeline.ACCURACY)
    planted = (*planted[:4], Phase("planted", spy("planted")), *planted[4:])
    monkeypatch.setattr(pipeline, "ACCURACY", planted)
    pipeline.accuracy_case(None, None, None)  # type: ignore[arg-type]  (the spies read nothing)
    assert order == ["skip", "run", "store", "compare", "planted", "triage", "repro", "warm", "npu", "write"]


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
