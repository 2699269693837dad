"""A launcher whose compile order differs between the tier and the describing re-run (cuda-compile).

Not collected directly (no test_ prefix): tests/test_compile_match.py runs this file in a fresh
process with TRITON_INTERPRET=0, as tests/cuda_compile_controls.py is run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.driver import pipeline
from parity.spec import Case, KernelSpec
from tests.compile_repro_controls import index_by_tensor_kernel
from tests.cuda_compile_fixture import cuda_compile_backend  # noqa: F401  (the `backend` fixture)

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def plain_copy_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


def _flipping_spec(counter: Path) -> KernelSpec:
    """Each launch flips the order of its two kernels (the count lives in a file: the tier and the
    re-run each run in a child of their own)."""
    def launch(inputs, p):
        calls = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(calls + 1))
        out = torch.empty_like(inputs["x"])
        failing = lambda: index_by_tensor_kernel[(1,)](inputs["x"], out, BLOCK=p["n"])  # noqa: E731
        fine = lambda: plain_copy_kernel[(1,)](inputs["x"], out, p["n"], BLOCK=p["n"])  # noqa: E731
        for step in ((failing, fine) if calls % 2 == 0 else (fine, failing)):
            step()
        return {"out": out}

    return KernelSpec(name="ctl_flipping", family="controls", kernel=(index_by_tensor_kernel, plain_copy_kernel),
                      launch=launch, reference=lambda i, p: {}, cases=lambda level: [Case({"n": 16})],
                      make_inputs=lambda p, g: {"x": torch.zeros(p["n"])}, compile_only=True, fork=True)


def test_a_reordered_re_run_still_gives_the_failing_compile_its_repro(backend, tmp_path):
    from parity.run.compile_judge import compile_records

    spec, case, inputs = _flipping_spec(tmp_path / "calls"), Case({"n": 16}), {"x": torch.zeros(16)}
    records = compile_records(backend.name, spec, case, backend.compile_case(spec, case, inputs))
    assert [(r["compile"]["kernel"], r["status"]) for r in records] == [
        ("index_by_tensor_kernel", "failed"), ("plain_copy_kernel", "passed")]
    pipeline.judge_and_repro_compiles(records, spec, case, backend, inputs, tmp_path / "out")
    assert (tmp_path / "calls").read_text() == "2"  # the re-run compiled them the other way round
    assert records[0].get("repro"), records[0].get("repro_error")
    script = tmp_path / "out" / records[0]["repro"] / "repro.py"
    assert "def index_by_tensor_kernel" in script.read_text()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-I", script.name], cwd=script.parent, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert proc.returncode == 1 and "FAIL" in proc.stdout, proc.stdout + proc.stderr
