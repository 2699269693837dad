"""The specialization checker on the cuda-compile tier, with its negative controls."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parity.results import OwnerKind, Record, read_records

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("triton.backends.nvidia", reason="needs upstream triton (`pip install triton`) for cuda-compile")


def sweep(tmp_path: Path, kernels: str) -> tuple[subprocess.CompletedProcess, dict[str, Record]]:
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites/test_specialization.py", "-q", "-p", "no:xdist",
                           "--backend=cuda-compile", f"--kernels={kernels}", f"--results-dir={tmp_path}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    return proc, {r["kernel"]: r for r in read_records(tmp_path / "results.jsonl")}  # typed: each owner an Owner


def test_storm_twin_and_false_ir_claim_fail_while_the_shared_kernels_pass(tmp_path):
    proc, by_kernel = sweep(tmp_path, "vector_add,tril_mask,tests.planted_storm")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    twin = by_kernel["vector_add_specialized"]
    assert twin["status"] == "failed" and twin["specialization"]["verdict"] == "storm"
    assert twin["specialization"]["per_base_max"] > 1
    assert twin["timing"]["compile_s"] > 0  # the sweep's compiles are compile time, not harness overhead
    wrong = by_kernel["tril_mask_wrong_ir_claim"]
    assert wrong["status"] == "failed" and wrong["specialization"]["ir_problems"]
    shared = by_kernel["vector_add"]
    assert shared["status"] == "passed" and shared["specialization"]["per_base_max"] == 1
    tril = by_kernel["tril_mask"]
    assert tril["status"] == "passed" and tril["specialization"]["variants_seen"] == 2
    assert tril["specialization"]["ir_checked"] > 0
    report = (tmp_path / "REPORT.md").read_text()
    assert "Recompile storms: 1 of the " in report
    # the verdict says it too, with whose change it is: never "build ✓, every case that ran passed"
    assert twin["owner"].who is OwnerKind.AUTHOR and "do_not_specialize" in twin["owner"].evidence
    def verdict_row(kernel: str) -> str:  # the first table of REPORT.md is the verdict
        escaped = kernel.replace("_", "\\_")
        return next(ln for ln in report.splitlines() if ln.startswith(f"| {escaped} "))

    assert "build ✗ kernel fix" in verdict_row("vector_add_specialized"), report
    assert "build ✗ kernel fix" in verdict_row("tril_mask_wrong_ir_claim"), report  # the spec's false claim
    assert "✗" not in verdict_row("vector_add"), report  # its sweep passed: nothing to mark
    # a count over the sweep has no one launch to replay: no folder, and the record says why and how to re-run
    assert twin["repro"] is None and "not one launch that fails" in twin["repro_error"], twin["repro_error"]
    assert "suites/test_specialization.py::test_specialization[vector_add_specialized]" in twin["repro_error"]


def test_a_sweep_that_raises_is_recorded_not_only_failed_in_pytest(tmp_path):
    proc, by_kernel = sweep(tmp_path, "tests.planted_sweep_error")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    record = by_kernel["vector_add_unbound_name"]
    assert record["status"] == "error" and record["specialization"]["verdict"] == "error"
    assert "i_t is not defined" in record["reason"] and "N=" in record["reason"], record["reason"]
    assert "vector_add_unbound_name" in (tmp_path / "REPORT.md").read_text()
    # the case it stopped at, through the compile suite's repro path: a folder kept only because its script
    # fails the same way standalone, in a fresh process without parity
    assert record["repro"], record.get("repro_error")
    # the compile suite's record the folder was verified against: a compile failure, not a wrong result
    assert record["specialization"]["repro_from"]["compile"]["ok"] is False, record["specialization"]
    assert record["owner"].who is OwnerKind.AUTHOR, record.get("owner")  # a planted kernel of no library: its author
    script = tmp_path / record["repro"] / "repro.py"
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("TRITON_INTERPRET", "PYTHONPATH")}
    alone = subprocess.run([sys.executable, "-I", script.name], cwd=script.parent, capture_output=True, text=True,
                           timeout=300, env=env)
    assert alone.returncode == 1 and "i_t is not defined" in alone.stdout + alone.stderr, alone.stdout + alone.stderr


def test_a_generated_kernel_and_a_device_branch_are_swept_on_the_target_path(tmp_path):
    # codegen_scale launches a kernel exec'd at its first call (no spec can list it); device_branch launches
    # its kernel only on a device tensor, and falls back to torch on a CPU one (tests/planted_codegen.py)
    proc, by_kernel = sweep(tmp_path, "tests.planted_codegen")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    generated = by_kernel["codegen_scale"]
    assert generated["compiles"] >= 1 and generated["specialization"]["verdict"] == "ok", generated
    assert generated["params"]["launched"] == "pointwise_kernel"
    assert generated["params"]["defined_in"] == "<parity-codegen-scale>"
    branch = by_kernel["device_branch"]  # 0 compiles ("not launched") on plain CPU tensors
    assert branch["compiles"] >= 1 and branch["specialization"]["verdict"] == "ok", branch


def test_a_misnamed_dynamic_arg_is_a_spec_error_and_its_twin_finds_the_storm(tmp_path):
    # ("n",): the kernel's argument, not a case parameter; the sweep would vary nothing and read "ok"
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites", "-q", "-p", "no:xdist", "--backend=cuda-compile",
                           "--kernels=tests.planted_misnamed_dynamic", f"--results-dir={tmp_path / 'bad'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 4, proc.stdout + proc.stderr  # a usage error before any case runs
    assert "dynamic_args names 'n', which is no case parameter; the cases have 'N', 'dtype'" in proc.stderr
    assert "did you mean 'N'?" in proc.stderr
    proc, by_kernel = sweep(tmp_path / "fixed", "tests.planted_dynamic_fixed")
    record = by_kernel["scale_dynamic_n"]
    assert record["specialization"]["bases"] == 1 and record["specialization"]["verdict"] == "storm", record
    assert record["owner"].who is OwnerKind.AUTHOR
