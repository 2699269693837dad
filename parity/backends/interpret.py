"""TRITON_INTERPRET=1: kernels run on the CPU through Triton's interpreter."""

from __future__ import annotations

import os
from typing import Any

from parity.backends.base import Backend
from parity.report.envinfo import package_version


class InterpretBackend(Backend):
    name = "interpret"
    mode = "interpret"
    device_type = "cpu"

    def prepare(self) -> None:
        # read when @triton.jit decorates, so it must be set before kernels are imported
        os.environ["TRITON_INTERPRET"] = "1"
        if package_version("triton") is not None:
            from parity.compile.triton_compat import ensure_driver_for_autotune

            ensure_driver_for_autotune()  # triton 3.2's @autotune needs a driver at import

    def unavailable(self) -> str | None:
        if package_version("triton") is None:
            return "package `triton` is not installed; `pip install triton` (or `nox -s interpret`)"
        return None

    def env(self) -> dict[str, Any]:
        return {"device_name": "cpu (TRITON_INTERPRET=1)", "device_count": 1, "target_arch": "interpreter"}
