"""A library layer that stores what the launch returned, per key, as FlagGems' LibEntry does
(flag_gems/utils/libentry.py, 5.0.2: `kernel = self.fn.run(...)`, then `cache[key] = (kernel, constexprs, ...)`,
and a later launch of that key runs `kernel[grid](...)`).

Below it, a real triton Autotuner over a stand-in for the JITFunction (`Launcher`): its run launches a plain
torch computation and returns a subscriptable handle, as JITFunction.run returns the compiled kernel, so the
plant needs no GPU and no interpreter. Nothing here runs a Triton kernel.
"""

from __future__ import annotations

from typing import Any

import torch
from triton import Config
from triton.runtime.autotuner import Autotuner


def double_rows(x: torch.Tensor, out: torch.Tensor, n: int) -> None:
    """The "kernel": what a launch computes."""
    out[:n] = 2 * x[:n]


class Compiled:
    """What a launch returns: launched again as `compiled[grid](*args)`."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __getitem__(self, grid: Any) -> Any:
        return lambda *args, **kwargs: self.fn(*args)


class Launcher:
    """Stands for the JITFunction under the tuner: run launches (unless warmup) and returns the compiled handle."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.arg_names = ["x", "out", "n"]

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Compiled:
        compiled = Compiled(self.fn)
        if not warmup:
            compiled[grid](*args)
        return compiled


class StoresWhatRunReturned:
    """FlagGems' LibEntry's shape: one kernel cache per device, keyed by the arguments' specialization."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.kernel_cache: tuple[dict[Any, Any], ...] = ({},)

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        key = tuple(str(a.dtype) if isinstance(a, torch.Tensor) else a for a in args)
        cache = self.kernel_cache[0]
        if key not in cache:
            kernel = self.fn.run(*args, grid=grid, **kwargs)
            cache[key] = (kernel, dict(self.fn.best_config.kwargs))  # the tuner's pick, read after the run
            return kernel
        kernel, _ = cache[key]
        kernel[grid](*args)  # None here: "TypeError: 'NoneType' object is not subscriptable" (libentry.py:810)
        return kernel


def make_entry(configs: int = 1) -> StoresWhatRunReturned:
    tuner = Autotuner(Launcher(double_rows), ["x", "out", "n"], [Config({"BLOCK": 32 * (i + 1)})
                                                                  for i in range(configs)],
                      key=["n"], reset_to_zero=None, restore_value=None)
    return StoresWhatRunReturned(tuner)
