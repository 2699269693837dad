"""Where parity keeps its own files: never the working directory, never Triton's ~/.triton.

`PARITY_CACHE_DIR` wins; otherwise `$XDG_CACHE_HOME/parity`, otherwise `~/.cache/parity`.
"""

from __future__ import annotations

import os
from pathlib import Path

from parity import settings


def cache_root() -> Path:
    """parity's cache dir; read at call time so a test (or a session) can point it elsewhere."""
    explicit = settings.current().cache_dir
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CACHE_HOME")  # the desktop's own convention, not parity's (parity.settings)
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "parity"


def ref_cache_dir() -> Path:
    """The fp64 reference cache (parity.run.refcache)."""
    return cache_root() / "ref"


def triton_cache_dir(tier: str) -> Path:
    """Triton's dirs for one tier: a compile tier's binaries never share a dir that a run tier reads."""
    return cache_root() / "triton" / tier
