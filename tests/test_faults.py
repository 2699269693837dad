"""Fault injection: a hang, a dying process and a sticky device error each become a result,
and the cases after them still run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.run.faults import crash_record, is_sticky_device_error, parse_node_id

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
    # the signal is named, and no worker or node id is in the reason (it would split one bug's finding)
    assert "killed by SIGSEGV (signal 11)" in records["fault_segfault"]["reason"], records["fault_segfault"]
    assert records["fault_segfault"]["crash"]["returncode"] == -11
    assert "gw" not in records["fault_segfault"]["reason"]
    assert records["fault_segfault"]["owner"]["who"] == "author"  # no tool is blamed on a crash
    # faulthandler's thread stacks went to the file the record names, not to the terminal (negative control: the
    # file holds them, so they were dumped)
    stacks = (tmp_path / records["fault_segfault"]["crash_stacks"]).read_text()
    assert "Fatal Python error: Segmentation fault" in stacks and "planted_faults.py" in stacks, stacks[-2000:]
    assert "Fatal Python error" not in proc.stdout + proc.stderr
    assert len(list((tmp_path / "crash-stacks").iterdir())) == 1  # the workers that did not crash leave no file
    # its repro dir: AUTHOR.md with the out-of-bounds hint, and rerun.py, which crashes again in a fresh process
    folder = tmp_path / records["fault_segfault"]["repro"]
    assert "## Out-of-bounds access" in (folder / "AUTHOR.md").read_text()
    again = subprocess.run([sys.executable, "rerun.py"], cwd=folder, capture_output=True, text=True, timeout=600)
    assert again.returncode == 1 and "FAIL: the case crashed again: killed by SIGSEGV" in again.stdout, \
        again.stdout[-2000:] + again.stderr[-2000:]
    assert records["fault_sticky"]["status"] == "crashed"
    assert "illegal memory access" in records["fault_sticky"]["reason"]
    assert records["correct_add"]["status"] == "passed"
    assert len(records) == 4


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU: a real out-of-bounds write and "
                    "a 2 GiB tensor past 2^31 elements (run on the GPU host: pytest tests/test_faults.py)")
def test_real_out_of_bounds_write_is_crashed_and_later_cases_pass(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/test_accuracy.py", "-q", "-p", "no:cacheprovider",
         "--backend=cuda", "--level=full", "--no-perf", "--kernels=tests.planted_gpu_faults",
         f"--results-dir={tmp_path}", "-n", "1", "--timeout=300"],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    records = {(r["kernel"], r["case"]): r
               for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    by_kernel = {}
    for (kernel, _), r in records.items():
        by_kernel.setdefault(kernel, []).append(r)
    assert [r["status"] for r in by_kernel["fault_oob_write"]] == ["crashed"]
    print({k: [(r["status"], (r["reason"] or "")[:160]) for r in rs] for k, rs in by_kernel.items()})
    # the planted int32 offset wraps past 2^31: a crash or a wrong row, never a pass
    assert by_kernel["row_gather_int32"][0]["status"] in ("crashed", "failed")
    assert [r["status"] for r in by_kernel["row_gather_int64"]] == ["passed", "passed"]
    assert [r["status"] for r in by_kernel["correct_add"]] == ["passed"]


def test_a_case_too_big_for_the_backend_is_skipped_with_the_figures():
    from kernels.basics.row_gather import SPECS
    from parity.backends import get_backend
    from parity.backends.base import Backend
    from parity.run.runner import memory_skip
    from parity.spec import Case

    spec = SPECS[0]
    small, big = Case({"M": 64, "N": 1000}), Case({"M": (1 << 21) + 1, "N": 1024})
    interpret = get_backend("interpret")
    assert memory_skip(spec, small, interpret) is None  # small cases run anywhere
    assert "runs on the host" in memory_skip(spec, big, interpret)

    class Small(Backend):
        name = "small"

        def memory_gib(self) -> float:
            return 2.0

    class Large(Small):
        def memory_gib(self) -> float:
            return 80.0

    assert "needs 3.0 GiB of device memory" in memory_skip(spec, big, Small()) and "has 2.0 GiB" in memory_skip(
        spec, big, Small())
    assert memory_skip(spec, big, Large()) is None
