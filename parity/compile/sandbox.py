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

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.paths import point_triton_at, triton_cache_dir


@dataclass
class Sandbox:
    env: dict[str, str | None] = field(default_factory=dict)
    check_disk_cache: Callable[..., Any] | None = None


def _no_disk_autotune(self: Any, tuning_key: Any, configs: Any, bench_fn: Callable[[], Any]) -> bool:
    """Autotuner.check_disk_cache for compile tiers: always bench (compiling each config), store nothing."""
    bench_fn()
    return False


def enter(tier: str, root: Path | None = None) -> Sandbox:
    """Point Triton's dirs at parity's own (or `root`) and stop the autotune disk cache; call before any compile."""
    root = root or triton_cache_dir(tier)
    saved = Sandbox(env=point_triton_at(root))
    from triton.runtime.autotuner import Autotuner

    # triton-ascend 3.2 has no disk autotune cache; upstream >= 3.4 does
    saved.check_disk_cache = Autotuner.__dict__.get("check_disk_cache")
    if saved.check_disk_cache is not None:
        Autotuner.check_disk_cache = _no_disk_autotune  # type: ignore[method-assign]
    return saved


def leave(saved: Sandbox) -> None:
    for key, value in saved.env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    if saved.check_disk_cache is not None:
        from triton.runtime.autotuner import Autotuner

        Autotuner.check_disk_cache = saved.check_disk_cache  # type: ignore[method-assign]
