"""Triton's own environment variables (TRITON_*): parity sets them here only, and every setting is undone.

Triton reads TRITON_INTERPRET when @triton.jit decorates and in its code generator, TRITON_CACHE_DIR and
TRITON_HOME for its caches, TRITON_ALWAYS_COMPILE on each compile (triton/knobs.py in the Triton
repository names them). `set_triton_env` returns the undo that puts back what was there; `triton_env`
is the same as a context manager. parity's own variables are parity.settings'.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def _apply(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def set_triton_env(**values: str | None) -> Callable[[], None]:
    """Set Triton's variables (None unsets one); returns the undo that restores their previous values."""
    strays = [name for name in values if not name.startswith("TRITON_")]
    if strays:
        raise ValueError(f"{strays} are not Triton's variables; parity's own are declared in parity.settings")
    saved = {name: os.environ.get(name) for name in values}
    _apply(dict(values))
    return lambda: _apply(saved)


@contextmanager
def triton_env(**values: str | None) -> Iterator[None]:
    """Triton's variables set for the block, restored after it."""
    undo = set_triton_env(**values)
    try:
        yield
    finally:
        undo()


def interpreting() -> bool:
    """Whether Triton's interpreter runs this process's kernels (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def point_triton_at(root: Path) -> Callable[[], None]:
    """Send Triton's cache and home (~/.triton) under `root`; returns the undo.

    Every tier does this, run tiers too: a parity run never writes the user's Triton cache, and
    autotune timings a library stores with `cache_results=True` stay with the tier that measured them.
    """
    (root / "home").mkdir(parents=True, exist_ok=True)
    return set_triton_env(TRITON_CACHE_DIR=str(root / "cache"), TRITON_HOME=str(root / "home"))
