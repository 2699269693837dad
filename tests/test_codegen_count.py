"""Compiles of a kernel a library generates during the launch reach parity's compile counter.

The controls run in tests/codegen_controls.py, in a fresh process with the interpreter off (compile
hooks fire only for real compiles); they skip without upstream triton's nvidia backend.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONTROLS = Path(__file__).with_name("codegen_controls.py")


def test_generated_kernel_controls(tmp_path):
    env = {**os.environ, "TRITON_INTERPRET": "0", "PARITY_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           str(CONTROLS)], env=env, cwd=CONTROLS.parent.parent, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, f"generated kernel controls failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
    assert " passed" in proc.stdout and "skipped" not in proc.stdout.splitlines()[-1], proc.stdout[-2000:]
