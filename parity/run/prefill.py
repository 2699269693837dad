"""NaN in the buffers a launcher allocates itself, so a library kernel that leaves part of them unwritten fails.

parity pre-fills the outputs it allocates (parity.spec.inputs.nan_empty), but a library's launcher allocates
its own (`torch.empty_like(x)` inside FlagGems' softmax, Liger's rms_norm ...). Uninitialised memory is
often zeros, or the last case's values, so an unwritten tail can pass by luck. During a launch on a run
tier, every uninitialised allocation (torch.empty, empty_like, empty_strided, Tensor.new_empty,
new_empty_strided) is filled first: NaN for floating and complex dtypes, the most negative value for
signed integers and the largest for unsigned ones (they have no NaN), as nan_empty does. Code that is
correct cannot read an uninitialised element, so the fill changes no correct result.

Off on the compile tiers: nothing runs there, and a fill would only cost time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from parity.seams.torch_calls import intercepted

# the torch functions that return uninitialised memory (functions and Tensor methods alike)
UNINITIALISED = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
# the backend modes whose launches run kernels (compile tiers only compile)
RUN_MODES = frozenset({"run", "interpret"})
ENABLED = True  # tests switch it off to show what an unfilled launch hides


def poison(t: torch.Tensor) -> None:
    """Fill `t` with the never-written marker of its dtype (bool has none and is left as it is)."""
    dtype = t.dtype
    with torch.no_grad():
        if dtype.is_floating_point or dtype.is_complex:
            t.fill_(float("nan"))
        elif dtype != torch.bool:
            info = torch.iinfo(dtype)
            t.fill_(info.min if info.min < 0 else info.max)


class FilledAllocations:
    """The handler (parity.seams.torch_calls) that fills uninitialised allocations; `count` says how many there were."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = func(*args, **kwargs)
        if getattr(func, "__name__", "") in UNINITIALISED and isinstance(out, torch.Tensor) and out.numel():
            poison(out)
            self.count += 1
        return out


@contextlib.contextmanager
def launcher_allocations(backend_mode: str) -> Iterator[FilledAllocations | None]:
    """Around a launch: fills what the launcher allocates on a run tier; yields None where it does nothing."""
    if not ENABLED or backend_mode not in RUN_MODES:
        yield None
        return
    filled = FilledAllocations()
    with intercepted(filled):
        yield filled
