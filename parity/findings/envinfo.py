"""env.json: the versions and device facts a report or a vendor draft needs."""

from __future__ import annotations

import platform
import subprocess
from typing import Any

from parity import settings
from parity.seams.versions import package_version


def git_commit() -> str | None:
    """HEAD of this checkout; PARITY_GIT_COMMIT names it where the tree was copied without .git."""
    named = settings.current().git_commit
    if named:
        return named
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                             timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def collect(backend_name: str, backend_env: dict[str, Any]) -> dict[str, Any]:
    """Everything known about this machine and toolchain, plus what the backend probed."""
    import torch

    info: dict[str, Any] = {
        "backend": backend_name,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.node(),
        "torch": torch.__version__,
        "triton": package_version("triton"),
        "triton_ascend": package_version("triton-ascend"),
        "torch_npu": package_version("torch-npu") or package_version("torch_npu"),
        "ascendnpu_ir": package_version("ascendnpu-ir"),
        "cann": None,
        "driver": None,  # a run backend's env() names its driver (parity.backends.cuda.run)
        "device_name": None,
        "device_count": None,
        "target_arch": None,
        "git_commit": git_commit(),
    }
    info.update({k: v for k, v in backend_env.items() if v is not None})
    return info
