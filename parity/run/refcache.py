"""The fp64 reference, cached on disk by a hash of its inputs and its source."""

from __future__ import annotations

import hashlib
import inspect
import os
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from parity.paths import ref_cache_dir


def _tensor_digest(h: Any, t: torch.Tensor) -> None:
    t = t.detach().cpu().contiguous()
    h.update(f"{t.dtype}{tuple(t.shape)}".encode())
    h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")


def input_hash(kernel: str, reference: Callable[..., Any], inputs: Mapping[str, Any],
               params: Mapping[str, Any]) -> str:
    """Changes whenever the inputs, the params or the reference's source change."""
    h = hashlib.sha256(kernel.encode())
    h.update(reference_source(reference).encode())
    h.update(repr(sorted((k, repr(v)) for k, v in params.items())).encode())
    for name in sorted(inputs):
        value = inputs[name]
        h.update(name.encode())
        if isinstance(value, torch.Tensor):
            _tensor_digest(h, value)
        else:
            h.update(repr(value).encode())
    return h.hexdigest()[:32]


def reference_source(reference: Any) -> str:
    """What a cached result depends on: the reference's source, with that of the functions its closure
    holds (a reference a factory builds changes with what it was built from). An object that wraps its
    reference (`__wrapped__`, e.g. a SecondReference beside a library's golden) is keyed on what it wraps."""
    if not isinstance(reference, types.FunctionType):
        reference = inspect.unwrap(reference)
    return _source(reference, set())


# inspect.getsource per code object, read once per process: every case hashes its reference's source, and
# a replayed kernel's reference is a closure over two more functions (about 1 ms a case for the three reads)
_SOURCE_OF_CODE: dict[types.CodeType, str] = {}


def _getsource(fn: Any) -> str:
    if type(fn) is not types.FunctionType or hasattr(fn, "__wrapped__"):
        return inspect.getsource(fn)
    text = _SOURCE_OF_CODE.get(fn.__code__)
    if text is None:  # a function's source is its code object's: its file and first line
        text = _SOURCE_OF_CODE[fn.__code__] = inspect.getsource(fn)
    return text


def _source(fn: Any, seen: set[int]) -> str:
    if id(fn) in seen:  # a closure that holds itself (a recursive inner function)
        return ""
    seen.add(id(fn))
    try:
        text = _getsource(fn)
    except (OSError, TypeError):  # a builtin or an object: its name, never an address that changes per run
        qualname = getattr(fn, "__qualname__", None)
        return f"{getattr(fn, '__module__', '?')}.{qualname}" if qualname else repr(fn)
    cells = [c.cell_contents for c in getattr(fn, "__closure__", None) or () if callable(c.cell_contents)]
    return "\n".join([text, *(_source(c, seen) for c in cells)])


class ReferenceCache:
    """Stores {output name: fp64 array} as .npz (never pickle), one file per input hash."""

    def __init__(self, root: Path | None = None, enabled: bool = True) -> None:
        # parity's cache dir (PARITY_CACHE_DIR, else ~/.cache/parity), never the working directory
        self.root = root if root is not None else ref_cache_dir()
        self.enabled = enabled

    def get(self, key: str) -> dict[str, torch.Tensor] | None:
        path = self.root / f"{key}.npz"
        if not self.enabled or not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                return {k: torch.from_numpy(data[k].copy()) for k in data.files}
        except (OSError, ValueError):
            return None  # a torn write from an interrupted run: recompute

    def put(self, key: str, outputs: Mapping[str, torch.Tensor]) -> None:
        if not self.enabled:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{key}.{os.getpid()}.npz"
        np.savez(tmp, **{k: v.detach().cpu().numpy() for k, v in outputs.items()})  # type: ignore[arg-type]  # numpy's stub types **kwds as its allow_pickle
        os.replace(tmp, self.root / f"{key}.npz")
