"""The NPU ascend-lowered presents to libraries: the same believable Ascend device as ascend-compile.

Libraries choose their Ascend path from what torch says: fla and mojo_opset read `torch.npu` at
import, FlagGems finds its vendor from it ("No device were detected" otherwise), Liger and fla
branch on `x.device.type == "npu"`. ascend-compile answers with a `torch.npu` for the target arch
(parity.backends.ascend.torch_device) and tensors whose device says `npu` but are CPU memory
(parity.compile.device_tensors). ascend-lowered reuses both, and adds what a run (not a compile)
also asks of the device: streams, events and synchronize, as no-ops (one program runs at a time on
the host, and every launch returns finished).

The tensors are the ones the tier computes on: the CPU launcher reads and writes the same memory
(`TargetTensor.plain()`), so each library's Ascend path is checked against fp64.

Kept in one module so the seam that patches torch (parity/seams/) can take it whole.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

DEVICE_TYPE = "npu"


class _Stream:
    """torch.npu.Stream / current_stream(): every launch has finished when it returns."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.npu_stream = 0

    def synchronize(self) -> None:
        return None

    def wait_stream(self, other: Any) -> None:
        return None

    def wait_event(self, event: Any) -> None:
        return None

    def record_event(self, event: Any = None) -> Any:
        return event or _Event()

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class _Event:
    """torch.npu.Event: recorded immediately; elapsed time is not measured on this tier."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def record(self, stream: Any = None) -> None:
        return None

    def synchronize(self) -> None:
        return None

    def wait(self, stream: Any = None) -> None:
        return None

    def query(self) -> bool:
        return True

    def elapsed_time(self, other: Any) -> float:
        return 0.0


def run_functions() -> dict[str, Any]:
    """What a launch on a real NPU may call on torch.npu beyond ascend-compile's device queries."""
    return {
        "Stream": _Stream, "Event": _Event, "current_stream": lambda device=None: _Stream(),
        "default_stream": lambda device=None: _Stream(), "stream": lambda stream=None: _Stream(),
        "empty_cache": lambda: None, "is_initialized": lambda: True, "init": lambda: None,
        "manual_seed": lambda seed: None, "manual_seed_all": lambda seed: None,
        "memory_allocated": lambda device=None: 0, "max_memory_allocated": lambda device=None: 0,
        "reset_peak_memory_stats": lambda device=None: None,
        # torch_npu answers None: CANN has no compute capability (FlagGems then falls back to (0, 0))
        "get_device_capability": lambda device=None: None,
    }


def install(arch_name: str) -> Callable[[], None]:
    """torch.npu answering for `arch_name` (ascend-compile's) plus the run-time calls; returns the undo."""
    import torch

    from parity.backends.ascend.arch import ASCEND_ARCHS
    from parity.backends.ascend.torch_device import install as install_npu
    from parity.compile.device_tensors import ensure_device_type

    undo = install_npu(ASCEND_ARCHS[arch_name])
    npu: types.ModuleType = torch.npu  # type: ignore[attr-defined]  # torch's stubs cannot declare the stand-in
    for key, value in run_functions().items():
        setattr(npu, key, value)
    ensure_device_type(DEVICE_TYPE)  # torch.device("npu") parses, as with torch_npu
    return undo


@contextmanager
def presented() -> Iterator[Callable[[Mapping[str, Any]], dict[str, Any]]]:
    """Inside: tensors made "on npu" are CPU tensors that say npu; yields what moves the inputs there."""
    from parity.compile.device_tensors import on_target

    with on_target(DEVICE_TYPE) as move:
        yield move


def host_tensor(value: Any) -> Any:
    """The plain CPU tensor behind a tensor that says npu (the memory the launcher reads and writes)."""
    from parity.compile.device_tensors import TargetTensor

    return value.plain() if isinstance(value, TargetTensor) else value
