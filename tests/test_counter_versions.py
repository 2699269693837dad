"""The compile counter, autotune pinning and the compile-only driver on the installed triton version.

Their hook APIs moved across triton releases (class hooks on 3.2/3.3, triton.knobs from 3.4, a
stage-inspection hook only from 3.6; see the README's version matrix), so each matrix session runs
this file against its own triton. The real compiles run in a fresh process with the interpreter off
(tests/version_controls.py); they need upstream triton's nvidia backend and skip without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.backends.cuda.compile import CudaCompileBackend

CONTROLS = Path(__file__).with_name("version_controls.py")


def test_counter_pinning_and_driver_on_this_triton():
    reason = CudaCompileBackend().unavailable()
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           str(CONTROLS)], env=env, cwd=CONTROLS.parent.parent, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, f"version controls failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
    assert " passed" in proc.stdout and "skipped" not in proc.stdout.splitlines()[-1], proc.stdout[-2000:]
