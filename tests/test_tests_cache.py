"""The self-tests keep Triton's files in parity's cache: what a test (or a child it starts) compiles never
lands in the user's ~/.triton."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.paths import cache_root
from tests.tier_python import ROOT


def _compile_child(env: dict[str, str]) -> None:
    env = {**env, "TRITON_INTERPRET": "0"}
    done = subprocess.run([sys.executable, "-m", "tests.planted_compile_home"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and "compiled" in done.stdout, done.stderr[-3000:]


def test_the_self_tests_point_triton_at_parity_cache_and_a_child_compile_stays_there(tmp_path):
    pytest.importorskip("triton.backends.nvidia.compiler")
    cache, home = Path(os.environ["TRITON_CACHE_DIR"]), Path(os.environ["TRITON_HOME"])
    assert cache.is_relative_to(cache_root()) and home.is_relative_to(cache_root()), (cache, home)
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    _compile_child({**os.environ, "HOME": str(fake_home)})
    assert not (fake_home / ".triton").exists()
    assert any(cache.rglob("*.ptx")) or any(cache.rglob("*.json")), cache
    # negative control: without the variables the tests set, the same compile writes the (fake) ~/.triton
    bare = {k: v for k, v in os.environ.items() if k not in ("TRITON_CACHE_DIR", "TRITON_HOME")}
    _compile_child({**bare, "HOME": str(fake_home)})
    assert (fake_home / ".triton" / "cache").is_dir()
