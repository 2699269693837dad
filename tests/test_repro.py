"""Repros end to end: a planted bug gives a standalone repro.py that fails, and passes once fixed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.backends import get_backend
from parity.driver import pipeline
from parity.repro import run_repro as repro
from parity.repro.source import SourceError, extract_kernel, literal
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests import planted_repro as planted

SPEC = planted.SPECS[0]


def _fresh_python(script: Path) -> subprocess.CompletedProcess[str]:
    """Run a script where parity cannot be imported: -I drops cwd/PYTHONPATH, cwd is the repro dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["TRITON_INTERPRET"] = "1"
    return subprocess.run([sys.executable, "-I", script.name], cwd=script.parent, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def _write_repro(results, *, as_vendor: bool):
    """Run the planted failure under the interpreter and write its repro into `results`."""
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    case = next(c for c in SPEC.cases("quick") if c.params["dtype"] == "fp32")
    record, _ = run_case(SPEC, case, backend, seed=0, cache=cache)
    assert record["status"] == "failed", record["reason"]
    with pytest.MonkeyPatch.context() as mp:
        if as_vendor:  # as if triage had evidence that Triton is the odd one out, and names triton-ascend too
            from parity.triage import make_owner

            mp.setattr("parity.triage.stage.decide", lambda *a, **k: make_owner(
                "triton", "Triton", "planted: only Triton differs", also=["triton-ascend"]))
        pipeline.judge_and_repro(record, SPEC, case, backend, seed=0, cache=cache, results_dir=results)
    assert record.get("repro"), record.get("repro_error")
    return record, results / record["repro"]


@pytest.fixture(scope="module")
def planted_repro(tmp_path_factory):
    return _write_repro(tmp_path_factory.mktemp("results"), as_vendor=False)


@pytest.fixture(scope="module")
def vendor_repro(tmp_path_factory):
    """The same failure written as a vendor draft."""
    return _write_repro(tmp_path_factory.mktemp("vendor"), as_vendor=True)


def test_an_interpreter_failure_gets_an_author_note_without_file_at(planted_repro):
    _, folder = planted_repro
    assert not list(folder.glob("ISSUE*.md"))  # the interpreter is the reference: the kernel is wrong
    note = (folder / "AUTHOR.md").read_text()
    assert "not in a compiler" in note and "TRITON_INTERPRET=1 python repro.py" in note
    assert "File at:" not in note and "issues/new" not in note


def test_parity_is_not_importable_where_the_repro_runs(planted_repro):
    _, folder = planted_repro
    probe = folder / "probe.py"
    probe.write_text("import parity\n")
    try:
        assert _fresh_python(probe).returncode != 0
    finally:
        probe.unlink()


def test_planted_bug_repro_fails_standalone(planted_repro):
    record, folder = planted_repro
    script = (folder / "repro.py").read_text()
    assert repro.is_standalone(script)
    assert "def row_limit" in script and "SCALE = tl.constexpr(2.0)" in script  # helper and constexpr global
    assert "def scale_rows_reference" in script and "def _factor" in script  # reference as torch source
    assert {"AUTHOR.md", "inputs.npz"} <= {p.name for p in folder.iterdir()}
    run = _fresh_python(folder / "repro.py")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "MISMATCH out" in run.stdout and "expected" in run.stdout and "got nan" in run.stdout
    assert record["shrink"]["original"]["T"] == 40


def test_fixed_repro_passes(planted_repro, tmp_path):
    _, folder = planted_repro
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    script = (folder / "repro.py").read_text()
    assert planted.BUGGY_LINE in script
    (fixed / "repro.py").write_text(script.replace(planted.BUGGY_LINE, planted.FIXED_LINE))
    (fixed / "inputs.npz").write_bytes((folder / "inputs.npz").read_bytes())
    run = _fresh_python(fixed / "repro.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ok: matches the fp64 reference" in run.stdout


def test_issue_variants_name_their_tracker(vendor_repro):
    _, folder = vendor_repro
    triton_issue = (folder / "ISSUE.md").read_text()
    ascend_issue = (folder / "ISSUE-triton-ascend.md").read_text()
    assert "triton-lang/triton/issues" in triton_issue and "Triton: " in triton_issue
    assert ascend_issue.startswith("# [Bug]:") and "CANN: " in ascend_issue
    for text in (triton_issue, ascend_issue):
        assert "python repro.py" in text and "Original case: `B=2,T=40" in text and "region" in text


def test_is_standalone_rejects_parity_imports():
    assert not repro.is_standalone("import torch\nfrom parity.run.compare import compare\n")
    assert not repro.is_standalone("import scipy\n")
    assert repro.is_standalone("import torch\nimport triton.language as tl\nimport numpy as np\n")


def test_recorder_resolves_heuristics_to_concrete_values():
    x = torch.arange(40, dtype=torch.float32)
    out = torch.full_like(x, float("nan"))
    with repro.LaunchRecorder() as rec:
        planted.copy_even_kernel[(3,)](x, out, 40, BT=16)
    (launch,) = rec.launches
    assert launch.kwargs["EVEN_T"] == "False" and launch.kwargs["BT"] == "16" and launch.grid == (3,)
    source = extract_kernel(planted.copy_even_kernel).text()
    assert "heuristics" not in source and '@triton.jit(do_not_specialize=["T"])' in source
    assert torch.equal(out, x)


def test_recorder_restores_the_jit_classes():
    from triton.runtime.interpreter import InterpretedFunction

    before = InterpretedFunction.run
    with repro.LaunchRecorder():
        assert InterpretedFunction.run is not before
    assert InterpretedFunction.run is before


def test_literal_refuses_what_it_cannot_round_trip():
    assert literal({"T": 3, "eps": 1e-6, "x": (1,), "f": [True, None, "a"]}) == \
        "{'T': 3, 'eps': 1e-06, 'x': (1,), 'f': [True, None, 'a']}"
    with pytest.raises(SourceError):
        literal(object())
    with pytest.raises(SourceError):
        literal({1: 2})


def test_passing_case_gets_no_repro(tmp_path):
    record = {"status": "passed"}
    pipeline.judge_and_repro(record, SPEC, next(iter(SPEC.cases("quick"))), get_backend("interpret"), seed=0,
                 cache=ReferenceCache(enabled=False), results_dir=tmp_path)
    assert "repro" not in record and not (tmp_path / "repros").exists()
