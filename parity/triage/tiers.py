"""What triage asks of a tier: its compiler family, whether it interprets, compiles only or computes, whose compiler
a verdict on it names, and the run that would settle a guess. Every answer comes from the facets its Backend
declares (parity.backends.base.Backend), never from its name."""

from __future__ import annotations

from parity.backends import backend_class
from parity.findings.tracker import Tracker
from parity.results import OwnerKind


def family(tier: str) -> Tracker:
    """The compiler family a tier's verdict speaks for: its tracker (Backend.tracker; one tracker, one family, so a
    third vendor with its own tracker is a family of its own even where its bugs' owner kind is Triton's)."""
    return backend_class(tier).tracker


def interpreted(tier: str) -> bool:
    return backend_class(tier).mode == "interpret"


def computes(tier: str) -> bool:
    """A tier whose pass says the kernel's values were right (it ran the kernel), not only that it compiled."""
    return backend_class(tier).mode != "compile"


def runs_upstream(tier: str) -> bool:
    """A tier where upstream Triton's compiled kernel computes on a device (the GPU)."""
    cls = backend_class(tier)
    return cls.mode == "run" and cls.tracker.owner is OwnerKind.TRITON


def vendor_of(tier: str) -> tuple[OwnerKind, str]:
    """The owner a verdict against this tier's own tool names: its compiler, or Triton's interpreter."""
    if interpreted(tier):
        return OwnerKind.TRITON, "Triton interpreter"
    if family(tier).owner is OwnerKind.TRITON_ASCEND:
        return OwnerKind.TRITON_ASCEND, "triton-ascend"
    return OwnerKind.TRITON, "Triton"


def settle_run(tier: str) -> str:
    """The run that would settle a provisional verdict on this tier: the same case on the other family's tiers."""
    if family(tier).owner is OwnerKind.TRITON_ASCEND:
        return "the same case on interpret (nox -s interpret) and cuda-compile, then `python -m parity.cli report`"
    return ("the same case on ascend-lowered or ascend-compile (nox -s ascend-lowered), then "
            "`python -m parity.cli report`")
