"""Case-list builders: shape axes as plain data, expanded in a stable order."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from parity.spec import Case


def product(**axes: Sequence[Any]) -> list[Case]:
    """Every combination of the axes, in the order given (the last axis varies fastest)."""
    names = list(axes)
    return [Case(dict(zip(names, values, strict=True))) for values in itertools.product(*(axes[n] for n in names))]


def by_level(quick: Iterable[Case], full: Iterable[Case] = ()) -> Callable[[str], list[Case]]:
    """cases(level): `full` adds to `quick`, without duplicates, so quick ⊆ full."""
    quick_list = list(quick)

    def cases(level: str) -> list[Case]:
        if level == "quick":
            return quick_list
        seen = {c.id for c in quick_list}
        added = []
        for c in full:
            if c.id not in seen:
                seen.add(c.id)
                added.append(c)
        return quick_list + added

    return cases


def where(cases: Iterable[Case], keep: Callable[[Mapping[str, Any]], bool]) -> list[Case]:
    return [c for c in cases if keep(c.params)]
