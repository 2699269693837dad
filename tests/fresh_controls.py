"""Run a controls file in a fresh pytest process with the interpreter off: compile hooks fire only
for real compiles, and a module-level kernel cache must start empty."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_controls(controls: Path, cache_dir: Path, what: str, timeout_s: int = 600) -> str:
    """pytest's output for `controls`; fails the calling test when a control failed."""
    env = {**os.environ, "TRITON_INTERPRET": "0", "PARITY_CACHE_DIR": str(cache_dir)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           str(controls)], env=env, cwd=controls.parent.parent, capture_output=True, text=True,
                          timeout=timeout_s, check=False)
    assert proc.returncode == 0, f"{what} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
    return proc.stdout
