"""Backends by name. Each lives in its own module and is imported only when chosen."""

from __future__ import annotations

import functools
import importlib

from parity.backends.base import Backend
from parity.context import register_facets

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
    module_name, cls_name = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module_name), cls_name)


register_facets(backend_class)  # parity.current_target() and library adapters ask the backend in scope


def get_backend(name: str) -> Backend:
    module_name, cls_name = BACKENDS[parse_backend(name)].split(":")
    return getattr(importlib.import_module(module_name), cls_name)()


__all__ = ["BACKENDS", "Backend", "backend_class", "get_backend", "parse_backend"]
