"""The keys a recorded launch is grouped by: pure functions of the launch's arguments.

- `dedupe_key`: one kernel at one set of shapes, dtypes and specialization. The recorder keeps the first
  N launches of each key and counts the rest; integer arguments count by value (they are usually sizes),
  floats by type only (a scale or an epsilon does not make a launch new).
- `specialization_key`: what Triton compiles a new binary for: tensor dtypes and 16-byte alignment,
  integers as Triton specializes them (1, divisible by 16, 32 or 64 bits), constexprs by value. The
  number of distinct ones over a workload is its specialization storm.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from parity.repro.tensorlike import typed_pointer_view

ALIGN = 16  # Triton specializes a pointer on data_ptr() % 16 == 0


def _int_class(v: int) -> str:
    if v == 1:
        return "1"
    width = "i32" if -(1 << 31) <= v < (1 << 31) else "i64"
    return f"{width}/16" if v % ALIGN == 0 else width


def _plain(v: Any) -> Any:
    """A constexpr's value; a typed pointer (FlagGems' StridedBuffer) as the torch view it stands for; else v."""
    if type(v).__name__ == "constexpr":
        return v.value
    typed = typed_pointer_view(v)
    return typed[0] if typed is not None else v


def _wrapped(v: Any) -> tuple[torch.Tensor, str] | None:
    """(the base tensor, the dtype it is read as) for Triton's TensorWrapper (`triton.reinterpret`), else None."""
    base = getattr(v, "base", None)
    if type(v).__name__ == "TensorWrapper" and isinstance(base, torch.Tensor):
        return base, str(v.dtype)
    return None


def arg_shape_key(v: Any) -> str:
    """One argument for the dedupe key: tensors by dtype, shape, strides, alignment; ints by value."""
    v = _plain(v)
    wrapped = _wrapped(v)
    if wrapped is not None:  # the base's layout, the dtype the kernel reads it as
        base, dtype = wrapped
        return f"T{dtype}{tuple(base.shape)}{tuple(base.stride())}{'a' if base.data_ptr() % ALIGN == 0 else 'u'}"
    if isinstance(v, torch.Tensor):
        aligned = v.data_ptr() % ALIGN == 0
        return f"T{str(v.dtype)[6:]}{tuple(v.shape)}{tuple(v.stride())}{'a' if aligned else 'u'}"
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return repr(v)
    if isinstance(v, float):
        return "float"
    return type(v).__name__ + ":" + str(v)[:64]


def arg_spec_key(v: Any, constexpr: bool) -> str:
    """One argument as Triton's specialization sees it."""
    v = _plain(v)
    wrapped = _wrapped(v)
    if wrapped is not None:
        return f"*{wrapped[1]}{'a' if wrapped[0].data_ptr() % ALIGN == 0 else 'u'}"
    if isinstance(v, torch.Tensor):
        return f"*{str(v.dtype)[6:]}{'a' if v.data_ptr() % ALIGN == 0 else 'u'}"
    if constexpr or isinstance(v, bool) or v is None or isinstance(v, str):
        return repr(v)
    if isinstance(v, int):
        return _int_class(v)
    if isinstance(v, float):
        return "fp32"
    return type(v).__name__ + ":" + str(v)[:64]


def digest(parts: Sequence[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def dedupe_key(kernel_id: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    parts = [kernel_id, *(arg_shape_key(a) for a in args),
             *(f"{k}={arg_shape_key(v)}" for k, v in sorted(kwargs.items()))]
    return digest(parts)


def specialization_key(kernel_id: str, args: Sequence[Any], kwargs: Mapping[str, Any],
                       constexprs: Sequence[str], names: Sequence[str]) -> str:
    """`names`: the kernel's parameter names in order, so a positional constexpr is known as one."""
    positional = [arg_spec_key(a, i < len(names) and names[i] in constexprs) for i, a in enumerate(args)]
    keyword = [f"{k}={arg_spec_key(v, k in constexprs or k not in names)}" for k, v in sorted(kwargs.items())]
    return digest([kernel_id, *positional, *keyword])
