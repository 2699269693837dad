"""parity.envelope.memo: a check's stored answer is reused only for the same code and tools. The negative control
edits a kernel between two envelopes and finds every size checked anew, with the edited kernel's answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import parity.envelope.memo as memo
from parity.envelope.limits import Observation
from tests.tier_python import ROOT, tier_python

SPEC = '''
import triton
import triton.language as tl
from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

BT = {bt}


@triton.jit(do_not_specialize=["T"])
def memo_kernel(x, y, T, BT: tl.constexpr):
    o = tl.program_id(1) * BT + tl.arange(0, BT)
    tl.store(y + o, tl.load(x + o, mask=o < T) * 2, mask=o < T)


def launch(inputs, p):
    x = inputs["x"]
    y = nan_empty(x.shape, x.dtype, x.device)
    memo_kernel[(1, triton.cdiv(p["T"], BT))](x, y, p["T"], BT=BT)  # CUDA's grid y stops at 65,535
    return {{"y": y}}


SPECS = [KernelSpec(name="memo_grid_y", family="planted", kernel=memo_kernel, launch=launch,
                    reference=lambda inputs, p: {{"y": inputs["x"] * 2}}, cases=by_level(product(T=[1000])),
                    make_inputs=lambda p, gen: {{"x": randn((p["T"],), "fp32", gen)}}, dynamic_args=("T",))]
'''


def package(root: Path, bt: int) -> Path:
    pkg = root / "envmemo_pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "spec.py").write_text(SPEC.format(bt=bt))
    return pkg


def fake_spec(pkg: Path) -> Any:
    """A spec-shaped object whose launcher lives in `pkg` (imported afresh), for the key alone."""
    sys.path.insert(0, str(pkg.parent))
    try:
        for name in [m for m in sys.modules if m.split(".")[0] == pkg.name]:
            del sys.modules[name]
        module = __import__(f"{pkg.name}.helpers", fromlist=["launch"])
    finally:
        sys.path.remove(str(pkg.parent))
    return types.SimpleNamespace(name="k", kernels=[], launch=module.launch, make_inputs=module.launch)


def test_an_edit_in_the_kernels_package_is_another_key_and_the_old_answer_is_not_found(tmp_path):
    pkg = tmp_path / "memo_plain_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("def launch(inputs, p):\n    return {}\n")
    (pkg / "other.py").write_text("X = 1\n")
    store = memo.Memo(tmp_path / "answers")
    before = memo.key(fake_spec(pkg), "cuda-compile", "cuda", "observe", {"params": {"T": 1}})
    store.put(before, memo.dump(Observation("cuda", {"T": 1}, grids=[["k", [1, 1, 1]]])))
    memo.tree_hash.cache_clear()
    assert memo.key(fake_spec(pkg), "cuda-compile", "cuda", "observe", {"params": {"T": 1}}) == before
    assert memo.load(store.get(before)) == Observation("cuda", {"T": 1}, grids=[["k", [1, 1, 1]]])  # the control
    (pkg / "other.py").write_text("X = 2\n")  # not the launcher's file: its package's
    memo.tree_hash.cache_clear()
    after = memo.key(fake_spec(pkg), "cuda-compile", "cuda", "observe", {"params": {"T": 1}})
    assert after != before and store.get(after) is None
    assert memo.key(fake_spec(pkg), "cuda-compile", "cuda", "observe", {"params": {"T": 2}}) != after
    assert memo.key(fake_spec(pkg), "ascend-compile", "ascend", "observe", {"params": {"T": 1}}) != after
    assert memo.Memo(tmp_path / "answers", read=False).get(before) is None  # --no-cache reads nothing


def test_a_launcher_without_a_file_to_hash_is_never_stored_or_read(tmp_path):
    def launch(inputs, p):
        return {}

    launch.__module__ = "no_such_module_anywhere"
    spec = types.SimpleNamespace(name="k", kernels=[], launch=launch, make_inputs=launch)
    assert memo.key(spec, "cuda-compile", "cuda", "observe", {"params": {}}) is None
    store = memo.Memo(tmp_path / "answers")
    store.put(None, {"x": 1})
    assert store.get(None) is None and not (tmp_path / "answers").exists()


def test_a_timeout_or_a_dead_child_is_never_stored_and_a_raised_error_is():
    assert memo.storable(Observation("ascend", {}, compile_errors=[["k", "ub_overflow", "ub overflow"]]))
    assert not memo.storable(Observation("ascend", {}, compile_errors=[["k", "timeout", "no answer within 300 s"]]))
    assert not memo.storable(Observation("ascend", {}, compile_errors=[["k", "crash", "SIGSEGV"]]))
    died = "the launcher raised ForkedCaseError: k: no result after 1800 s, the child was killed in its forked child"
    assert not memo.storable(Observation("cuda", {}, launch_errors=[["k", died]]))
    raised = "the launcher raised ForkedCaseError: AssertionError\n(k raised it in its forked child)"
    assert memo.storable(Observation("cuda", {}, launch_errors=[["k", raised]]))
    assert memo.load({"target": "cuda", "params": {}, "renamed": 1}) is None  # an older layout is a miss


def envelope(root: Path, cache: Path, *extra: str) -> dict[str, Any]:
    python = tier_python("venv-upstream")
    if not python.exists():
        pytest.skip(f"no {python}: `nox -s venv-upstream` creates it")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PYTHONPATH=os.pathsep.join([str(root), str(ROOT)]), PARITY_CACHE_DIR=str(cache),
               PATH=f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([str(python), "-m", "parity.envelope", "cuda", "--kernels", "envmemo_pkg.spec",
                           "--grow", "T=..128K", *extra],
                          capture_output=True, text=True, timeout=1200, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line[len("ENVELOPE "):]) for line in proc.stdout.splitlines() if line.startswith("ENVELOPE ")]
    assert len(rows) == 1, proc.stdout[-2000:]
    return rows[0]


def test_an_edited_kernel_is_checked_anew_not_answered_from_the_store(tmp_path):
    cache = tmp_path / "cache"
    package(tmp_path, bt=1)
    first = envelope(tmp_path, cache)
    assert (first["last_ok"], first["first_bad"], first["stored"]) == (65535, 65536, 0)
    again = envelope(tmp_path, cache)  # the control: the same code is answered from the store, the same answer
    assert again["stored"] == len(again["probes"]) + 2 and again["probes"] == first["probes"]
    assert (again["last_ok"], again["first_bad"]) == (65535, 65536)
    package(tmp_path, bt=4)  # y = cdiv(T, 4) stays under 65,536 to T = 128K: no crossing now
    edited = envelope(tmp_path, cache)
    assert edited["stored"] == 0, "a stored answer of the kernel before its edit was reused"
    assert (edited["last_ok"], edited["first_bad"]) == (128 * 1024, None)


def test_the_toolchain_key_reads_the_real_compiler_not_a_session_wrapper_under_parity_cache(tmp_path, monkeypatch):
    real, cache = tmp_path / "venv" / "bin", tmp_path / "cache"
    real.mkdir(parents=True)
    (real / "bishengir-compile").write_text("#!/bin/sh\n")
    (real / "bishengir-compile").chmod(0o755)
    monkeypatch.setenv("PARITY_CACHE_DIR", str(cache))
    keys = []
    for session in ("session-a", "session-b"):  # ascend-compile's wrapper dir differs per process
        wrapper = cache / "triton" / "ascend-compile" / session / "bin"
        wrapper.mkdir(parents=True)
        (wrapper / "bishengir-compile").write_text(f"#!/bin/sh\n# {session}\n")
        (wrapper / "bishengir-compile").chmod(0o755)
        monkeypatch.setenv("PATH", f"{wrapper}{os.pathsep}{real}")
        memo.toolchain.cache_clear()
        keys.append(memo.toolchain("ascend-compile", "ascend"))
    memo.toolchain.cache_clear()
    assert keys[0] == keys[1]
    (real / "bishengir-compile").write_text("#!/bin/sh\n# another build\n")  # the control: the real one changes
    assert memo.toolchain("ascend-compile", "ascend") != keys[0]
    memo.toolchain.cache_clear()


def test_a_fresh_checkout_of_the_same_code_reads_its_offsets_from_tritons_cache_hit(tmp_path):
    """A CI checkout writes the same bytes with a newer mtime: Triton's disk cache answers every compile, and the
    offsets still come from the TTIR that hit hands back (they were None when read from files newer than the
    source)."""
    cache = tmp_path / "cache"
    pkg = package(tmp_path, bt=1)
    first = envelope(tmp_path, cache)
    assert first["ok_probe"]["offsets"] == "i32"
    os.utime(pkg / "spec.py")  # the same bytes, written after the TTIR Triton stored
    again = envelope(tmp_path, cache, "--no-cache")  # every check compiles again, each a Triton cache hit
    assert again["stored"] == 0 and again["ok_probe"]["offsets"] == "i32"
