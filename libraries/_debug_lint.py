"""Leftover debugging in a kernel's source: tl.device_print, tl.static_print, print, breakpoint.

A `tl.device_print` left in a kernel prints once per program on every launch (a GDN solve_tril at
T = 65536 prints thousands of lines) and, on some backends, changes scheduling. It is a finding
about the kernel, reported beside its numeric verdict, never a crash.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterable, Mapping
from typing import Any

DEBUG_ATTRS = ("device_print", "static_print", "device_assert")
DEBUG_NAMES = ("print", "breakpoint")


def _python_function(kernel: Any) -> Any:
    """The plain function under JITFunction / Heuristics / Autotuner wrappers."""
    seen = kernel
    for _ in range(8):
        inner = getattr(seen, "fn", None)
        if inner is None:
            break
        seen = inner
    return seen


def debug_calls(kernel: Any) -> list[str]:
    """'name (file:line)' for every debugging call in the kernel's source; [] when there is none."""
    fn = _python_function(kernel)
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        first = inspect.getsourcelines(fn)[1]
        path = inspect.getsourcefile(fn) or "?"
    except (OSError, TypeError):
        return []
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = (func.attr if isinstance(func, ast.Attribute) and func.attr in DEBUG_ATTRS
                else func.id if isinstance(func, ast.Name) and func.id in DEBUG_NAMES else None)
        if name is not None:
            found.append(f"{name} ({path.rsplit('/', 1)[-1]}:{first + node.lineno - 1})")
    return found


def leftover_debug(kernels: Iterable[Any]) -> str | None:
    """The finding for a spec's kernels, or None when none carries debugging calls."""
    parts = []
    for kernel in kernels:
        calls = debug_calls(kernel)
        if calls:
            name = getattr(_python_function(kernel), "__name__", "kernel")
            parts.append(f"{name}: {', '.join(calls)}")
    if not parts:
        return None
    return ("leftover debugging in the kernel source (prints on every launch; remove before shipping): "
            + "; ".join(parts))


class LeftoverDebug(RuntimeError):
    """Raised by a source-check launch: the kernels carry debugging calls (the message lists them)."""


def source_check_launch(kernels: Callable[[], Iterable[Any]]) -> Callable[[Mapping[str, Any], Mapping[str, Any]],
                                                                         dict[str, Any]]:
    """A KernelSpec.launch that scans the kernels' source instead of running them: it raises
    LeftoverDebug with the calls it found, or returns {"debug_calls": 0} (the reference's value)."""
    def launch(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
        import torch

        finding = leftover_debug(kernels())
        if finding:
            raise LeftoverDebug(finding)
        return {"debug_calls": torch.zeros(1, device=inputs["x"].device)}
    return launch
