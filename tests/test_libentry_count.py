"""Compiles through a library's own kernel cache (FlagGems' LibEntry) reach parity's compile counter.

The controls run in tests/libentry_controls.py, in a fresh process with the interpreter off
(compile hooks fire only for real compiles); they skip without upstream triton's nvidia backend.
"""

from __future__ import annotations

from pathlib import Path

from tests.fresh_controls import run_controls

CONTROLS = Path(__file__).with_name("libentry_controls.py")


def test_library_kernel_cache_controls(tmp_path):
    run_controls(CONTROLS, tmp_path, "library kernel cache controls")
