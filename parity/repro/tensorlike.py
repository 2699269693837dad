"""Tensor-like kernel arguments that are no torch.Tensor, read as the torch view of the storage they stand for."""

from __future__ import annotations

from typing import Any

import torch


def typed_pointer_view(v: Any) -> tuple[torch.Tensor, bool] | None:
    """A library's typed pointer over a tensor (FlagGems' StridedBuffer: a base tensor, reached through `unwrap()`,
    with a dtype, shape, strides and offset of its own; Triton reads only its `data_ptr()` and `dtype`) as a torch
    view of the base's storage at the same address and dtype, and whether that view has its shape and strides. A
    negative stride (FlagGems' flip) has no torch view: then one element at the address, and the caller keeps the
    whole storage. None for anything else. By duck type: capture imports no library."""
    unwrap, data_ptr, dtype = getattr(v, "unwrap", None), getattr(v, "data_ptr", None), getattr(v, "dtype", None)
    if isinstance(v, torch.Tensor) or not (callable(unwrap) and callable(data_ptr) and isinstance(dtype, torch.dtype)):
        return None
    base = unwrap()
    if not isinstance(base, torch.Tensor):
        return None
    storage, size = base.untyped_storage(), dtype.itemsize
    start = data_ptr() - storage.data_ptr()
    if start < 0 or start % size or start > storage.nbytes():
        return None
    stride = getattr(v, "stride", None)
    shape = tuple(int(n) for n in getattr(v, "shape", ()))
    strides = tuple(int(s) for s in stride()) if callable(stride) else ()
    exact = len(strides) == len(shape) and all(s >= 0 for s in strides)
    if exact and 0 not in shape:
        exact = start + (sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + 1) * size <= storage.nbytes()
    if not exact and start + size > storage.nbytes():
        return None
    view = torch.empty(0, dtype=dtype, device=base.device)
    view.set_(storage, start // size, shape if exact else (1,), strides if exact else (1,))
    return view, exact
