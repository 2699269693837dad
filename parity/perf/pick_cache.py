"""The perf pass reuses autotune picks across runs instead of timing every config again.

On the H200 the perf pass spent most of a warm run re-autotuning: every perf case, and the peer
library's kernels (fla's GDN forward alone 47 s), timed every config again although nothing had
changed. A pick is stored per autotuner under parity's cache dir, keyed by what decides it: the
kernel's source (with the jit functions it calls), its config list, the autotuning key of the
arguments (the key args' values and the tensors' dtypes, as Triton's Autotuner forms it), the device
name and the Triton version. A run that finds the pick hands it to the Autotuner, which then launches
it without timing a single config; any change to those inputs is another key, so it tunes afresh.
`--retune` ignores stored picks (and stores the new ones). The figures a perf case reports are
still timed in the run: only the choice among configs is remembered.

One policy for every Autotuner the launch reaches, ours and the peer's: Triton's own disk cache
(`cache_results`, `TRITON_CACHE_AUTOTUNING`) is fixed when a library's module is imported, leaves
the device name out of its key, and gives up on configs with a pre_hook, so it cannot cover
fla's kernels in a process that imported them already.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.compile.counter import innermost_name
from parity.paths import cache_root

JSON_SCALARS = (bool, int, float, str, type(None))


def picks_dir() -> Path:
    return cache_root() / "autotune-picks"


def tuning_key(tuner: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, ...]:
    """The key Triton's Autotuner.run looks its cache up by (the same in Triton 3.2 through 3.8)."""
    named = {**dict(zip(tuner.arg_names, args, strict=False)), **kwargs}
    named = {k: v for k, v in named.items() if k in tuner.arg_names}
    key = [named[k] for k in tuner.keys if k in named]
    key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
    return tuple(key)


def source_key(tuner: Any) -> str:
    """The kernel's source: the JITFunction's cache key (its source and the jit functions it calls),
    else (the interpreter's function) the Python source."""
    obj = tuner
    while obj is not None:
        key = getattr(obj, "cache_key", None)
        if isinstance(key, str):
            return key
        if inspect.isfunction(obj):
            return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()
        obj = getattr(obj, "fn", None)
    return ""


@dataclass
class PickStore:
    """Stored picks for one device and Triton version; counts what it reused and what was tuned."""

    device: str
    triton_version: str
    root: Path = field(default_factory=picks_dir)
    retune: bool = False
    reused: int = 0
    tuned: int = 0
    # id(autotuner) -> (autotuner, the config it launched with), since the caller last cleared it (one perf
    # case); names and text are made in `picks`, not here: this runs at every timed launch
    picked: dict[int, tuple[Any, Any]] = field(default_factory=dict)

    def path(self, tuner: Any) -> Path:
        ident = json.dumps([innermost_name(tuner), source_key(tuner), [str(c) for c in tuner.configs],
                            self.device, self.triton_version])
        return self.root / f"{innermost_name(tuner)[:80]}-{hashlib.sha256(ident.encode()).hexdigest()[:24]}.json"

    def _read(self, path: Path) -> dict[str, str]:
        try:
            return dict(json.loads(path.read_text())["picks"])
        except (OSError, ValueError, KeyError, TypeError):  # absent or torn: tune again
            return {}

    def lookup(self, tuner: Any, key: tuple[Any, ...]) -> Any | None:
        """The stored config for this key, as the object in the tuner's own list; None to tune."""
        text = _key_text(key)
        if self.retune or text is None:
            return None
        stored = self._read(self.path(tuner)).get(text)
        return next((c for c in tuner.configs if str(c) == stored), None) if stored else None

    def remember(self, tuner: Any, key: tuple[Any, ...], config: Any) -> None:
        text = _key_text(key)
        if text is None:
            return
        path = self.path(tuner)
        picks = {**self._read(path), text: str(config)}
        path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"kernel": innermost_name(tuner), "device": self.device, "triton": self.triton_version,
                           "picks": picks}, indent=1)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(body)
        os.replace(tmp, path)  # atomic: a reader sees the old file or the new one

    def counts(self) -> dict[str, int]:
        return {"reused": self.reused, "tuned": self.tuned}

    def note(self, tuner: Any, config: Any) -> None:
        self.picked[id(tuner)] = (tuner, config)

    def picks(self) -> dict[str, str]:
        """autotuned kernel name -> the config it last launched with, as text."""
        return {innermost_name(tuner): str(config) for tuner, config in self.picked.values()}


def _key_text(key: tuple[Any, ...]) -> str | None:
    """The key as JSON; None where an element would not survive the round trip (a tensor as a key)."""
    return json.dumps(list(key)) if all(isinstance(v, JSON_SCALARS) for v in key) else None


def store_for(backend: Any, *, retune: bool = False) -> PickStore:
    import triton

    return PickStore(device=backend.device_name() or backend.name, triton_version=triton.__version__, retune=retune)


def before_run(store: PickStore, tuner: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """The policy an Autotuner.run wrapper calls first: hand a stored pick to the tuner's in-memory
    cache (it then launches the pick untimed); returns the key this call tunes, or None."""
    if len(tuner.configs) <= 1:
        return None
    key = tuning_key(tuner, args, kwargs)
    if key in tuner.cache:
        store.note(tuner, tuner.cache[key])
        return None
    config = store.lookup(tuner, key)
    if config is not None:
        tuner.cache[key] = config
        store.reused += 1
        store.note(tuner, config)
        return None
    return key


def after_run(store: PickStore, tuner: Any, key: Any) -> None:
    """Then: store what the tuner picked for the key it tuned."""
    if key is not None and key in tuner.cache:
        store.tuned += 1
        store.remember(tuner, key, tuner.cache[key])
        store.note(tuner, tuner.cache[key])


@contextlib.contextmanager
def reusing_picks(store: PickStore) -> Iterator[PickStore]:
    """Inside, every Autotuner (subclasses that call Autotuner.run too) consults and fills `store`: a layer
    on the Autotuner.run seam (parity.seams.jit)."""
    from parity.seams.jit import autotuner_run

    def run(inner: Any, tuner: Any, *args: Any, **kwargs: Any) -> Any:
        key = before_run(store, tuner, args, kwargs)
        out = inner(tuner, *args, **kwargs)
        after_run(store, tuner, key)
        return out

    with autotuner_run().layer(run):
        yield store
