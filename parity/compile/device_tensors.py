"""Tensors whose device type is the compile tier's target ("cuda", "npu"), backed by CPU memory.

Libraries decide their path from their tensors: `x.device.type == "npu"`, `device=x.device`,
`torch.empty(..., device="cuda")`. On a compile tier there is no such device (CPU torch, no
torch_npu), so the launcher gets target tensors instead: CPU tensors of a subclass whose Python
`.device` (and `is_cuda`, `get_device()`) names the target. Torch's C++ side still sees CPU
tensors, so every op runs as it would on the CPU, `data_ptr()`, dtype and strides are the real
ones, and Triton's specialization on alignment and strides sees what it would see on the device.

- The subclass keeps its type through ops (torch's default `__torch_function__` converts results);
  `.cpu()` / `.to("cpu")` give plain CPU tensors, `.to(target)` keeps the tensor where it is.
- `TargetDevice`, a handler of torch's calls (parity.seams.torch_calls) entered only around the launch,
  turns a call that names the target (`torch.zeros(n, device="cuda")`, `torch.empty_like(x, device=x.device)`) into its
  CPU form before torch's device checks ("Torch not compiled with CUDA enabled"), and returns
  target tensors.

`launch_on_target` is what a compile tier calls; what the launcher returns comes back as plain
CPU tensors. "npu" is not a device type CPU torch knows: PrivateUse1 is renamed to it once per
process (torch allows one name; torch_npu does the same when it is present).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

import torch
from torch.utils._pytree import tree_map
from torch.utils.backend_registration import rename_privateuse1_backend

from parity.seams.torch_calls import intercepted

# attributes torch's own subclass handling leaves unwrapped (.grad, ._base, ...)
_NO_WRAP = torch.overrides.get_default_nowrap_functions()


class TargetTensor(torch.Tensor):
    """A CPU tensor that says it lives on the class's `target` (see `target_tensor_type`)."""

    target: torch.device = torch.device("cpu")

    # torch's stub declares device, is_cuda and is_cpu as writable attributes: read-only properties here, on purpose
    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return self.target

    @property
    def is_cuda(self) -> bool:  # type: ignore[override]
        return self.target.type == "cuda"

    @property
    def is_npu(self) -> bool:  # torch_npu's attribute
        return self.target.type == "npu"

    @property
    def is_cpu(self) -> bool:  # type: ignore[override]
        return False

    def get_device(self) -> int:
        return self.target.index or 0

    def plain(self) -> torch.Tensor:
        """The same memory as a plain CPU tensor."""
        return self.as_subclass(torch.Tensor)

    def cpu(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self.plain()

    def cuda(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self

    def to(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """As on the device: a target device keeps the tensor here, "cpu" gives a plain CPU tensor."""
        moved, args, kwargs = _device_args(args, kwargs, self.target.type)
        with torch._C.DisableTorchFunctionSubclass():
            out = torch.Tensor.to(self.plain(), *args, **kwargs)
        if moved == "cpu":
            return out
        return self if out.data_ptr() == self.data_ptr() and out.dtype == self.dtype else onto(out, self.target)

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **(kwargs or {}))
        if func in _NO_WRAP or (args and out is args[0]):  # in-place ops return their argument as it is
            return out
        return tree_map(lambda v: v.as_subclass(cls) if type(v) is torch.Tensor else v, out)

    # torch's untyped Tensor.__repr__(self, *, tensor_contents=None) reads to mypy as a keyword-only argument
    # without a name, which no override matches (not even **kwargs)
    def __repr__(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        return f"{type(self).__name__}(shape={tuple(self.shape)}, dtype={self.dtype}, device='{self.target}')"


@cache
def target_tensor_type(target: torch.device) -> type[TargetTensor]:
    """The TargetTensor subclass for one device; the class carries it, so ops' results keep it."""
    return type(f"{target.type.capitalize()}TargetTensor", (TargetTensor,), {"target": target})


def onto(t: torch.Tensor, target: torch.device) -> torch.Tensor:
    """t (the same memory when t is on the CPU) as a tensor on `target`."""
    if isinstance(t, TargetTensor):
        return t
    return (t if t.device.type == "cpu" else t.cpu()).as_subclass(target_tensor_type(target))


def _names(value: Any, device_type: str) -> bool:
    """Whether a device argument (str, torch.device) names `device_type`."""
    if isinstance(value, torch.device):
        return value.type == device_type
    return isinstance(value, str) and value.split(":")[0] == device_type


def _device_args(args: tuple[Any, ...], kwargs: Mapping[str, Any],
                 target_type: str) -> tuple[str | None, tuple[Any, ...], dict[str, Any]]:
    """("target" | "cpu" | None, args, kwargs) with a device naming the target replaced by the CPU."""
    moved: str | None = None

    def swap(value: Any) -> Any:
        nonlocal moved
        if _names(value, target_type):
            moved = "target"
            return torch.device("cpu")
        if _names(value, "cpu"):
            moved = "cpu"
        return value

    args = tuple(swap(a) if isinstance(a, (str, torch.device)) else a for a in args)
    kwargs = {k: swap(v) if k == "device" else v for k, v in kwargs.items()}
    return moved, args, kwargs


class TargetDevice:
    """The handler (parity.seams.torch_calls) inside a launch: calls that name the target device run on the CPU
    and return target tensors."""

    def __init__(self, target: torch.device) -> None:
        self.target = target

    def __call__(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if func is torch.device:  # naming the target is fine; only tensors must not be made there
            return func(*args, **kwargs)
        if func is torch.Tensor.cuda:  # x.cuda() on a CPU tensor: onto the target
            return onto(args[0], self.target)
        moved, args, kwargs = _device_args(args, kwargs, self.target.type)
        if moved is None:
            return func(*args, **kwargs)
        if moved == "cpu":  # e.g. torch.empty_like(x, device="cpu"): a plain CPU result
            return func(*as_cpu(args), **as_cpu(kwargs))
        return tree_map(lambda v: onto(v, self.target) if isinstance(v, torch.Tensor) else v, func(*args, **kwargs))


def as_cpu(value: Any) -> Any:
    """Plain CPU tensors (the same memory) in place of target tensors, anywhere in a nested value."""
    def plain(v: Any) -> Any:
        return v.plain() if isinstance(v, TargetTensor) else v

    if isinstance(value, Mapping):
        return {k: tree_map(plain, v) for k, v in value.items()}
    return tree_map(plain, value)


def ensure_device_type(device_type: str) -> torch.device:
    """torch.device(device_type, 0), naming PrivateUse1 `device_type` when CPU torch does not know it."""
    try:
        return torch.device(device_type, 0)
    except RuntimeError:
        pass
    current = torch._C._get_privateuse1_backend_name()
    if current != "privateuseone":
        raise RuntimeError(f"cannot present tensors on {device_type!r}: this process already named torch's "
                           f"PrivateUse1 backend {current!r} (torch allows one name per process)")
    rename_privateuse1_backend(device_type)
    return torch.device(device_type, 0)


@contextmanager
def on_target(device_type: str) -> Iterator[Callable[[Mapping[str, Any]], dict[str, Any]]]:
    """Inside: calls naming `device_type` give target tensors; yields what moves inputs there."""
    target = ensure_device_type(device_type)

    def move(inputs: Mapping[str, Any]) -> dict[str, Any]:
        return {k: onto(v, target) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}

    with intercepted(TargetDevice(target)):
        yield move


def launch_on_target(launch: Callable[[Mapping[str, Any], Any], Any], cpu_inputs: Mapping[str, Any],
                     params: Any, device_type: str) -> Any:
    """launch(inputs, params) with the inputs on `device_type`; returns its outputs as plain CPU tensors."""
    with on_target(device_type) as move:
        out = launch(move(cpu_inputs), params)
    return as_cpu(out)
