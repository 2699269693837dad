"""What the compile-only drivers need from triton, across the releases that moved it.

| need | 3.2 / 3.3 | 3.4 / 3.5 | 3.6+ |
|---|---|---|---|
| ptxas, cuobjdump | `_path_to_binary(name)` in the nvidia backend | `triton.knobs.nvidia.<name>.path` | same |
| the active driver | `driver.active`, a plain attribute | `driver._active` behind a property | same |
| a hook on the compile stages | none | none | a knob, called with no args from 3.9 on: wrap `add_stages` |
| `triton.compiler.compile` | (src, target, options) | adds `_env_vars` | same |
| `utils.load_binary` returns | module, function, n_regs, n_spills | adds n_max_threads | same |

Nothing here imports triton at module level. The compile hooks are in parity.compile.counter.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def nvidia_binary(name: str) -> str | None:
    """Path of a CUDA tool triton bundles (ptxas, cuobjdump), or None when it has none."""
    try:
        from triton import knobs

        return getattr(knobs.nvidia, name).path
    except (ImportError, AttributeError):
        pass
    from triton.backends.nvidia.compiler import _path_to_binary

    try:
        return _path_to_binary(name)[0]
    except RuntimeError:
        return None


def active_driver(driver: Any) -> Any:
    """The driver slot's current value without building the default driver (there is no GPU)."""
    return driver._active if "_active" in vars(driver) else vars(driver).get("active")


def set_active_driver(driver: Any, value: Any) -> None:
    """Put a saved value back into the slot that active_driver() read."""
    if "_active" in vars(driver):
        driver._active = value
    else:
        driver.active = value


def compile_call(original: Callable[..., Any], src: Any, target: Any, options: Any, env_vars: Any) -> Any:
    """triton.compiler.compile with `_env_vars` only where the release takes it."""
    if env_vars is None:
        return original(src, target=target, options=options)
    return original(src, target=target, options=options, _env_vars=env_vars)


def load_binary_returns_max_threads() -> bool:
    """Whether CompiledKernel unpacks n_max_threads from load_binary (3.4+)."""
    from triton.compiler.compiler import CompiledKernel

    return "n_max_threads" in inspect.getsource(CompiledKernel._init_handles)


def install_stage_hook(hook: Callable[..., None]) -> Callable[[], None]:
    """Call hook(backend, stages, *rest) whenever the nvidia backend builds its stage pipeline;
    returns what undoes it. A wrapper on CUDABackend.add_stages works on every release, while
    the knob changed protocol (3.9 also calls it with no arguments, for a cache key)."""
    from triton.backends.nvidia.compiler import CUDABackend

    original = CUDABackend.add_stages

    def add_stages(self: Any, stages: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        out = original(self, stages, *args, **kwargs)
        hook(self, stages, *args)
        return out

    CUDABackend.add_stages = add_stages

    def undo_patch() -> None:
        CUDABackend.add_stages = original

    return undo_patch
