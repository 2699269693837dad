"""What parity needs from triton, across the releases that moved it: the one place that knows versions.

| need | 3.2 / 3.3 | 3.4 / 3.5 | 3.6+ |
|---|---|---|---|
| compile hooks | `JITFunction.cache_hook`, `.compiled_hook` | `knobs.runtime.jit_cache_hook`, `jit_post_...` | same |
| ptxas, cuobjdump | `_path_to_binary(name)` in the nvidia backend | `triton.knobs.nvidia.<name>.path` | same |
| the active driver | `driver.active`, a plain attribute | `driver._active` behind a property | same |
| a hook on the compile stages | none | none | a knob, called with no args from 3.9 on: wrap `add_stages` |
| `triton.compiler.compile` | (src, target, options) | adds `_env_vars` | same |
| `utils.load_binary` returns | module, function, n_regs, n_spills | adds n_max_threads | same |
| autotune disk cache | none (triton-ascend 3.2 neither) | `Autotuner.check_disk_cache` | same |
| in-memory compiles | `JITFunction.cache` (3.2), `device_caches` (3.3) | `device_caches` | 5-tuples per device |

Sources: triton's python/triton/runtime/jit.py, knobs.py, autotuner.py and compiler/compiler.py at
each release tag (https://github.com/triton-lang/triton/tree/v3.4.0/python/triton). Nothing here
imports triton at module level.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def hook_style() -> str:
    """'knobs' (triton >= 3.4) or 'class' (3.2/3.3)."""
    import triton

    knobs = getattr(triton, "knobs", None)
    if knobs is not None and hasattr(getattr(knobs, "runtime", None), "jit_cache_hook"):
        return "knobs"
    return "class"


def compile_hook_slots() -> tuple[tuple[Any, str], tuple[Any, str]]:
    """Where this release keeps the hooks it calls before and after a compile: ((owner, attr), (owner, attr))."""
    if hook_style() == "knobs":
        from triton import knobs

        return (knobs.runtime, "jit_cache_hook"), (knobs.runtime, "jit_post_compile_hook")
    from triton.runtime.jit import JITFunction

    return (JITFunction, "cache_hook"), (JITFunction, "compiled_hook")


def nvidia_binary(name: str) -> str | None:
    """Path of a CUDA tool triton bundles (ptxas, cuobjdump), or None when it has none."""
    try:
        from triton import knobs

        path: str | None = getattr(knobs.nvidia, name).path
        return path
    except (ImportError, AttributeError):
        pass
    from triton.backends.nvidia.compiler import _path_to_binary

    try:
        found: str = _path_to_binary(name)[0]
        return found
    except RuntimeError:
        return None


def active_driver(driver: Any) -> Any:
    """The driver slot's current value without building the default driver (there is no GPU)."""
    return driver._active if "_active" in vars(driver) else vars(driver).get("active")


def active_driver_slot(driver: Any) -> str:
    """The attribute that holds the active driver in this release."""
    return "_active" if "_active" in vars(driver) else "active"


def compile_call(original: Callable[..., Any], src: Any, target: Any, options: Any, env_vars: Any) -> Any:
    """triton.compiler.compile with `_env_vars` only where the release takes it."""
    if env_vars is None:
        return original(src, target=target, options=options)
    return original(src, target=target, options=options, _env_vars=env_vars)


def forget_compiled(wrapper: Any) -> None:
    """Empty a JITFunction's or an Autotuner's in-memory caches: `device_caches` (3.3+; a 5-tuple per device
    from 3.6), `cache` (3.2 JITFunction; every Autotuner's picks)."""
    if hasattr(wrapper, "device_caches"):
        wrapper.device_caches.clear()
    elif isinstance(getattr(wrapper, "cache", None), dict):
        wrapper.cache.clear()
    if hasattr(wrapper, "configs") and isinstance(getattr(wrapper, "cache", None), dict):
        wrapper.cache.clear()


def load_binary_returns_max_threads() -> bool:
    """Whether CompiledKernel unpacks n_max_threads from load_binary (3.4+)."""
    from triton.compiler.compiler import CompiledKernel

    return "n_max_threads" in inspect.getsource(CompiledKernel._init_handles)


def package_version(dist: str) -> str | None:
    """The installed version of a distribution, or None where it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def version_key(version: str | None) -> tuple[int, ...]:
    """'3.10.0' sorts after '3.9.0'; an unknown or local version sorts first."""
    parts = []
    for piece in str(version or "").split("+")[0].split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)
