"""`torch.npu` (also `torch_npu.npu`) of the stand-in: the documented calls, with host semantics.

torch_npu mirrors torch.cuda's API under torch.npu (the torch.cuda table of
https://github.com/Ascend/pytorch/blob/master/docs/api/torch_npu_apis.md), and documents
`torch.npu.Event(enable_timing=True)` with record / elapsed_time / synchronize
(https://www.hiascend.com/doc_center/source/zh/Pytorch/700/apiref/apilist/ptaoplist_000964.html).

The device behind it is ascend-lowered's x86 path: a launch runs to completion before it returns,
so an event's record time is the host clock at record(), and synchronize() has nothing to wait for.
Everything here says what it is: the device name and properties name the stand-in.
"""

from __future__ import annotations

import os
import time
from types import SimpleNamespace
from typing import Any

ARCH = os.environ.get("PARITY_STANDIN_NPU_ARCH", "Ascend910B3")
# what get_device_name() answers: the arch, and that this is not one (perf peaks are looked up by name)
DEVICE_NAME = f"{ARCH} stand-in (ascend-lowered on x86, no NPU)"
GIB = 1 << 30

_state = {"device": 0}


def device_count() -> int:
    """PARITY_STANDIN_NPU_COUNT devices (default 1): the xdist workers' device mapping is worker mod this."""
    return int(os.environ.get("PARITY_STANDIN_NPU_COUNT", "1"))


def is_available() -> bool:
    return device_count() > 0


def _index(device: Any = None) -> int:
    if device is None:
        return _state["device"]
    if isinstance(device, int):
        index = device
    else:
        import torch

        parsed = torch.device(device) if isinstance(device, str) else device
        if parsed.type != "npu":
            raise ValueError(f"Expected a npu device, but got: {device}")
        index = parsed.index if parsed.index is not None else _state["device"]
    if not 0 <= index < device_count():
        raise RuntimeError(f"Invalid device argument: npu:{index} (the stand-in has {device_count()} device(s); "
                           "set PARITY_STANDIN_NPU_COUNT for more)")
    return index


def set_device(device: Any) -> None:
    _state["device"] = _index(device)


def current_device() -> int:
    return _state["device"]


def synchronize(device: Any = None) -> None:
    _index(device)  # a bad index raises, as on the device; there is no queued work to wait for


def get_device_name(device: Any = None) -> str:
    _index(device)
    return DEVICE_NAME


def get_device_properties(device: Any = None) -> SimpleNamespace:
    """The fields torch_npu's _NPUDeviceProperties carries that callers read (name, total_memory, core counts)."""
    from parity.backends.ascend.arch import ASCEND_ARCHS

    _index(device)
    arch = ASCEND_ARCHS[ARCH]
    return SimpleNamespace(name=DEVICE_NAME, total_memory=64 * GIB, cube_core_num=arch.aic_cores,
                           vector_core_num=arch.aiv_cores, L2_cache_size=192 * (1 << 20))


def get_device_capability(device: Any = None) -> None:
    """torch_npu answers None: CANN has no compute capability."""
    return None


def is_bf16_supported() -> bool:
    return True


def empty_cache() -> None:
    return None


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


def reset_peak_memory_stats(device: Any = None) -> None:
    return None


def mem_get_info(device: Any = None) -> tuple[int, int]:
    return 64 * GIB, 64 * GIB


def manual_seed(seed: int) -> None:
    return None


def manual_seed_all(seed: int) -> None:
    return None


def is_initialized() -> bool:
    return True


def init() -> None:
    return None


class Event:
    """torch.npu.Event(enable_timing=False, blocking=False, interprocess=False)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self.recorded_at: float | None = None

    def record(self, stream: Any = None) -> None:
        self.recorded_at = time.perf_counter()  # every launch before it has finished on the host

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def wait(self, stream: Any = None) -> None:
        return None

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event's record to end_event's, as torch.npu documents."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.recorded_at is None or end_event.recorded_at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event.recorded_at - self.recorded_at) * 1e3

    def recorded_time(self) -> int:
        if self.recorded_at is None:
            raise RuntimeError("Event must be recorded before getting recorded timestamp.")
        return int(self.recorded_at * 1e6)


class Stream:
    """torch.npu.Stream: one in-order queue whose every task has finished when it is submitted."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device_index = _index(device)
        self.npu_stream = 0

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True

    def wait_stream(self, stream: Stream) -> None:
        return None

    def wait_event(self, event: Event) -> None:
        return None

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def current_stream(device: Any = None) -> Stream:
    return Stream(device)


def default_stream(device: Any = None) -> Stream:
    return Stream(device)


def stream(stream: Stream | None = None) -> Stream:
    return stream or Stream()


class device:  # torch.npu.device, as torch names it
    """torch.npu.device(index): selects the device for the block."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev = self.idx

    def __enter__(self) -> device:
        self.prev = _state["device"]
        if self.idx >= 0:
            _state["device"] = self.idx
        return self

    def __exit__(self, *exc: object) -> None:
        _state["device"] = self.prev


# the names torch.npu gets (and torch_npu.npu keeps)
API = ("device_count", "is_available", "set_device", "current_device", "synchronize", "get_device_name",
       "get_device_properties", "get_device_capability", "is_bf16_supported", "empty_cache", "memory_allocated",
       "max_memory_allocated", "reset_peak_memory_stats", "mem_get_info", "manual_seed", "manual_seed_all",
       "is_initialized", "init", "Event", "Stream", "current_stream", "default_stream", "stream", "device")
