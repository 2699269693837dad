"""The driver's loop: a table of named phases, run in order over one value (a case, or the run's end), as
pytest runs its hook sequence (https://docs.pytest.org/en/8.3.x/reference/reference.html#hooks) and nox its
sessions (https://nox.thea.codes/en/stable/usage.html). The tables themselves are the pipeline's
(parity.driver.pipeline, parity.driver.sweep) and the run end's (parity.driver.finish).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar


class Settles(Protocol):
    settled: bool  # an earlier phase settled the value: only the phases marked `settled` still run


T = TypeVar("T", bound=Settles)


@dataclass(frozen=True)
class Phase(Generic[T]):
    """One step of a table: its name (what a reader and a test see), the function, and whether it runs for a
    value an earlier phase settled (a skip, a refusal: triage and write still run, the repro phases do not), and
    what a KeyboardInterrupt (Ctrl-C, a job stop) in it leaves behind before it is re-raised."""

    name: str
    run: Callable[[T], None]
    settled: bool = False
    interrupted: Callable[[T], None] | None = None


def run_phases(value: T, table: Sequence[Phase[T]], skip: Sequence[str] = ()) -> T:
    """Each phase of `table` in order, except those named in `skip` (a sweep's re-run writes nothing) and, once
    a phase settles the value, those not marked `settled`. A raise ends the loop; a KeyboardInterrupt first
    runs the phase's `interrupted` (the case's record, written as `interrupted`)."""
    for phase in table:
        if phase.name in skip or (value.settled and not phase.settled):
            continue
        try:
            phase.run(value)
        except KeyboardInterrupt:
            if phase.interrupted is not None:
                phase.interrupted(value)
            raise
    return value


def names(table: Sequence[Phase[T]]) -> tuple[str, ...]:
    return tuple(phase.name for phase in table)
