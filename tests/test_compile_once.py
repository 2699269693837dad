"""One compile per binary across workers (parity.compile.once): the lock a waiting worker meets."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from typing import Any

from parity.compile import once


class Src:
    def __init__(self, digest: str) -> None:
        self.digest = digest

    def hash(self) -> str:
        return self.digest


def test_the_key_names_source_target_and_options():
    key = once.compile_key(Src("a"), "cuda:90", {"num_warps": 4})
    assert key == once.compile_key(Src("a"), "cuda:90", {"num_warps": 4})
    assert key != once.compile_key(Src("a"), "cuda:90", {"num_warps": 8})
    assert key != once.compile_key(Src("b"), "cuda:90", {"num_warps": 4})
    assert key != once.compile_key(Src("a"), "cuda:80", {"num_warps": 4})
    assert once.compile_key("/some/kernel.ttir", "cuda:90", {}) is None  # an IR path: compiled unlocked


def _hold(lock_dir: str, key: str, ready: Any, release: Any) -> None:
    with once.held(Path(lock_dir), key):
        ready.set()
        release.wait(10)


def test_a_second_worker_waits_for_the_first_and_gives_up_only_after_its_limit(tmp_path):
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold, args=(str(tmp_path), "k", ready, release))
    child.start()
    try:
        assert ready.wait(10)
        t0 = time.monotonic()
        with once.held(tmp_path, "k", max_wait_s=0.3) as got:  # negative control: the lock is taken
            assert not got and time.monotonic() - t0 >= 0.3
        with once.held(tmp_path, "other", max_wait_s=0.3) as got:  # another binary is not held up
            assert got
        release.set()
        child.join(10)
        with once.held(tmp_path, "k", max_wait_s=5) as got:
            assert got
    finally:
        release.set()
        child.join(10)


def test_the_layer_compiles_under_the_lock_and_passes_everything_through(tmp_path):
    seen: list[tuple[Any, ...]] = []

    def inner(src: Any, target: Any = None, options: Any = None) -> str:
        key = once.compile_key(src, target, options)
        with once.held(tmp_path, key, max_wait_s=0.05) as free:  # held by the layer around this call
            seen.append((src.digest, target, options, free))
        return "binary"

    layer = once.layer(tmp_path)
    assert layer(inner, Src("a"), target="cuda:90", options={"num_warps": 4}) == "binary"
    assert seen == [("a", "cuda:90", {"num_warps": 4}, False)]
    assert layer(lambda src, *a, **k: "ir", "/k.ttir", target="t") == "ir"
