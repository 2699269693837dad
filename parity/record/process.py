"""What a recording process runs on: the versions of python, torch, triton and the NPU stack, and its device, as
the bundle's process line carries them (parity.record.capture)."""

from __future__ import annotations

import sys
from typing import Any

import torch

from parity.backends.base import dist_version
from parity.seams.env import interpreting


def version(top: str) -> str | None:
    """The installed version of a distribution, or of an imported module (its __version__); None when neither."""
    found = dist_version(top)
    return found if found is not None else getattr(sys.modules.get(top), "__version__", None)


def process_env() -> dict[str, Any]:
    """Versions and the device of the recording process (cheap: nothing is imported for it)."""
    env: dict[str, Any] = {"python": sys.version.split()[0], "torch": torch.__version__,
                           "triton": version("triton"), "interpret": interpreting()}
    for name in ("torch_npu", "triton-ascend"):
        found = version(name)
        if found:
            env[name] = found
    if torch.cuda.is_initialized():  # type: ignore[no-untyped-call]  # torch leaves it unannotated
        env["device"] = torch.cuda.get_device_name(torch.cuda.current_device())
        env["cuda"] = torch.version.cuda
        env["device_count"] = torch.cuda.device_count()
    npu = getattr(torch, "npu", None)
    if npu is not None and getattr(npu, "is_initialized", lambda: False)():
        env["device"] = npu.get_device_name(npu.current_device())
    env.setdefault("device", "cpu")
    return env
