"""The limits a size can cross on a target, each judged from one probe with the evidence that shows it.

Pure functions over an `Observation` (what one compile-and-launch at one size showed). A limit is named only
from what the tier itself said or measured: the launcher's grid message, the compiler's on-chip memory
figure, the TTIR's offset width with the launch's element counts. What a probe could not see is "not
checked", never a pass.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from parity.backends.ascend.diagnostics import QUOTES_LAUNCHER

INT32_MAX = 2**31 - 1
ASCEND_GRID_MAX = 65535  # triton-ascend 3.2's launcher: "grid should be less than 65536!" (product of the dims)
ASCEND_GRID_SAID = "grid should be less than 65536"  # its words, also where the tier recorded no grid
CUDA_GRID_MAX = (2**31 - 1, 65535, 65535)  # CUDA's maxGridSize on every SM since sm_30 (x, y, z)
# the compile tiers' error_kind for on-chip memory: Ascend's unified and cube buffers, CUDA's shared memory
MEMORY_KINDS = ("ub_overflow", "cc_overflow", "cbuf_overflow", "out_of_resources")

GRID = "grid"
MEMORY = "on-chip memory"
INT32 = "int32 offsets"
LAUNCHER = "launcher"
COMPILE = "compile"


@dataclass
class Observation:
    """One compile and launch at one size, as the tier saw it (JSON-plain: it crosses processes)."""

    target: str  # "ascend" or "cuda" (the tier's Backend.target)
    params: dict[str, Any]
    grids: list[list[Any]] = field(default_factory=list)  # [kernel, [x, y, z]] per launch
    launch_errors: list[list[str]] = field(default_factory=list)  # [kernel, message]
    compile_errors: list[list[str]] = field(default_factory=list)  # [kernel, error_kind, message]
    numels: dict[str, int] = field(default_factory=dict)  # every tensor the launch handled (inputs, outputs)
    offsets: str | None = None  # "i32", "i64", "mixed" (the TTIR's tt.addptr offsets), None: no TTIR seen
    new_compiles: int = 0  # compiles this size added to the tier's cache
    not_checked: str | None = None  # why this size could not be checked (the launcher read tensor data, ...)


@dataclass(frozen=True)
class Crossing:
    """A limit crossed at a size: what, the figure against the limit, the tier's own words, and the fix."""

    limit: str
    figure: str
    evidence: str
    fix: str
    proven_by_run: bool = True  # False: found from the kernel and the launch's values, not shown by a run


def _grid_text(grid: list[int]) -> str:
    return "(" + ", ".join(f"{g:,}" for g in grid) + ")"


def _refusal(said: str) -> str:
    """Who refused a grid, in their words: the launcher, or ascend-compile's own check quoting it."""
    if QUOTES_LAUNCHER in said:
        quoted = said.split(QUOTES_LAUNCHER, 1)[1].strip()
        return f"ascend-compile's launch check refused it, as triton-ascend's launcher does ({quoted[:200]})"
    return f"the launcher says {said.strip()[:200]!r}"


def grid_crossing(obs: Observation) -> Crossing | None:
    for kernel, grid in obs.grids:
        blocks = math.prod(grid)
        said = next((m for k, m in obs.launch_errors if k == kernel and "grid" in m), "")
        if obs.target == "ascend" and blocks > ASCEND_GRID_MAX:
            figure = f"{kernel}'s grid {_grid_text(grid)} = {blocks:,} programs passes {ASCEND_GRID_MAX:,}"
            return Crossing(GRID, figure,
                            _refusal(said) if said else "the product of the grid dims > 65,535",
                            f"make it persistent: a grid of the core count and `for i in range(pid, {blocks}, "
                            "tl.num_programs(0))` over the work items")
        over = [f"{axis} = {n:,} > {top:,}" for axis, n, top in zip("xyz", grid, CUDA_GRID_MAX, strict=True) if n > top]
        if obs.target == "cuda" and over:
            return Crossing(GRID, f"{kernel}'s grid {_grid_text(grid)}: {', '.join(over)}",
                            said or "CUDA's grid limits (x < 2^31, y and z <= 65,535)",
                            "move the growing dimension to grid x, or loop over it inside the program")
    for kernel, message in obs.launch_errors:  # refused for its grid, which the tier did not record (autotuned)
        if obs.target == "ascend" and ASCEND_GRID_SAID in message:
            return Crossing(GRID, f"{kernel}'s grid passes {ASCEND_GRID_MAX:,} programs (its dims were not recorded)",
                            _refusal(message),
                            "make it persistent: a grid of the core count and `for i in range(pid, n, "
                            "tl.num_programs(0))` over the work items")
    return None


_AT = re.compile(r"\bat \d+:\d+:$")  # a first line that is only a source location ("CompilationError: at 37:24:")
_NEEDS = re.compile(r"[^\n]*requires \d+ (?:bits|bytes)[^\n]*")  # bishengir's UB line, cuda-compile's shared memory


def memory_crossing(obs: Observation) -> Crossing | None:
    for kernel, kind, message in obs.compile_errors:
        if kind in MEMORY_KINDS:
            said = _NEEDS.search(message)
            line = said.group(0) if said else (message.strip().splitlines() or [kind])[0]
            return Crossing(MEMORY, f"{kernel} no longer fits on chip", f"the compile says: {line.strip()[:240]!r}",
                            "bound the block constexpr (a fixed tile and a loop over the axis) instead of "
                            "growing it with the size")
    return None


def int32_crossing(obs: Observation) -> Crossing | None:
    """A tensor whose last element lies past 2^31 - 1 while every pointer offset of the kernel is int32."""
    if obs.offsets != "i32" or not obs.numels:
        return None
    name, numel = max(obs.numels.items(), key=lambda kv: kv[1])
    if numel - 1 <= INT32_MAX:
        return None
    return Crossing(INT32, f"{name} has {numel:,} elements: its offsets reach {numel - 1:,} > 2^31 - 1",
                    "every tt.addptr of the kernel's TTIR adds i32 offsets, so the offset wraps",
                    "compute the offset in int64: `(pid.to(tl.int64) * stride)`, or pass the stride as int64",
                    proven_by_run=False)


def other_crossing(obs: Observation) -> Crossing | None:
    """What else refused the size: a launcher's own check (numel, tl.arange past the max block) or a compile."""
    for kernel, message in obs.launch_errors:
        if "grid" not in message:
            return Crossing(LAUNCHER, f"{kernel}'s launch refused", message.strip()[:240], "see the message")
    for kernel, kind, message in obs.compile_errors:
        if kind not in MEMORY_KINDS:
            lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()] or [kind]
            first = lines[0]
            if len(lines) > 1 and _AT.search(first):  # Triton's CompilationError: the location first, the error last
                first = f"{first} {lines[-1]}"
            return Crossing(COMPILE, f"{kernel} does not compile ({kind})", first[:240],
                            "bound the block constexpr (tl.arange's range) that grows with the size")
    return None


def crossings(obs: Observation) -> list[Crossing]:
    """Every limit this size crosses, the ones a run shows first."""
    found = [grid_crossing(obs), memory_crossing(obs), other_crossing(obs), int32_crossing(obs)]
    return [c for c in found if c is not None]


def figure_of(obs: Observation, limit: str) -> tuple[int, int] | None:
    """(measured value, the largest value allowed) of a limit that grows with the size, for the search's guess."""
    if limit == GRID and obs.grids:
        if obs.target == "ascend":
            return max(math.prod(g) for _, g in obs.grids), ASCEND_GRID_MAX
        return max(g[1] for _, g in obs.grids), CUDA_GRID_MAX[1]  # y: x's limit is beyond any production size
    if limit == INT32 and obs.numels:
        return max(obs.numels.values()) - 1, INT32_MAX
    return None


def guess(good: int, good_obs: Observation, bad: int, bad_obs: Observation) -> int | None:
    """The first size past the limit if the figure grows linearly between the two sizes (a guess to verify)."""
    found = crossings(bad_obs)
    if not found:
        return None
    lo, hi = figure_of(good_obs, found[0].limit), figure_of(bad_obs, found[0].limit)
    if lo is None or hi is None or hi[0] <= lo[0]:
        return None
    return good + math.ceil((lo[1] + 1 - lo[0]) * (bad - good) / (hi[0] - lo[0]))
