"""Which case dimensions grow, from where and how far: `--grow T=1..1M,B=1..64` or a spec's `dynamic_args`.

Sizes are integers; `K` is 1,024 and `M` is 1,048,576 (2^20), so the default production maximum, 1M tokens
along a sequence axis, is 2^20. An axis starts from the spec's own case (the largest value its cases give, at
which parity's other tiers already check it) unless `--grow` names a start.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX = 1 << 20  # 1M tokens: a long-context production length
_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgG]?)\s*$")


class AxisError(ValueError):
    """A --grow term that cannot be read; the message says the form it takes."""


@dataclass(frozen=True)
class Axis:
    """One dimension to grow: its case parameter, the start (known to port) and the production maximum."""

    name: str
    low: int
    high: int


def parse_size(text: str) -> int:
    m = _SIZE.match(text)
    if not m:
        raise AxisError(f"{text!r} is not a size; write 4096, 64K or 1M (K = 1,024, M = 1,048,576)")
    return int(m.group(1)) * _SUFFIX[m.group(2).lower()]


def parse_grow(text: str) -> list[Axis]:
    """`T=1..1M,B=1..64` -> axes; `T=..1M` keeps the spec's start, `T=1M` only sets the maximum."""
    axes = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        name, eq, span = term.partition("=")
        if not eq or not name.strip().isidentifier():
            raise AxisError(f"--grow {term!r}: write NAME=LOW..HIGH, e.g. T=1..1M")
        low_text, dots, high_text = span.partition("..")
        low = parse_size(low_text) if dots and low_text.strip() else 0  # 0: the spec's own start
        high = parse_size(high_text if dots else low_text)
        if high < max(low, 1):
            raise AxisError(f"--grow {term!r}: the maximum {high:,} is below the start {low:,}")
        axes.append(Axis(name.strip(), low, high))
    return axes


def size_of(params: Mapping[str, Any], names: Sequence[str]) -> int:
    """The product of a case's grown dimensions: how large it is along the axes."""
    return math.prod(int(params[n]) for n in names)


def base_params(cases: Iterable[Mapping[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """The case to grow from: the one with the largest product of the grown dimensions (ties: the first)."""
    best: dict[str, Any] | None = None
    score = -1
    for params in cases:
        if not all(isinstance(params.get(n), int) and not isinstance(params.get(n), bool) for n in names):
            continue
        size = size_of(params, names)
        if size > score:
            best, score = dict(params), size
    if best is None:
        raise AxisError(f"no case has integer values for {', '.join(names)}; name axes the cases give with --grow")
    return best


def axes_for(dynamic_args: Sequence[str], grow: Sequence[Axis], params: Mapping[str, Any]) -> list[Axis]:
    """The axes of one spec: --grow's (those its cases have), else its dynamic_args up to the default maximum.
    A start of 0 (not given) becomes the case's own value; the others stay at their start while one grows."""
    chosen = [a for a in grow if a.name in params] if grow else [Axis(n, 0, DEFAULT_MAX) for n in dynamic_args]
    return [Axis(a.name, a.low or int(params[a.name]), a.high) for a in chosen]


def at_start(params: Mapping[str, Any], axes: Sequence[Axis]) -> dict[str, Any]:
    """The base case with every axis at its start (the example's B=1 while T grows)."""
    return {**params, **{a.name: a.low for a in axes}}
