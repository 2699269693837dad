"""The search: grow a size geometrically (x4 a step) to the production maximum, then bisect to the exact first crossing.

`check(size)` answers whether any limit is crossed at that size (a compile and a launch on the tier). Limits
grow with the size (a grid, an offset range, a block), so the crossing is where the answer turns; the search
returns the probe at the crossing and the one just below, both real checks, as the proof. `guess(below, above)`
may name a size to try first (a linear fit of a measured figure such as the grid's product): it is a shortcut
taken only when its own check and the one below it agree, never an answer on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

P = TypeVar("P")  # what one check observed
FACTOR = 4  # each step up multiplies the size: 1K to 1M in five compiles


@dataclass
class Found(Generic[P]):
    """The outcome along one axis: the last size that passes and the first that crosses (None: safe to high)."""

    last_ok: int | None
    first_bad: int | None
    ok_probe: P | None = None
    bad_probe: P | None = None
    sizes: list[int] = field(default_factory=list)  # every size checked, in order


def search(check: Callable[[int], tuple[bool, P]], low: int, high: int,
           guess: Callable[[int, P, int, P], int | None] | None = None) -> Found[P]:
    """Multiply from `low` to `high` (inclusive), then bisect between the last pass and the first crossing."""
    seen: dict[int, tuple[bool, P]] = {}
    found: Found[P] = Found(None, None)

    def at(size: int) -> tuple[bool, P]:
        if size not in seen:
            seen[size] = check(size)
            found.sizes.append(size)
        return seen[size]

    size, last_ok, ok_probe = low, None, None
    while True:
        crossed, probe = at(size)
        if crossed:
            break
        last_ok, ok_probe = size, probe
        if size >= high:
            found.last_ok, found.ok_probe = last_ok, ok_probe
            return found
        size = min(size * FACTOR, high)
    if last_ok is None or ok_probe is None:  # already crossed at the start: nothing below is known to pass
        found.first_bad, found.bad_probe = size, probe
        return found
    good, bad, good_p, bad_p = last_ok, size, ok_probe, probe
    step = 1  # the gallop's next step down from the first crossing seen
    while bad - good > 1:
        mid = guess(good, good_p, bad, bad_p) if guess else None
        if mid is not None and mid >= bad and bad - step > good:
            # the fit puts the crossing at the first crossing seen: a figure that grows in steps (cdiv(T, 16)) crosses
            # a little below it; gallop down (1, 2, 4, ... below) to a size that passes, then bisect what is left
            crossed, probe = at(bad - step)
            if crossed:
                bad, bad_p, step = bad - step, probe, step * 2
            else:
                good, good_p = bad - step, probe
            continue
        if mid is not None and good < mid - 1 < mid < bad:
            below, below_p = at(mid - 1)  # the guess and the size below it: one probe each
            if below:
                bad, bad_p = mid - 1, below_p
                continue
            good, good_p = mid - 1, below_p
            crossed, probe = at(mid)
            if crossed:
                bad, bad_p = mid, probe
            else:
                good, good_p = mid, probe
            continue
        mid = (good + bad) // 2
        crossed, probe = at(mid)
        if crossed:
            bad, bad_p = mid, probe
        else:
            good, good_p = mid, probe
    found.last_ok, found.ok_probe, found.first_bad, found.bad_probe = good, good_p, bad, bad_p
    return found
