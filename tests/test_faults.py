"""Fault injection: a hang, a dying process and a sticky device error each become a result,
and the cases after them still run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from parity.faults import crash_record, is_sticky_device_error, parse_node_id

ROOT = Path(__file__).resolve().parents[1]


def test_node_ids_parse_back_to_kernel_and_case():
    assert parse_node_id("suites/test_accuracy.py::test_accuracy[softmax[M=37,N=1,dtype=fp16]]") == (
        "softmax", "M=37,N=1,dtype=fp16", {"M": "37", "N": "1", "dtype": "fp16"})
    assert parse_node_id("tests/test_x.py::test_plain") is None
    record = crash_record("s.py::test_accuracy[k[N=1]]", "cuda", "run", "worker 'gw0' crashed")
    assert record["status"] == "crashed" and record["kernel"] == "k" and record["case"] == "N=1"


def test_sticky_errors_are_told_apart_from_ordinary_ones():
    assert is_sticky_device_error("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert not is_sticky_device_error("ValueError: shapes do not match")


def test_hang_segfault_and_sticky_error_are_recorded_and_the_run_goes_on(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/test_accuracy.py", "-q", "-p", "no:cacheprovider",
         "--backend=interpret", "--kernels=tests.planted_faults", f"--results-dir={tmp_path}",
         "-n", "1", "--timeout=10"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    records = {r["kernel"]: r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert records["fault_hang"]["status"] == "error"
    assert records["fault_hang"]["reason"].startswith("timeout")
    assert records["fault_segfault"]["status"] == "crashed"
    assert "crashed" in records["fault_segfault"]["reason"]
    assert records["fault_sticky"]["status"] == "crashed"
    assert "illegal memory access" in records["fault_sticky"]["reason"]
    assert records["correct_add"]["status"] == "passed"
    assert len(records) == 4
