"""The compile counter, autotune pinning and the compile-only driver on the installed triton version.

Their hook APIs moved across triton releases (class hooks on 3.2/3.3, triton.knobs from 3.4, a
stage-inspection hook only from 3.6; see the README's version matrix), so each matrix session runs
this file against its own triton. The real compiles run in a fresh process with the interpreter off
(tests/version_controls.py); they need upstream triton's nvidia backend and skip without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parity.backends.cuda.compile import CudaCompileBackend
from tests.fresh_controls import run_controls

CONTROLS = Path(__file__).with_name("version_controls.py")


def test_counter_pinning_and_driver_on_this_triton(tmp_path):
    reason = CudaCompileBackend().unavailable()
    if reason:
        pytest.skip(reason)
    out = run_controls(CONTROLS, tmp_path, "version controls")
    assert " passed" in out and "skipped" not in out.splitlines()[-1], out[-2000:]
