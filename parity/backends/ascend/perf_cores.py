"""Rule 1, use every core: idle cores, a wasteful last wave, one program, a core count written into the source.

Why each core count: triton-ascend's guide sizes a persistent grid to the physical cores,
`driver.active.utils.get_device_properties(dev)["num_aicore"]` for a kernel with `tl.dot` and
`["num_vectorcore"]` for the rest, and strides the tiles with `range(pid, num_blocks, num_core)`
(https://gitcode.com/Ascend/triton-ascend/blob/main/docs/en/programming_guide/vector_operator.md).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from parity.backends.ascend.arch import ASCEND_ARCHS, AscendArch
from parity.backends.ascend.perf_evidence import (
    Advice,
    Evidence,
    Finding,
    call_name,
    cores_of,
    launch_bytes,
    names_in,
    parse_source,
    pid_names,
    programs,
    too_small,
    uses_cube,
    where,
)

# the last wave's share of the cores below which the launch wastes a noticeable part of the NPU
MIN_WAVE_USE = 0.75
GRID_RULES = ("cores.idle", "cores.last_wave", "shape.one_program")  # judged on the grid alone


@dataclass(frozen=True)
class StridedLoop:
    line: str
    step: int
    spelled: str  # how the source spells the step: "20" or "NUM_CORES (module constant 20)"


def hard_coded_loops(ev: Evidence) -> list[StridedLoop]:
    """`for i in range(pid, N, C)` loops (also tl.range) whose step C is a literal or a module constant:
    a program count fixed in the source, not read from the device."""
    found = []
    for src in ev.sources:
        tree = parse_source(src)
        if tree is None:
            continue
        pids = pid_names(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)) \
                    or call_name(node.iter) not in ("range", "static_range"):
                continue
            args = node.iter.args
            if len(args) != 3:
                continue
            start, step = args[0], args[2]
            if not (names_in(start) & pids or any(call_name(c) == "program_id" for c in ast.walk(start))):
                continue
            if isinstance(step, ast.Constant) and isinstance(step.value, int) and step.value > 1:
                found.append(StridedLoop(where(src, node.lineno), step.value, str(step.value)))
            elif isinstance(step, ast.Name) and step.id in ev.module_ints and step.id not in ev.constants:
                value = ev.module_ints[step.id]
                found.append(StridedLoop(where(src, node.lineno), value, f"{step.id} (module constant {value})"))
    return found


def _elsewhere(step: int, arch: AscendArch, cube: bool) -> str:
    """What a program count fixed at `step` does on the other parts: "on 910B1/910B2 (24 cube cores) 4 idle"."""
    kind = cores_of(arch, cube)[1]
    parts = []
    for n in sorted({cores_of(a, cube)[0] for a in ASCEND_ARCHS.values()} - {cores_of(arch, cube)[0]}):
        names = "/".join(a.name.removeprefix("Ascend") for a in ASCEND_ARCHS.values() if cores_of(a, cube)[0] == n)
        effect = f"{n - step} idle" if n > step else f"a second wave of {step - n}" if n < step else "all busy"
        parts.append(f"on {names} ({n} {kind} cores) {effect}")
    return "; ".join(parts)


def check_cores(ev: Evidence, advice: Advice) -> None:
    cube = uses_cube(ev)
    n = programs(ev.grid)
    if cube is None or n is None:
        why = ("no launch grid recorded" if n is None
               else "neither bishengir's core type nor the source says cube or vector")
        for rule in ("cores.idle", "cores.last_wave", "cores.hard_coded"):
            advice.not_checked[rule] = why
        return
    cores, kind, prop = cores_of(ev.arch, cube)
    fix = (f"read `driver.active.utils.get_device_properties(device)[\"{prop}\"]` in the launcher, launch that many "
           f"programs and stride the loop by `tl.num_programs(0)`")
    loops = hard_coded_loops(ev)
    for loop in loops:
        if loop.step < cores:
            effect = f"{loop.step} of {ev.arch.name}'s {cores} {kind} cores busy, {cores - loop.step} idle"
        elif loop.step == cores:
            effect = (f"it matches {ev.arch.name}'s {cores} {kind} cores, not the other parts': "
                      f"{_elsewhere(loop.step, ev.arch, cube)}")
        else:
            effect = f"{loop.step} programs on {cores} {kind} cores: a second wave of {loop.step - cores}"
        grid_note = (f"the grid has {n} programs and the loop steps by {loop.spelled}: both hard-coded"
                     if n == loop.step else
                     f"the loop steps by {loop.spelled} while the grid has {n} programs: tiles are "
                     f"{'skipped' if n < loop.step else 'computed twice'}")
        advice.findings.append(Finding("cores.hard_coded", loop.line, f"{grid_note}; {effect}", fix))
    verdict = grid_findings(ev)
    if isinstance(verdict, str):
        for rule in GRID_RULES:
            advice.not_checked[rule] = verdict
        return
    if not loops:  # else the hard-coded count already says how many cores the grid leaves idle
        advice.findings.extend(verdict)


def grid_findings(ev: Evidence) -> list[Finding] | str:
    """What the grid rules (GRID_RULES) find in `ev`'s grid, or why they cannot judge it (no grid, no core
    type, a small launch). The one test of "the grid keeps the cores busy": rule 2's larger tiles ask it of
    the grid they imply (parity.backends.ascend.perf_ub)."""
    cube = uses_cube(ev)
    n = programs(ev.grid)
    if cube is None or n is None:
        return ("no launch grid recorded" if n is None
                else "neither bishengir's core type nor the source says cube or vector")
    small = too_small(ev)
    if small:
        return small
    cores, kind, prop = cores_of(ev.arch, cube)
    size = launch_bytes(ev) or 0
    grid = tuple(ev.grid or ())
    if n == 1:
        return [Finding(
            "shape.one_program", None, f"grid {grid}: one program for {size:,} bytes of tensors; "
            f"{cores - 1} of {cores} {kind} cores idle",
            f"split the work over up to `{prop}` programs (a grid over rows or tiles, each program looping "
            f"`range(pid, num_tiles, tl.num_programs(0))`)")]
    if n < cores:
        return [Finding(
            "cores.idle", None, f"grid {grid}: {n} of {ev.arch.name}'s {cores} {kind} cores busy, {cores - n} idle, "
            f"for {size:,} bytes of tensors",
            f"give the launch at least `{prop}` programs: smaller tiles, or a grid over one more axis")]
    if n % cores:
        waves = -(-n // cores)
        last = n - (waves - 1) * cores
        use = n / (waves * cores)
        if use < MIN_WAVE_USE:
            return [Finding(
                "cores.last_wave", None, f"grid {grid}: {n} programs on {cores} {kind} cores is {waves} waves, "
                f"the last with {last} of {cores} busy ({use:.0%} of the core time used)",
                f"launch `{prop}` programs that loop over the tiles (`range(pid, num_tiles, tl.num_programs(0))`), "
                f"or tiles that make a multiple of {cores} programs")]
    return []
