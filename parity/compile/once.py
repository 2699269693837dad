"""Compile each binary once across xdist workers: a file lock per compile, on the compile seam.

xdist hands cases out round robin, so on a cold cache several workers often reach the same kernel,
config and specialization at the same moment; each misses Triton's disk cache and compiles the same
binary (traced on one H200, 16 workers, cold: 177 of 810 compiles in four workers repeated one that
another of the four was compiling). Under this layer the first worker compiles while the others wait
on a lock named by what Triton's cache key is made of (the source's hash, target, options), then load
its binary from the disk cache the run shares. A worker never waits longer than `MAX_WAIT_S`: past
that it compiles itself, as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_WAIT_S = 300.0  # a compile that long is hung; the case's own timeout settles it
POLL_S = 0.05


def compile_key(src: Any, target: Any, options: Any) -> str | None:
    """What names one binary, from the arguments of triton.compiler.compile; None when the source has
    no hash (an IR file path): such a compile goes ahead unlocked."""
    digest = getattr(src, "hash", None)
    if not callable(digest):
        return None
    try:
        opts = sorted((str(k), repr(v)) for k, v in (options or {}).items())
        text = repr((digest(), repr(target), opts))
    except Exception:  # a source whose hash needs what it does not have yet: compile unlocked
        return None
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@contextlib.contextmanager
def held(lock_dir: Path, key: str, max_wait_s: float = MAX_WAIT_S) -> Iterator[bool]:
    """Holds the lock for `key` inside the block; yields False where it gave up waiting."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_dir / key, os.O_RDWR | os.O_CREAT, 0o644)
    got = False
    try:
        deadline = time.monotonic() + max_wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                got = True
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(POLL_S)
        yield got
    finally:
        if got:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def layer(lock_dir: Path) -> Any:
    """The compile-seam layer: `inner` (Triton's compile) runs under the lock of its binary."""

    def once(inner: Any, src: Any, *args: Any, **kwargs: Any) -> Any:
        target = kwargs.get("target", args[0] if args else None)
        options = kwargs.get("options", args[1] if len(args) > 1 else None)
        key = compile_key(src, target, options)
        if key is None:
            return inner(src, *args, **kwargs)
        with held(lock_dir, key):
            return inner(src, *args, **kwargs)

    return once


def install(lock_dir: Path) -> Any:
    """Adds the layer for the rest of this process (an xdist worker); returns what removes it."""
    from parity.seams.jit import compile_function

    return compile_function().add(layer(lock_dir))
