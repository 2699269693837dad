"""Backends by name. Each lives in its own module and is imported only when chosen."""

from __future__ import annotations

import functools
import importlib

from parity.backends.base import Backend
from parity.spec.context import register_facets

# name -> "module:Class"; the compile tiers register theirs here too
BACKENDS: dict[str, str] = {
    "interpret": "parity.backends.interpret:InterpretBackend",
    "cuda": "parity.backends.cuda.run:CudaBackend",
    "ascend": "parity.backends.ascend.run:AscendBackend",
    "cuda-compile": "parity.backends.cuda.compile:CudaCompileBackend",
    "ascend-compile": "parity.backends.ascend.compile:AscendCompileBackend",
    "ascend-lowered": "parity.backends.ascend.lowered:AscendLoweredBackend",
}


def parse_backend(name: str) -> str:
    """argparse-style check: an unknown name lists the valid ones."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; valid: {', '.join(BACKENDS)}")
    return name


@functools.cache
def backend_class(name: str) -> type[Backend]:
    """The class of a backend named in a record or a scope, for its facets (target, tracker, mode, ...);
    `Backend` itself, with the defaults, for a name no backend has."""
    if name not in BACKENDS:
        return Backend
    return _imported(name)


def _imported(name: str) -> type[Backend]:
    """The class BACKENDS names for `name`, imported; an entry naming anything else says which."""
    module_name, cls_name = BACKENDS[name].split(":")
    found = getattr(importlib.import_module(module_name), cls_name)
    if not (isinstance(found, type) and issubclass(found, Backend)):
        raise TypeError(f"BACKENDS[{name!r}] = {BACKENDS[name]!r} is not a parity Backend class")
    return found


register_facets(backend_class)  # parity.current_target() and library adapters ask the backend in scope


def registered() -> tuple[type[Backend], ...]:
    """Every registered tier's class, in the order of BACKENDS (each module imported; none imports triton)."""
    return tuple(backend_class(name) for name in BACKENDS)


def tiers_where(**facets: object) -> tuple[str, ...]:
    """The registered tiers whose classes have these facet values, e.g. tiers_where(language="triton-ascend"):
    a set of tiers asked of the backends, never spelled as a list of names."""
    return tuple(cls.name for cls in registered() if all(getattr(cls, k) == v for k, v in facets.items()))


def device_tier(column: str) -> type[Backend] | None:
    """The hardware tier whose check sits in a verdict column (the one no compile-only tier stands in for)."""
    return next((cls for cls in registered() if cls.hardware and cls.check and cls.check.target == column), None)


def get_backend(name: str) -> Backend:
    return _imported(parse_backend(name))()


__all__ = ["BACKENDS", "Backend", "backend_class", "device_tier", "get_backend", "parse_backend", "registered",
           "tiers_where"]
