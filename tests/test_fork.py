"""A fork per case on the compile tiers: a library's own caches cannot make results depend on case
order, and a case whose child dies is an error naming the signal, never a lost case."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from parity.backends.cuda.compile import CudaCompileBackend
from parity.compile.fork import ForkedCaseError, run_forked, wants_fork
from parity.errors import error_text

ROOT = Path(__file__).resolve().parents[1]
CONTROLS = Path(__file__).with_name("fork_controls.py")


def test_a_forked_value_comes_back():
    assert run_forked(lambda: {"pid": os.getpid()}, what="k[n=1]")["pid"] != os.getpid()


def test_a_forked_exception_comes_back_with_its_traceback():
    def boom():
        raise ValueError("input device is not NPU")

    with pytest.raises(ForkedCaseError, match=r"^ValueError: input device is not NPU\n\(k\[n=1\] raised it in") as info:
        run_forked(boom, what="k[n=1]")
    assert "Traceback" in info.value.child_traceback
    # the record names the child's frame that raised, not the parent's
    assert f"{Path(__file__).name}:" in error_text(info.value) and "in boom" in error_text(info.value)


def test_a_child_killed_by_a_signal_is_named():
    with pytest.raises(ForkedCaseError, match=r"k\[n=1\]: the process was killed by SIGSEGV \(11\)"):
        run_forked(lambda: os.kill(os.getpid(), signal.SIGSEGV), what="k[n=1]")


def test_a_hung_child_is_killed_at_its_limit():
    with pytest.raises(ForkedCaseError, match=r"no result after 0\.5 s, the child was killed"):
        run_forked(lambda: time.sleep(30), what="k[n=1]", timeout_s=0.5)


def _spec(kernel_module: str, launch_module: str, fork=None):
    def launch(inputs, p):
        return {}

    launch.__module__ = launch_module
    return SimpleNamespace(kernel=SimpleNamespace(__module__=kernel_module), launch=launch, fork=fork,
                           kernels=(SimpleNamespace(__module__=kernel_module),))


def test_the_rule_forks_specs_over_another_packages_kernels(monkeypatch):
    monkeypatch.delenv("PARITY_FORK", raising=False)
    assert wants_fork(_spec("fla.ops.utils.cumsum", "libraries.fla"))  # a library's op
    assert not wants_fork(_spec("kernels.gdn.chunk_h", "kernels.gdn.chunk"))  # parity's own kernels
    assert not wants_fork(_spec("fla.ops.utils.cumsum", "libraries.fla", fork=False))  # the spec says no
    assert wants_fork(_spec("kernels.basics.softmax", "kernels.basics.softmax", fork=True))
    monkeypatch.setenv("PARITY_FORK", "0")  # the whole run says no
    assert not wants_fork(_spec("fla.ops.utils.cumsum", "libraries.fla", fork=True))


def _cuda_compile_or_skip() -> None:
    reason = CudaCompileBackend().unavailable()
    if reason:
        pytest.skip(reason)


def test_library_cache_controls_in_a_clean_process():
    _cuda_compile_or_skip()
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", str(CONTROLS)], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, f"fork controls failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"


def test_forked_cases_under_xdist_keep_every_compile_and_record_the_crash(tmp_path):
    """The suite end to end, -n 2: each forked case records its compile; the crashed one is an error."""
    _cuda_compile_or_skip()
    pytest.importorskip("xdist")
    env = {**os.environ, "TRITON_INTERPRET": "0", "PARITY_CACHE_DIR": str(tmp_path / "cache")}
    results = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "suites", "--backend=cuda-compile",
                           "--kernels", "tests.planted_libcache", "--results-dir", str(results),
                           "-k", "test_compile and not variants"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    records = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    by_kernel: dict[str, list[dict]] = {}
    for r in records:
        by_kernel.setdefault(r["kernel"], []).append(r)
    forked = sorted(by_kernel["libcache_forked"], key=lambda r: r["case"])
    assert [(r["compiles"], r["status"]) for r in forked] == [(1, "passed"), (1, "passed")], proc.stdout[-3000:]
    [crash] = by_kernel["libcache_crash"]
    assert crash["status"] == "error" and "SIGSEGV" in crash["reason"], crash
