"""Probe results kept under parity's cache, keyed by (tier, arch, kernel source, signature, config).

A fit search compiles the same candidates again on every run of the same kernel; the answer of a
compile is a function of those five, so it is read back instead. One small JSON file per probe.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parity.paths import cache_root

KEY_VERSION = 2  # 2: ascend-compile answers carry the UB plan's figure for a fit (parity.fit.probe)


def fit_cache_dir() -> Path:
    return cache_root() / "fit"


def probe_key(tier: str, arch: str, source: str, signature: str, config: Mapping[str, Any]) -> str:
    text = json.dumps([KEY_VERSION, tier, arch, source, signature, sorted((k, repr(v)) for k, v in config.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def read(key: str) -> dict[str, Any] | None:
    path = fit_cache_dir() / f"{key}.json"
    try:
        entry: dict[str, Any] = json.loads(path.read_text())  # write() stored a dict
    except (OSError, ValueError):
        return None
    return entry


def write(key: str, outcome: Mapping[str, Any]) -> None:
    """Only answers the compiler gave (fits or overflows); a crash or timeout is retried next time."""
    if outcome.get("ok") is None:
        return
    root = fit_cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f"{key}.tmp"
    tmp.write_text(json.dumps(dict(outcome)))
    tmp.replace(root / f"{key}.json")
