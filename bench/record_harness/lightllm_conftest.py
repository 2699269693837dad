"""conftest for LightLLM's unit_tests when recorded outside LightLLM (bench/record_library_ops.sh, LIB=lightllm).

LightLLM's package __init__s import the whole serving engine (models, servers, quantization back ends, their
third-party packages), while its Triton kernel modules need little beyond torch and triton. Every package under
lightllm/ is registered bare (its __init__ not run), so a test imports the kernel module it names and only what
that module imports. Copied into the staged tests' root as conftest.py; the staged root holds lightllm/.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent


def _bare(name: str, path: Path) -> None:
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    module.__package__ = name
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__spec__.submodule_search_locations = [str(path)]
    sys.modules[name] = module


for init in sorted((ROOT / "lightllm").rglob("__init__.py")):
    package = init.parent
    _bare(".".join(package.relative_to(ROOT).parts), package)


def _cuda_on_the_cpu() -> None:
    """Under the interpreter with no GPU (a recording of last resort, said so by `parity record`): the tests' CUDA
    tensors are made on the CPU. Factory calls and `.to`/`.cuda` that name a CUDA device get the CPU instead; the
    tests' synchronizations do nothing. Nothing else of the tests changes."""
    import os

    import torch
    from torch.overrides import TorchFunctionMode

    if os.environ.get("TRITON_INTERPRET") != "1" or torch.cuda.is_available():
        return

    def cpu(device: object) -> object:
        named = device.type if isinstance(device, torch.device) else str(device) if device is not None else ""
        return "cpu" if named.startswith("cuda") else device

    class CudaOnCpu(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = cpu(kwargs["device"])
            if func is torch.Tensor.to:
                args = tuple(cpu(a) if isinstance(a, (str, torch.device)) else a for a in args)
            if func is torch.Tensor.cuda:
                return args[0]
            return func(*args, **kwargs)

    CudaOnCpu().__enter__()  # for the whole session
    torch.cuda.synchronize = lambda *a, **k: None  # type: ignore[assignment]
    torch.cuda.current_device = lambda: 0  # type: ignore[assignment]


_cuda_on_the_cpu()
