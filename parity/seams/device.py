"""The device a compile tier presents: triton's active driver, and torch's device modules.

A compile tier has no device, yet triton asks its active driver for the target and libraries ask torch
(`torch.cuda.get_device_name(0)`, `torch.npu.is_available()`) at import. Each function here presents
the tier's answer and returns what puts back exactly what was there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from parity.seams.core import present, present_all
from parity.seams.versions import active_driver, active_driver_slot


def present_driver(new: Any) -> Callable[[], None]:
    """Make `new` triton's active driver, without building the default one (there is no GPU to build it for)."""
    from triton.runtime.driver import driver

    saved = active_driver(driver)
    driver.set_active(new)

    def undo() -> None:
        setattr(driver, active_driver_slot(driver), saved)

    return undo


def present_torch_functions(module: Any, values: Mapping[str, Any]) -> Callable[[], None]:
    """Functions on one of torch's device modules (torch.cuda): set now, put back by the undo."""
    return present_all(module, dict(values))


def present_torch_module(name: str, module: ModuleType) -> Callable[[], None]:
    """`torch.<name>` and `sys.modules["torch.<name>"]` for a device module torch lacks here (torch.npu)."""
    import torch

    undo_attr = present(torch, name, module)
    undo_module = present(sys.modules, f"torch.{name}", module)

    def undo() -> None:
        undo_module()
        undo_attr()

    return undo


def present_global(fn: Callable[..., Any], name: str, value: Any) -> Callable[[], None]:
    """A name in the module globals of a function triton loaded by file path (a backend's compiler)."""
    return present(fn.__globals__, name, value)


def present_interpreted_function(cls: type) -> Callable[[], None]:
    """The class `triton.jit` builds under TRITON_INTERPRET=1 (jit() reads the name at each decoration)."""
    import triton.runtime.interpreter as interpreter

    return present(interpreter, "InterpretedFunction", cls)
