"""Shrinking: make a failing case smaller while it still fails the same way.

Greedy and bounded: halve one size axis (T, B, H, K, ...) or drop one varlen
sequence at a time, keep the change when the failure persists, start over.
The predicate is the caller's (it re-runs the case); this module only proposes.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# the axes halved, in this order: sequence length first, it usually dominates the size
SIZE_AXES = ("T", "B", "H", "K", "V", "M", "N")
# params holding varlen sequence lengths (a list) or offsets (a list starting at 0)
LENGTH_KEYS = ("seqlens", "lengths")
OFFSET_KEYS = ("cu_seqlens",)


@dataclass(frozen=True)
class ShrinkResult:
    original: dict[str, Any]
    shrunk: dict[str, Any]
    trials: int
    steps: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.shrunk != self.original

    def as_dict(self) -> dict[str, Any]:
        return {"original": self.original, "shrunk": self.shrunk, "trials": self.trials, "steps": self.steps}


def _halve(params: Mapping[str, Any], axis: str) -> dict[str, Any] | None:
    value = params.get(axis)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 1:
        return None
    return {**params, axis: value // 2}


def _drop_sequence(params: Mapping[str, Any], key: str, i: int, offsets: bool) -> dict[str, Any]:
    seq = [int(x) for x in params[key]]
    lengths = [b - a for a, b in itertools.pairwise(seq)] if offsets else list(seq)
    total_before = sum(lengths)
    del lengths[i]
    new = [0, *itertools.accumulate(lengths)] if offsets else lengths
    out = {**params, key: type(params[key])(new)}
    if params.get("T") == total_before and not isinstance(params.get("T"), bool):
        out["T"] = sum(lengths)  # T is the packed length: keep it consistent
    return out


def candidates(params: Mapping[str, Any], axes: Sequence[str] = SIZE_AXES) -> Iterator[tuple[str, dict[str, Any]]]:
    """Smaller variants of `params`, each with a one-line description of the change."""
    for axis in axes:
        smaller = _halve(params, axis)
        if smaller is not None:
            yield f"{axis} {params[axis]} -> {smaller[axis]}", smaller
    for key in (*LENGTH_KEYS, *OFFSET_KEYS):
        seq = params.get(key)
        offsets = key in OFFSET_KEYS
        n_seqs = (len(seq) - 1 if offsets else len(seq)) if isinstance(seq, (list, tuple)) else 0
        if n_seqs > 1:
            for i in range(n_seqs):
                yield f"drop sequence {i} of {key}", _drop_sequence(params, key, i, offsets)


def shrink(params: Mapping[str, Any], still_fails: Callable[[dict[str, Any]], bool], *,
           axes: Sequence[str] = SIZE_AXES, max_trials: int = 32, max_seconds: float = 120.0,
           clock: Callable[[], float] = time.monotonic) -> ShrinkResult:
    """The smallest params reached greedily; `still_fails` must return False for a different failure.

    A first trial slower than a third of `max_seconds` ends the search after it: trials that slow
    leave no room for the halvings that would follow, and each one only repeats the case's cost.
    """
    current = dict(params)
    steps: list[str] = []
    trials = 0
    start = clock()
    deadline = start + max_seconds
    improved = True
    while improved and trials < max_trials and clock() < deadline:
        improved = False
        for desc, candidate in candidates(current, axes):
            if trials >= max_trials or clock() >= deadline:
                break
            trials += 1
            try:
                fails = still_fails(candidate)
            except Exception:  # an invalid smaller case is not the failure we are chasing
                fails = False
            if fails:
                current, improved = candidate, True
                steps.append(desc)
            if trials == 1 and clock() - start > max_seconds / 3:
                steps.append(f"stopped: the first trial took {clock() - start:.1f} s of a {max_seconds:g} s budget")
                improved = False
                break
            if fails:
                break
    return ShrinkResult(original=dict(params), shrunk=current, trials=trials, steps=steps)
