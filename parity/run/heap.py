"""The start-up heap, kept out of the garbage collector's full collections.

A parity session imports torch and Triton and builds its specs (or loads a replayed bundle) before its first case:
some 200,000 objects that live as long as the process. A full collection walks all of them, about 100 ms under the
interpreter, and it falls inside whichever case crosses the collector's threshold: the 7th of 12 replayed l2norm
launches paid it (docs/record-replay-2026-12-04.md). Frozen after collection (gc.freeze), they are never walked
again; the cases' own objects are collected as before. `live_objects` sees the frozen ones too.

Registered as a pytest plugin by parity.plugin in a parity session only (not in the engine's self-tests).
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `parity record` reads live tensors through this module in the user's process: no pytest there
    import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()


def live_objects() -> list[Any]:
    """Every object the collector tracks, the frozen start-up heap included (gc.get_objects leaves it out)."""
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    try:
        return gc.get_objects()
    finally:
        if frozen:
            gc.freeze()
