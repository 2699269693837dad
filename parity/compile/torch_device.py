"""The pieces both compile tiers use to make torch name the target device, with no device present.

Libraries read torch's device module at import (fla: `torch.cuda.get_device_name(0)`,
`torch.npu.is_available()`) and take the path that device would take. A compile tier answers for
its target, so the library compiles what it would compile there; tensors stay on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any


class NoDeviceContext:
    """torch.<device>.device(index): a context manager that selects nothing."""

    def __init__(self, device: Any = None) -> None:
        self.idx = 0

    def __enter__(self) -> NoDeviceContext:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def properties(**fields: Any) -> SimpleNamespace:
    """What get_device_properties returns: attribute access, like torch's _CudaDeviceProperties."""
    return SimpleNamespace(**fields)


def device_functions(name: str, props: SimpleNamespace, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The device-module functions libraries call at import, answering for one device named `name`."""
    functions: dict[str, Any] = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": lambda device: None,
        "synchronize": lambda device=None: None,
        "get_device_name": lambda device=None: name,
        "get_device_properties": lambda device=None: props,
        "device": NoDeviceContext,
    }
    functions.update(extra or {})
    return functions


def patch(target: Any, values: Mapping[str, Any]) -> Callable[[], None]:
    """Set attributes on `target`; the returned function puts back exactly what was there."""
    from parity.seams.device import present_torch_functions

    return present_torch_functions(target, values)
