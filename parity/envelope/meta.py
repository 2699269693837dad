"""Inputs and launches without memory: meta tensors that say they live on the target.

A 1M-token launch then costs a compile and a grid, not gigabytes: `make_inputs` runs with torch's default
device set to "meta" (its generator dropped: meta tensors draw nothing), and inside the launch every tensor
made on the target (`torch.empty(..., device="npu")`, `nan_empty(x.shape, ..., x.device)`) is made on "meta"
too, presented as a target tensor (parity.compile.device_tensors). A launcher or input maker that reads values
(`.item()`, `.tolist()`) raises on meta tensors: that size is "not checked", with its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from parity.compile.device_tensors import ensure_device_type, target_tensor_type
from parity.seams.torch_calls import intercepted

Launch = Callable[[Mapping[str, Any], Any], Any]


NEEDS_DATA = "reads values"  # in every NeedsData message, also when a forked child hands it back as text


# what a launch says when the meta presentation, not the kernel or its launcher's own check, failed: a value read,
# or a tensor made on the target outside the handlers (torch then reaches the CPU build's missing device)
_PRESENTATION = (NEEDS_DATA, "meta tensor", "Torch not compiled with CUDA enabled", "from the 'npu' backend",
                 "from the 'cuda' backend")


def presentation_failed(text: str) -> bool:
    """Whether a launch's error is this presentation's, so the size is "not checked" rather than refused."""
    return any(p in text for p in _PRESENTATION)


class NeedsData(RuntimeError):
    """The spec's own code read tensor values, which a meta tensor does not have."""


def _names(device: Any, device_type: str) -> bool:
    return str(device).split(":")[0] == device_type


def _without_generator(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    kwargs.pop("generator", None)
    return func(*args, **kwargs)


def meta_inputs(make_inputs: Callable[[Any, torch.Generator], Mapping[str, Any]], params: Mapping[str, Any],
                device_type: str) -> dict[str, Any]:
    """The spec's inputs at `params` as meta tensors presented on `device_type`."""
    cls = target_tensor_type(ensure_device_type(device_type))
    try:
        with torch.device("meta"), intercepted(_without_generator):
            made = make_inputs(params, torch.Generator())
    except (NotImplementedError, RuntimeError) as exc:  # a value read (.item(), a data-dependent shape)
        raise NeedsData(f"make_inputs reads values: {str(exc).splitlines()[0][:200]}") from exc
    return {k: v.as_subclass(cls) if isinstance(v, torch.Tensor) else v for k, v in made.items()}


# factories that take their device from a tensor argument
_LIKE = {torch.empty_like, torch.zeros_like, torch.ones_like, torch.full_like, torch.rand_like, torch.randn_like,
         torch.randint_like, torch.Tensor.new_empty, torch.Tensor.new_zeros, torch.Tensor.new_ones,
         torch.Tensor.new_full, torch.Tensor.new_tensor}


def meta_launch(launch: Launch, device_type: str) -> Launch:
    """`launch`, with every tensor it makes on the target made on "meta" and presented on the target."""
    cls = target_tensor_type(ensure_device_type(device_type))

    def handler(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        made_like = func in _LIKE and args and isinstance(args[0], torch.Tensor) and args[0].is_meta
        if made_like and "device" not in kwargs:  # torch's ref reads the presented `.device`: keep it on meta
            kwargs["device"] = device_type
        if not _names(kwargs.get("device"), device_type):
            return func(*args, **kwargs)
        kwargs["device"] = "meta"
        out = func(*args, **kwargs)
        return out.as_subclass(cls) if type(out) is torch.Tensor else out

    def run(inputs: Mapping[str, Any], params: Any) -> Any:
        with intercepted(handler):
            try:
                return launch(inputs, params)
            except (NotImplementedError, RuntimeError, TypeError) as exc:  # "Cannot copy out of meta tensor", ...
                if not isinstance(exc, NotImplementedError) and "meta" not in str(exc):
                    raise
                first = str(exc).splitlines()[0][:200]
                raise NeedsData(f"the launcher reads values or makes a tensor off meta: {first}") from exc

    return run


def numels(tensors: Mapping[str, Any]) -> dict[str, int]:
    """Element counts of the tensors among `tensors` (inputs or the launcher's outputs)."""
    return {k: int(v.numel()) for k, v in tensors.items() if isinstance(v, torch.Tensor)}
