"""The pytest plugin end to end, in subprocesses, as a user would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


def pytest_run(*args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)} if pythonpath else None
    return subprocess.run([sys.executable, "-m", "pytest", "suites", "-q", "-p", "no:xdist", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)


def test_interpret_run_writes_results_env_and_report(tmp_path):
    out = tmp_path / "interp"
    proc = pytest_run("--backend=interpret", "--kernels=vector_add", f"--results-dir={out}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["kernel"] for r in records} == {"vector_add"}
    assert all(r["status"] == "passed" and r["mode"] == "interpret" for r in records)
    assert len(records) == 13  # 9 shapes x dtypes, N=0, and 3 with NaN/Inf inputs
    env = json.loads((out / "env.json").read_text())
    assert env["backend"] == "interpret" and env["triton"]
    report = (out / "REPORT.md").read_text()
    assert "## Summary by kernel" in report and "| vector_add" in report
    assert "parity: interpret (quick)" in proc.stdout  # the terminal summary table
    # suites that cannot run in interpret mode (compile, specialization) are not collected, not skipped
    assert "skipped" not in proc.stdout and "13 passed" in proc.stdout, proc.stdout
    # each record accounts for the worker time since the previous one, and it encloses the timed phases
    for r in records:
        t = r["timing"]
        phases = t["inputs_s"] + t["ref_s"] + t["run_s"] + t["compare_s"] + t["store_s"]
        assert t["wait_s"] >= 0 and t["case_wall_s"] >= phases, t
        assert r["worker"] == "main"  # no xdist: the controller ran the cases


def test_unknown_backend_lists_valid_values():
    proc = pytest_run("--backend=tpu")
    assert proc.returncode != 0
    assert "interpret" in proc.stderr and "ascend-compile" in proc.stderr


def test_unknown_kernel_and_level_list_valid_values():
    proc = pytest_run("--backend=interpret", "--kernels=no_such_kernel")
    assert proc.returncode != 0 and "vector_add" in proc.stderr
    proc = pytest_run("--backend=interpret", "--level=huge")
    assert proc.returncode != 0 and "quick, full" in proc.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU, so the cuda session can run")
def test_hardware_session_without_device_is_an_error_naming_the_fallback():
    proc = pytest_run("--backend=cuda", "--kernels=vector_add")
    assert proc.returncode != 0
    assert "cuda-compile" in proc.stderr and "needs its device" in proc.stderr


def _part_lines(staging: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in staging.glob("results-*.jsonl"))


def test_interrupted_run_keeps_its_records_and_the_previous_results(tmp_path):
    """Ctrl-C mid-run: the records written so far are merged, REPORT.md opens by saying the run was
    interrupted, and the last complete results are kept in previous/ instead of being deleted."""
    import signal
    import time

    out = tmp_path / "res"
    assert pytest_run("--backend=interpret", "--kernels=vector_add", f"--results-dir={out}").returncode == 0
    complete = (out / "results.jsonl").read_text()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "suites", "-q", "-n", "2", "--backend=interpret",
                             "--kernels=basics", "--level=full", f"--results-dir={out}"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            # xdist workers ignore SIGINT, and a child would inherit that: give it Ctrl-C back
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while _part_lines(out / ".running") < 20 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2, output  # pytest's "interrupted"
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) >= 20
    first = (out / "REPORT.md").read_text().splitlines()[0]
    assert first.startswith("> **This run was interrupted**") and "did not" in first, first
    assert (out / "previous" / "results.jsonl").read_text() == complete
    assert not (out / ".running").exists()


def test_a_kernel_selection_does_not_drop_other_kernels_results(tmp_path):
    out = tmp_path / "res"
    assert pytest_run("--backend=interpret", "--kernels=vector_add", f"--results-dir={out}").returncode == 0
    assert pytest_run("--backend=interpret", "--kernels=softmax", f"--results-dir={out}").returncode == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["kernel"] for r in records} == {"vector_add", "softmax"}
    assert all(r.get("carried_over") for r in records if r["kernel"] == "vector_add")
    assert not any(r.get("carried_over") for r in records if r["kernel"] == "softmax")
    assert "carried over from the previous run" in (out / "REPORT.md").read_text()


def test_a_user_module_without_reference_or_with_a_syntax_error_is_one_usage_error(tmp_path):
    (tmp_path / "mine_noref.py").write_text(
        "from examples.user_kernels.l2norm import SPECS as BASE\nfrom parity import KernelSpec\n"
        "b = BASE[0]\nSPECS = [KernelSpec(name='noref', family='user', kernel=b.kernel, launch=b.launch,\n"
        "                      cases=b.cases, make_inputs=b.make_inputs)]\n")
    (tmp_path / "mine_syntax.py").write_text("SPECS = [\n")
    for module, says in (("mine_noref", "'noref': missing `reference`"), ("mine_syntax", "syntax error at")):
        proc = pytest_run("--backend=interpret", f"--kernels={module}", pythonpath=tmp_path)
        assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error
        assert "INTERNALERROR" not in proc.stdout + proc.stderr
        assert f"--kernels {module}: " in proc.stderr and says in proc.stderr, proc.stderr


def test_each_tier_collects_only_the_suites_of_its_mode(tmp_path):
    proc = pytest_run("--backend=cuda-compile", "--kernels=vector_add", f"--results-dir={tmp_path}", "--collect-only")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    suites = {line.split("::")[0] for line in proc.stdout.splitlines() if "::" in line}
    assert suites == {"suites/test_compile.py", "suites/test_specialization.py"}  # no accuracy in compile mode
