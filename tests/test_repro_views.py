"""Repros that survive real launch patterns, with planted controls (tests/planted_views.py):
outputs written through strided views, pointer tables, and repros kept only when they fail standalone."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.backends import get_backend
from parity.driver import pipeline
from parity.repro import verify
from parity.repro.capture import LaunchRecorder
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests import planted_views as planted

SPECS = {s.name: s for s in planted.SPECS}


def _fresh(folder: Path, script: str = "repro.py") -> subprocess.CompletedProcess[str]:
    """A user's run: no parity importable (-I), the interpreter, cwd the repro folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["TRITON_INTERPRET"] = "1"
    return subprocess.run([sys.executable, "-I", script], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def _attach(name: str, results: Path) -> dict:
    spec, backend, cache = SPECS[name], get_backend("interpret"), ReferenceCache(enabled=False)
    case = next(iter(spec.cases("quick")))
    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
    assert record["status"] == "failed", record["reason"]
    pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=results)
    return record


def _constant(script: str, name: str):
    node = next(n for n in ast.parse(script).body if isinstance(n, ast.Assign) and n.targets[0].id == name)
    return ast.literal_eval(node.value)


def _fixed_copy(folder: Path, tmp: Path, buggy: str, fixed: str) -> Path:
    script = (folder / "repro.py").read_text()
    assert buggy in script
    (tmp / "repro.py").write_text(script.replace(buggy, fixed))
    (tmp / "inputs.npz").write_bytes((folder / "inputs.npz").read_bytes())
    return tmp


def _kept_repro(tmp_path_factory, kernel: str, folder: str):
    """The planted kernel's failing record and the repro folder parity kept for it."""
    results = tmp_path_factory.mktemp(folder)
    record = _attach(kernel, results)
    assert record.get("repro"), record.get("repro_error")
    return record, results / record["repro"]


@pytest.fixture(scope="module")
def conv_state(tmp_path_factory):
    return _kept_repro(tmp_path_factory, "planted_conv_state", "conv")


@pytest.fixture(scope="module")
def lora(tmp_path_factory):
    return _kept_repro(tmp_path_factory, "planted_lora_shrink", "lora")


# ---------------------------------------------------------------- capture by storage


def test_an_output_written_through_a_transposed_view_gets_a_repro(conv_state):
    """Before storage capture: "output 'conv_state' is not a buffer any kernel launch received"."""
    _, folder = conv_state
    script = (folder / "repro.py").read_text()
    buffers, tensors, outputs = (_constant(script, n) for n in ("BUFFERS", "TENSORS", "OUTPUTS"))
    state_buffer, _, shape, stride, offset = outputs["conv_state"]
    assert len(shape) == 3 and stride[1] == 1 and stride[2] == shape[1] and offset == stride[0]  # transposed, offset
    # the kernel wrote the same buffer time-major, and x is a slice at offset 1 (shrinking left B=1, so
    # the weight's expand is a plain view here; test_recorder_maps_views_onto_one_buffer has stride 0)
    assert any(v[0] == state_buffer and v[3][2] == 1 for v in tensors.values())
    assert any(v[4] == 1 for v in tensors.values())
    assert len(buffers) < len(tensors) + 1  # views share buffers instead of being copied apart
    run = _fresh(folder)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "MISMATCH conv_state" in run.stdout and "FAIL: differs from the fp64 reference" in run.stdout


def test_the_fixed_conv_state_kernel_passes_its_repro(conv_state, tmp_path):
    _, folder = conv_state
    run = _fresh(_fixed_copy(folder, tmp_path, planted.BUGGY_SHIFT, planted.FIXED_SHIFT))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ok conv_state" in run.stdout


def test_recorder_maps_views_onto_one_buffer():
    base = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    with LaunchRecorder() as rec:
        rec.tensor(base[:, 1:])
        rec.tensor(base.transpose(1, 2))
        view = rec.output_view("o", base[1].expand(5, 3, 4))
    assert len(rec.buffers) == 1 and len(rec.views) == 2
    assert view is not None and view.stride == (0, 4, 1) and view.offset == 12
    assert rec.output_view("other", torch.zeros(3)) is None  # a storage no launch reached


# ---------------------------------------------------------------- pointer tables


def test_a_pointer_table_is_rebuilt_from_the_repros_own_tensors(lora):
    """Frozen addresses would make repro.py read the capturing process's memory (exit 139)."""
    _, folder = lora
    script = (folder / "repro.py").read_text()
    (table,) = _constant(script, "POINTERS").values()
    assert _constant(script, "UNRESOLVED_POINTERS") == {}
    assert len({ref[0] for ref in table}) == 1 and len({ref[1] for ref in table}) == len(table)  # offsets into one
    run = _fresh(folder)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "MISMATCH out" in run.stdout


def test_the_fixed_lora_kernel_passes_its_repro(lora, tmp_path):
    _, folder = lora
    run = _fresh(_fixed_copy(folder, tmp_path, planted.BUGGY_K, planted.FIXED_K))
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_address_in_no_tensor_is_named_and_no_repro_is_kept(tmp_path):
    record = _attach("planted_stale_table", tmp_path)
    assert record["repro"] is None and record["status"] == "failed"
    assert "refuses to run" in record["repro_error"] and hex(planted.STALE_ADDRESS) in record["repro_error"]
    assert not any((tmp_path / "repros").glob("*"))  # no folder a record does not name


def test_an_unresolved_table_refuses_to_launch(lora, tmp_path):
    _, folder = lora
    script = (folder / "repro.py").read_text()
    key = next(iter(_constant(script, "POINTERS")))
    script = script.replace("UNRESOLVED_POINTERS = {}", f"UNRESOLVED_POINTERS = {{{key!r}: ['0xdead00000000']}}")
    (tmp_path / "repro.py").write_text(script)
    (tmp_path / "inputs.npz").write_bytes((folder / "inputs.npz").read_bytes())
    run = _fresh(tmp_path)
    assert run.returncode == 2 and "REFUSED" in run.stdout, run.stdout + run.stderr


# ---------------------------------------------------------------- kept only when it reproduces


def test_a_failure_outside_the_launches_keeps_its_verdict_but_no_repro(tmp_path, monkeypatch):
    monkeypatch.setenv(planted.AFTER_LAUNCH_VAR, "1")
    record = _attach("planted_after_launch", tmp_path)
    assert record["status"] == "failed" and record["repro"] is None
    assert "exits 0" in record["repro_error"] and "repro.py" in record["repro_error"]
    assert not any((tmp_path / "repros").glob("*"))


def _folder_with(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "repros" / "k__case"
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text(body)
    (folder / "ISSUE.md").write_text("draft\n")
    return folder


@pytest.mark.parametrize(("body", "status", "kept", "why"), [
    ("print('MISMATCH out')\nprint('FAIL: differs from the fp64 reference')\nraise SystemExit(1)\n", "failed",
     True, None),
    ("print('ok: matches')\n", "failed", False, "exits 0"),
    ("raise ValueError('boom')\n", "failed", False, "crashes (exit 1)"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "failed", False, "crashes (signal"),
    ("print('FAIL: the kernel launch raised')\nraise SystemExit(1)\n", "failed", False, "raises where"),
    ("print('KeyError: x')\nprint('FAIL: the kernel launch raised')\nraise SystemExit(1)\n", "error", False,
     "not the record's ValueError"),
    ("import time\ntime.sleep(30)\n", "failed", False, "did not finish"),
])
def test_verify_keeps_only_a_script_that_fails_as_the_record_did(tmp_path, body, status, kept, why):
    folder = _folder_with(tmp_path, body)
    record = {"status": status, "reason": "ValueError: bad (raised at k.py:3)", "repro": "repros/k__case"}
    verify.finalize(record, tmp_path, folder, timeout_s=5)
    assert folder.is_dir() is kept and bool(record["repro"]) is kept
    if why:
        assert why in record["repro_error"], record["repro_error"]


def test_verify_removes_a_half_written_folder_no_record_names(tmp_path):
    folder = _folder_with(tmp_path, "raise SystemExit(1)\n")
    record = {"status": "failed", "repro_error": "RuntimeError: the extras failed"}
    verify.finalize(record, tmp_path, folder)
    assert not folder.exists() and record["repro_error"] == "RuntimeError: the extras failed"


def test_verify_hides_parity_from_the_script(tmp_path):
    root = Path(__file__).resolve().parents[1]
    libs = "/opt/site-libs"  # another library path on PYTHONPATH: kept
    env = verify.standalone_env({"PYTHONPATH": os.pathsep.join([str(root), libs]), "HOME": "/h"})
    assert env == {"PYTHONPATH": libs, "HOME": "/h"}
    assert "PYTHONPATH" not in verify.standalone_env({"PYTHONPATH": str(root)})


def test_a_hang_reproduces_only_a_record_that_timed_out(tmp_path):
    folder = _folder_with(tmp_path, "import time\ntime.sleep(30)\n")
    record = {"status": "error", "reason": "timeout: Timeout (>900.0s) from pytest-timeout.", "repro": "repros/k__case"}
    verify.finalize(record, tmp_path, folder, timeout_s=3)
    assert folder.is_dir() and record["repro"] == "repros/k__case"
