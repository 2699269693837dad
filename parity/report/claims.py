"""What a report may say a tier did with a case: words earned by that case's record on that tier.

A tier is said to compile a case only where it is a compile tier (its Backend's `mode`, never its name) and
the case's record there passed; a tier that runs the kernel (a device, the interpreter, triton-ascend's
lowering run on the CPU) computes the fp64 answer only where its record passed. Anything else is said as what
the record shows: it ran and failed the fp64 check, or its compile step finished but the case failed there.
Pure functions of (mode, status) pairs; the Facts of parity.report.divergence feed them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from parity.backends import BACKENDS, backend_class
from parity.results import Status

PASSED = (Status.PASSED, Status.XPASSED)
# a record's status as the verb of "the case ... on <tier>"
OUTCOME = {Status.FAILED: "fails", Status.ERROR: "errors", Status.CRASHED: "crashes",
           Status.XFAILED: "fails as declared", Status.INTERRUPTED: "was interrupted"}


def tier_mode(backend: str, recorded: str = "") -> str:
    """The tier's mode as its Backend class declares it; a tier parity has no class for keeps its records' mode."""
    return backend_class(backend).mode if backend in BACKENDS else (recorded or "run")


def earned(mode: str, status: Status | None) -> str:
    """The clause one tier's record earns on the side of a divergence where it did not fail to build or launch."""
    if status in PASSED:
        return "compiles on" if mode == "compile" else "computes the fp64 answer on"
    outcome = "is not recorded" if status is None else OUTCOME.get(status, f"is {status}")
    if mode == "compile":
        return f"gets through the compiler but the case {outcome} on"
    if status == Status.FAILED:
        return "runs but fails the fp64 check on"
    return f"runs but the case {outcome} on"


def refused(mode: str) -> str:
    """The clause for a tier whose build of the case failed: only a compile tier is said not to compile."""
    return "does not compile on" if mode == "compile" else "errors before computing on"


def join(parts: Iterable[tuple[str, str]]) -> str:
    """`clause a, b; clause c` from (clause, tier label) pairs, clauses in first-seen order."""
    grouped: dict[str, list[str]] = {}
    for clause, label in parts:
        grouped.setdefault(clause, []).append(label)
    return "; ".join(f"{clause} {', '.join(labels)}" for clause, labels in grouped.items())


def sentence(positive: Sequence[tuple[str, str]], negative: Sequence[tuple[str, str]],
             failing_first: bool = False) -> str:
    """Both sides of a divergence, each tier with the words its own record earns; `failing_first` where the
    sentence may be clipped in a table and the failing side is the news."""
    sides = (join(negative), join(positive)) if failing_first else (join(positive), join(negative))
    return "; ".join(part for part in sides if part)
