"""What a compile tier changes in its process so that it never writes where a run tier reads.

- Triton's cache (compiled binaries, and upstream's autotune timings when a kernel says
  `cache_results=True`) goes to parity's own dir, `parity.paths.triton_cache_dir(tier)`, instead
  of `~/.triton/cache`: a compile-only tier keys its binaries like a real sm_90 or Ascend
  target, and a later run tier on the same machine must not pick them up.
- Autotune timings are never read from or written to disk: the compile-only benchmarker
  times nothing (every config gets 0.0), so a stored "winner" is fake, and a re-run that
  found it would compile one config instead of all of them.

`enter()` returns what `leave()` needs to undo it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parity.paths import triton_cache_dir
from parity.seams.env import point_triton_at


@dataclass
class Sandbox:
    undo_env: Callable[[], None] | None = None  # Triton's dirs put back (parity.seams.env)
    undo_disk_autotune: Callable[[], None] | None = None


def _no_disk_autotune(inner: Any, self: Any, tuning_key: Any, configs: Any, bench_fn: Callable[[], Any]) -> bool:
    """Autotuner.check_disk_cache for compile tiers: always bench (compiling each config), store nothing."""
    bench_fn()
    return False


def enter(tier: str, root: Path | None = None) -> Sandbox:
    """Point Triton's dirs at parity's own (or `root`) and stop the autotune disk cache; call before any compile."""
    root = root or triton_cache_dir(tier)
    saved = Sandbox(undo_env=point_triton_at(root))
    from parity.seams.jit import disk_autotune

    seam = disk_autotune()  # None where the release has no disk autotune cache (parity.seams.versions)
    if seam is not None:
        saved.undo_disk_autotune = seam.add(_no_disk_autotune)
    return saved


def leave(saved: Sandbox) -> None:
    if saved.undo_env is not None:
        saved.undo_env()
    if saved.undo_disk_autotune is not None:
        saved.undo_disk_autotune()
