"""The sizes a recompile storm is counted over, and why a count is not made: shared by the spec rows
(parity.envelope.tier) and the replayed ones (parity.envelope.replayed)."""

from __future__ import annotations

STEP = 16  # sizes 16 apart share Triton's divisibility specialization: only a constexpr recompiles per size


def sizes(low: int, high: int | None = None) -> list[int]:
    """Up to three sizes of one specialization class (multiples of 16, none 1) from the axis start up, none past
    the axis maximum `high`: fewer than two cannot show a storm."""
    first = max(STEP, (low + STEP - 1) // STEP * STEP)
    bound = high if high is not None and high > low else None  # a case already past the maximum: its own sizes
    return [s for s in (first, first + STEP, first + 2 * STEP) if bound is None or s <= bound]


def not_counted(name: str, low: int, high: int, counted: list[int], start_passed: bool) -> str | None:
    """Why no compile count is made along axis `name`, or None when one is."""
    if not start_passed:  # a kernel that fails (or cannot be checked) at its own case has no storm to count
        return f"{name} = {low:,}, the axis start, did not pass its check"
    if len(counted) < 2:
        return f"{name} = {low:,}..{high:,} holds no two sizes {STEP} apart"
    return None
