"""Specialization checks: does a kernel compile once per variant, whatever its dynamic args?

The sweep crosses Triton's integer specialization classes: the value 1, odd and even
values, multiples of 16 and their neighbours, small and large.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from parity.compile.counter import CompileCounter, base_jit_function, kernel_id, kernel_labels
from parity.compile.tools import clear_jit_caches
from parity.spec import Case, KernelSpec

SWEEP = (1, 15, 16, 63, 64, 1000, 1024, 1025, 4096)


def sweep_values(arg: str, spec: KernelSpec) -> tuple[int, ...]:
    """The values swept for one dynamic arg (a spec may bound them, e.g. T ≤ 4096)."""
    return tuple(v for v in SWEEP if spec.sweep_limit is None or v <= spec.sweep_limit)


def base_cases(spec: KernelSpec, level: str = "quick") -> list[Case]:
    """One case per distinct combination of the non-dynamic params: the sweep varies the rest."""
    seen: dict[str, Case] = {}
    for case in spec.cases(level):
        key = Case({k: v for k, v in case.params.items() if k not in spec.dynamic_args}).id
        seen.setdefault(key, case)
    return list(seen.values())


def compiled_ir(kernels: Iterable[Any], stage: str = "ttir") -> dict[str, list[str]]:
    """kernel id (module.qualname) -> the IR text of each compiled specialization still in memory."""
    out: dict[str, list[str]] = {}
    for k in kernels:
        jit = base_jit_function(k)
        texts: list[str] = []
        caches = getattr(jit, "device_caches", None) or getattr(jit, "cache", None) or {}
        for entry in caches.values():
            table = entry[0] if isinstance(entry, tuple) else entry
            for compiled in table.values():
                asm = getattr(compiled, "asm", None) or {}
                if stage in asm:
                    texts.append(str(asm[stage]))
        out[kernel_id(k)] = texts
    return out


@dataclass
class SweepResult:
    kernel: str
    arg: str
    values: list[int]
    bases: int
    compiles: int  # total over every base's sweep
    # the most compilations of one constexpr set (variant x autotune config) in any base's sweep:
    # above 1 means the dynamic arg itself caused recompiles
    per_base_max: int
    variants_seen: list[dict[str, Any]] = field(default_factory=list)
    # (variant flags, TTIR) of each compilation, for the dead-branch checks
    ir: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    compile_s: float = 0.0  # seconds spent compiling this kernel over the whole sweep
    # the first error a launch raised ("T=1: NameError(...)"); that base's sweep stopped there
    error: str | None = None


def run_sweep(spec: KernelSpec, arg: str, run_one: Callable[[Case], None], level: str = "quick") -> list[SweepResult]:
    """Launch every base case at every sweep value; count compilations per kernel."""
    values = list(sweep_values(arg, spec))
    bases = [c for c in base_cases(spec, level) if arg in c.params]
    labels = kernel_labels(spec.kernels)  # keyed by id; a row shows __name__ unless two kernels share it
    names = list(labels)
    totals = dict.fromkeys(names, 0)
    worst = dict.fromkeys(names, 0)
    variants: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in names}
    irs: dict[str, list[tuple[dict[str, Any], str]]] = {n: [] for n in names}
    seconds = dict.fromkeys(names, 0.0)
    error: str | None = None
    for base in bases:
        clear_jit_caches(spec.kernels)
        with CompileCounter() as counter:
            for value in values:
                try:
                    run_one(base.replace(**{arg: value}))
                except Exception as exc:  # a result of the sweep, recorded; the next values would fail alike
                    error = error or f"{base.replace(**{arg: value}).id}: {sweep_error_text(exc)}"
                    break
        per_kernel = counter.per_kernel()
        repeats: dict[tuple[str, str], int] = {}
        for event in counter.events:
            key = (event.kernel_id, event.identity)
            repeats[key] = repeats.get(key, 0) + 1
            if event.kernel_id in seconds:
                seconds[event.kernel_id] += event.seconds or 0.0
        flags_of: dict[str, dict[str, Any]] = {}
        for event in counter.events:
            if event.kernel_id in variants:
                flags = {f: event.constants.get(f) for f in spec.variants if f in event.constants}
                variants[event.kernel_id][repr(sorted(flags.items()))] = flags
                flags_of[event.kernel_id] = flags
        # caches were cleared before this base, so what is in memory now is this base's variant
        for name, texts in compiled_ir(spec.kernels).items():
            irs[name] += [(flags_of.get(name, {}), t) for t in texts]
        for name in names:
            totals[name] += per_kernel.get(name, 0)
            worst[name] = max([worst[name], *(n for (k, _), n in repeats.items() if k == name)])
    return [SweepResult(kernel=labels[n], arg=arg, values=values, bases=len(bases), compiles=totals[n],
                        per_base_max=worst[n], variants_seen=list(variants[n].values()), ir=irs[n],
                        compile_s=seconds[n], error=error)
            for n in names]


def sweep_error_text(exc: BaseException) -> str:
    """The error with its chained causes (the innermost first), cut to its first line and its tail."""
    from parity.compile.tools import exception_text, trim_message

    return trim_message(exception_text(exc))


def expected_per_base(spec: KernelSpec, backend: str) -> int:
    """Compilations one base case may need across a sweep: 1 unless the spec says otherwise."""
    return spec.expected_compiles.get(backend, 1)


def ir_violations(spec: KernelSpec, ir: Iterable[tuple[Mapping[str, Any], str]]) -> list[str]:
    """Patterns a variant's IR must not contain: dead branches the compiler should have dropped."""
    problems = []
    for flags, text in ir:
        for (flag, value), patterns in spec.ir_absent.items():
            if flag in flags and bool(flags[flag]) == bool(value):
                problems += [f"{flag}={value}: IR still contains {p!r}" for p in patterns if re.search(p, text)]
    return sorted(set(problems))


def verdict(result: SweepResult, expected: int) -> str:
    if result.error is not None:
        return "error"  # the sweep could not finish: a launch or compile raised
    if result.per_base_max > expected:
        return "storm"  # compiles grow with the dynamic arg's values
    if result.bases and result.compiles == 0:
        return "not launched"
    return "ok"
