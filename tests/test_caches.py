"""parity writes only to its own dirs: the fp64 reference cache never lands in the working
directory, and a compile tier never touches the user's Triton cache (~/.triton)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.paths import cache_root, ref_cache_dir, triton_cache_dir
from parity.run.refcache import ReferenceCache

ROOT = Path(__file__).resolve().parents[1]


def test_cache_root_follows_parity_cache_dir_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.delenv("PARITY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "parity"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "parity"
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path / "mine"))
    assert ref_cache_dir() == tmp_path / "mine" / "ref"
    assert triton_cache_dir("cuda-compile") == tmp_path / "mine" / "triton" / "cuda-compile"


def test_the_reference_cache_never_writes_into_the_working_directory(monkeypatch, tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("PARITY_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    cache = ReferenceCache()
    cache.put("k", {"out": torch.ones(2, dtype=torch.float64)})
    assert list(work.iterdir()) == []  # control: the old default, .parity-cache/, was relative to here
    assert (home / ".cache" / "parity" / "ref" / "k.npz").exists()
    assert cache.get("k")["out"].tolist() == [1.0, 1.0]


def _cuda_compile_run(home: Path, results: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("TRITON_CACHE_DIR", "TRITON_HOME", "PARITY_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), TRITON_INTERPRET="0")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "suites/test_compile.py",
                           "--backend=cuda-compile", "--kernels=tests.planted_tuned_cache",
                           f"--results-dir={results}"], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)


def _configs_compiled(results: Path) -> int:
    lines = (results / "results.jsonl").read_text().splitlines()
    return sum(1 for r in map(json.loads, lines) if r["kernel"] == "cached_tuning" and r["status"] == "passed")


def test_a_compile_tier_leaves_the_users_triton_cache_alone(tmp_path):
    pytest.importorskip("triton.backends.nvidia.compiler")
    home = tmp_path / "home"
    home.mkdir()
    for n in (1, 2):  # the second run must not find a fake autotune winner and compile one config only
        proc = _cuda_compile_run(home, tmp_path / f"r{n}")
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert _configs_compiled(tmp_path / f"r{n}") == 3, f"run {n}: {proc.stdout[-2000:]}"
    assert not (home / ".triton").exists(), sorted(str(p) for p in (home / ".triton").rglob("*"))[:10]
    assert (home / ".cache" / "parity" / "triton" / "cuda-compile" / "cache").is_dir()


def test_a_run_tier_points_triton_at_parity_cache_not_the_users(tmp_path):
    """Run tiers compile real binaries and keep real autotune timings: under parity's cache too."""
    home, cache = tmp_path / "home", tmp_path / "pc"
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_CACHE_DIR", "TRITON_HOME", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), PARITY_CACHE_DIR=str(cache), TRITON_INTERPRET="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "suites/test_accuracy.py",
                          "--backend=interpret", "--kernels=vector_add", "--level=quick", "-k", "fp32",
                          f"--results-dir={tmp_path / 'r'}"], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert (triton_cache_dir("interpret").relative_to(cache_root()) == Path("triton/interpret"))
    assert (cache / "triton" / "interpret" / "home").is_dir()  # control: absent before run tiers moved it
    assert not (home / ".triton").exists()
