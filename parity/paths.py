"""Where parity keeps its own files: never the working directory, never Triton's ~/.triton.

`PARITY_CACHE_DIR` wins; otherwise `$XDG_CACHE_HOME/parity`, otherwise `~/.cache/parity`.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """parity's cache dir; read at call time so a test (or a session) can point it elsewhere."""
    explicit = os.environ.get("PARITY_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "parity"


def ref_cache_dir() -> Path:
    """The fp64 reference cache (parity.run.refcache)."""
    return cache_root() / "ref"


def triton_cache_dir(tier: str) -> Path:
    """Triton's dirs for one tier: a compile tier's binaries never share a dir that a run tier reads."""
    return cache_root() / "triton" / tier


TRITON_DIR_VARS = ("TRITON_CACHE_DIR", "TRITON_HOME")


def point_triton_at(root: Path) -> dict[str, str | None]:
    """Send Triton's cache and home (~/.triton) under `root`; returns the values to put back.

    Every tier does this, run tiers too: a parity run never writes the user's Triton cache, and
    autotune timings a library stores with `cache_results=True` stay with the tier that measured them.
    """
    saved = {k: os.environ.get(k) for k in TRITON_DIR_VARS}
    (root / "home").mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(root / "cache")
    os.environ["TRITON_HOME"] = str(root / "home")
    return saved
