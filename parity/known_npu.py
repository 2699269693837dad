"""The published silent wrong results of triton-ascend on a real NPU, as data: each bug's public issue, the stack it
was reported on, its triggering pattern with a detector over the kernel's source (parity.npu_patterns), and what
ascend-lowered (triton-ascend 3.2.0's lowering run on x86) showed on a minimal kernel with the pattern (the canaries
in tests/planted_npu_bugs.py, checked by tests/test_known_npu_lowered.py).

A bug the lowering reproduces is a known divergence of its canary (`canary_divergences`): the canary's verdict is
xfail with the link. A bug it does not reproduce is one no CPU tier can see: a kernel with its pattern that passes on
a triton-ascend tier without the device gets the note "<tier> cannot see this known NPU bug: <link>" on its record
(`npu_unseen`, written by `unseen`) and in the report, never a bare pass, and never a failure either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import parity.npu_patterns as pat
from parity.spec import KnownDivergence

LOWERED = "ascend-lowered"  # the one CPU tier that computes triton-ascend's lowering (its canaries run there)


@dataclass(frozen=True)
class NpuBug:
    """A silent wrong result of triton-ascend on a real NPU, published with a reproducer."""

    id: str  # tracker#number
    what: str  # the wrong result, in one line
    link: str
    reported_on: str  # the stack and chip the issue names, and the state when read (2026-12-06)
    fixed_in: str  # the release that fixes it; "" while none is named
    pattern: str  # what in a kernel triggers it
    detect: Callable[[str], list[str]]  # kernel source -> the lines with the pattern (parity.npu_patterns)
    canary: str  # the spec in tests/planted_npu_bugs.py that has the pattern
    lowered: str  # what that canary showed on ascend-lowered, and why
    reproduced: bool = False  # ascend-lowered computes the canary wrong: then it is a known divergence, not unseen


NPU_BUGS: tuple[NpuBug, ...] = (
    NpuBug("triton-ascend#2291", "a reduction along the leading axis of a 3-D tile reduces the wrong memory axis",
           "https://github.com/triton-lang/triton-ascend/issues/2291",
           "Ascend 910B (the issue names no triton-ascend release); open, reported 2026-09-19", "",
           "tl.sum(acc, 0) (any axis-0 reduction) over a tile [R, X1, X0]; the same math on a 2-D tile is exact, and a "
           "tl.reshape to 2-D right before the sum does not help",
           pat.leading_axis_reductions, "npu_bug_3d_leading_sum",
           "not reproduced: an [8, 4, 16] fp32 tile, contiguous and broadcast along X1, sums to the fp64 answer on "
           "ascend-lowered (triton-ascend 3.2.0). The issue calls the IR correct; the wrong axis comes later "
           "(bishengir or the device), where no CPU tier runs"),
    NpuBug("triton-ascend#2364", "a scalar argument typed fp16 or bf16 arrives with a wrong value",
           "https://github.com/triton-lang/triton-ascend/issues/2364",
           "triton-ascend 3.2.2 and 3.6.0 (an explicit fp16/bf16 scalar signature); open, reported 2026-09-23. The "
           "launcher writes fp32 bytes into a 16-bit parameter (triton-ascend PR #2285, open)", "",
           "a kernel parameter annotated tl.float16 / tl.bfloat16 (or a compile signature that types it so)",
           pat.half_scalar_arguments, "npu_bug_half_scalar",
           "not reproduced, and it cannot be: triton-ascend 3.2.0's JIT types a float-annotated argument as f32 "
           "(its KernelParam.annotation_type knows only int, uint and bool; the canary's TTIR reads `%arg1: f32`), and "
           "ascend-lowered calls the kernel through parity's own host ABI, not triton-ascend's launcher"),
    NpuBug("FlagTree#1245", "masked stores lose groups of 2 x fp32 nondeterministically",
           "https://github.com/flagos-ai/FlagTree/issues/1245",
           "FlagTree 0.7.0rc2+ascend3.5 (Triton 3.5.1), CANN 9.0.0, Ascend 910B4; open, reported 2026-09-20", "",
           "tl.store with a mask; lost more often the more 8-byte vector groups a store spans (the issue: 0/20 to "
           "17/20 runs bad for 1 to 8 fp32 columns)",
           pat.masked_stores, "npu_bug_masked_store",
           "not reproduced: 1, 2, 3, 4 and 8 fp32 columns x 64 rows, 20 launches each into NaN-prefilled outputs, "
           "write every element on ascend-lowered. The loss is the device's store, which the x86 build does not have"),
    NpuBug("FlagTree#1083",
           "tl.atomic_add returns one value per group of 8 lanes, though the sum it accumulates is right",
           "https://github.com/flagos-ai/FlagTree/issues/1083",
           "triton 3.2.0's Ascend backend (triton/backends/ascend), CANN 8.5.0, Ascend 910B4; closed, reported "
           "2026-09-02 (no fixing release named in the thread as read here)", "",
           "a tl.atomic_add whose returned value the kernel uses (512 lanes adding 1 to one counter got 65 distinct "
           "values)",
           pat.atomic_add_returns, "npu_bug_atomic_return",
           "not reproduced: 512 lanes adding 1 to one counter get the 512 distinct values 0..511, and the counter "
           "ends at 512, on ascend-lowered"),
)


def bug(bug_id: str) -> NpuBug:
    found = next((b for b in NPU_BUGS if b.id == bug_id), None)
    if found is None:
        raise KeyError(f"no known NPU bug {bug_id!r}; known: {', '.join(b.id for b in NPU_BUGS)}")
    return found


def matches(source: str) -> list[tuple[NpuBug, list[str]]]:
    """The bugs whose pattern the kernel source has, each with the lines that have it."""
    return [(b, lines) for b in NPU_BUGS if (lines := b.detect(source))]


def note(tier: str, found: NpuBug) -> str:
    """The sentence a pass on a tier that cannot see the bug carries instead of a bare pass."""
    return f"{tier} cannot see this known NPU bug: {found.link} ({found.what})"


def unseen(source: str, tier: str) -> list[dict[str, str]]:
    """The record key `npu_unseen` of a case that passed on `tier` (a triton-ascend tier without the device): one
    entry per known NPU bug the kernel's source could meet and the tier does not reproduce."""
    return [{"id": b.id, "link": b.link, "what": b.what, "line": lines[0], "note": note(tier, b)}
            for b, lines in matches(source) if not (b.reproduced and tier == LOWERED)]


def canary_divergences(bug_ids: Sequence[str]) -> tuple[KnownDivergence, ...]:
    """The known divergences of a canary spec: ascend-lowered's, for each of these bugs it reproduces (none is
    claimed for a bug it does not)."""
    return tuple(KnownDivergence(backend=LOWERED, reason=f"known NPU bug {b.id}, reproduced by the lowering: {b.what}",
                                 link=b.link)
                 for b in map(bug, bug_ids) if b.reproduced)


__all__ = ["LOWERED", "NPU_BUGS", "NpuBug", "bug", "canary_divergences", "matches", "note", "unseen"]
