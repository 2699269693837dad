"""torch's calls, intercepted through torch's own extension point: the one place parity enters a TorchFunctionMode.

A stage hands a handler `handler(func, args, kwargs)` that makes the call itself (`func(*args, **kwargs)`,
on arguments it may have changed) and returns what the caller gets. Inside the handler the mode is off, as
in any TorchFunctionMode, so torch calls it makes are not intercepted again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

Handler = Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any]


class _Handled(TorchFunctionMode):
    def __init__(self, handler: Handler) -> None:
        super().__init__()
        self.handler = handler

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        return self.handler(func, args, dict(kwargs or {}))


@contextmanager
def intercepted(handler: Handler) -> Iterator[None]:
    """Inside the block, every torch function and Tensor method call goes through `handler`."""
    with _Handled(handler):
        yield


@contextmanager
def unhandled() -> Iterator[None]:
    """Inside the block, torch calls skip every TorchFunctionMode and every subclass's `__torch_function__`:
    parity's own bookkeeping on tensors (a replay building a launch's views) that no stage must see, made at plain
    CPU cost. Results of Tensor methods come back as plain tensors; the caller re-types what it hands on."""
    with torch._C.DisableTorchFunction():
        yield
