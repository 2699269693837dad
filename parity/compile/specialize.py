"""Specialization checks: does a kernel compile once per variant, whatever its dynamic args?

The sweep crosses Triton's integer specialization classes: the value 1, odd and even
values, multiples of 16 and their neighbours, small and large.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from parity.compile.counter import (
    COMPILED_HERE,
    CompileCounter,
    base_jit_function,
    compiles_itself,
    kernel_name,
    kernel_source,
    source_labels,
)
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


Source = tuple[str, str]  # (kernel id, defining file): what compiles are attributed to


def compiled_ir(kernels: Iterable[Any], stage: str = "ttir") -> dict[Source, list[str]]:
    """(kernel id, file) -> the IR text of each compiled specialization still in memory."""
    out: dict[Source, list[str]] = {}
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
        out[kernel_source(k)] = texts
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
    error_case: Case | None = None  # the case that raised it: what a repro of the sweep runs again
    file: str = ""  # the file that defines the kernel
    # False for a kernel the launch compiled that the spec does not list (one the library generated)
    listed: bool = True


@dataclass
class _Tally:
    """One kernel's counts over a sweep."""

    name: str
    compiles: int = 0
    worst: int = 0
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    ir: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    seconds: float = 0.0


def run_sweep(spec: KernelSpec, arg: str, run_one: Callable[[Case], None], level: str = "quick") -> list[SweepResult]:
    """Launch every base case at every sweep value; count compilations per kernel.

    Every kernel the launches compile is counted, listed by the spec or not: a library may generate
    the kernel it launches (FlagGems' pointwise_dynamic), and only the compile hook sees that one.
    """
    values = list(sweep_values(arg, spec))
    bases = [c for c in base_cases(spec, level) if arg in c.params]
    listed = {kernel_source(k): k for k in spec.kernels if compiles_itself(k)}
    tallies = {src: _Tally(kernel_name(k)) for src, k in listed.items()}
    error: str | None = None
    error_case: Case | None = None
    for base in bases:
        # a generated kernel is in no spec: clear every kernel this process saw compile, or a base
        # would find the previous one's (or another suite's) kernels in memory and count nothing
        clear_jit_caches([*spec.kernels, *COMPILED_HERE])
        with CompileCounter() as counter:
            for value in values:
                try:
                    run_one(base.replace(**{arg: value}))
                except Exception as exc:  # a result of the sweep, recorded; the next values would fail alike
                    if error is None:
                        error_case = base.replace(**{arg: value})
                        error = f"{error_case.id}: {sweep_error_text(exc)}"
                    break
        compiled = {id(e.jit): e.jit for e in counter.events if e.jit is not None}
        _tally_base(spec, counter, tallies, [*spec.kernels, *compiled.values()])
    labels = source_labels((t.name, *src) for src, t in tallies.items())
    return [SweepResult(kernel=labels[src], arg=arg, values=values, bases=len(bases), compiles=t.compiles,
                        per_base_max=t.worst, variants_seen=list(t.variants.values()), ir=t.ir,
                        compile_s=t.seconds, error=error, error_case=error_case, file=src[1], listed=src in listed)
            for src, t in tallies.items()]


def _tally_base(spec: KernelSpec, counter: CompileCounter, tallies: dict[Source, _Tally], kernels: list[Any]) -> None:
    """Add one base's compiles to the tallies, a new tally for each kernel first seen here."""
    repeats: dict[tuple[Source, str], int] = {}
    flags_of: dict[Source, dict[str, Any]] = {}
    for event in counter.events:
        tally = tallies.setdefault(event.source, _Tally(event.kernel))
        tally.compiles += 1
        tally.seconds += event.seconds or 0.0
        repeats[(event.source, event.identity)] = repeats.get((event.source, event.identity), 0) + 1
        flags = {f: event.constants.get(f) for f in spec.variants if f in event.constants}
        tally.variants[repr(sorted(flags.items()))] = flags
        flags_of[event.source] = flags
    for (src, _), n in repeats.items():
        tallies[src].worst = max(tallies[src].worst, n)
    # caches were cleared before this base, so what is in memory now is this base's variant
    for src, texts in compiled_ir(kernels).items():
        if src in tallies:
            tallies[src].ir += [(flags_of.get(src, {}), t) for t in texts]


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


NOT_CHECKED = "not checked"
NOT_LAUNCHED = "not launched"  # base cases ran, and the kernel never compiled: nothing was counted either


def verdict(result: SweepResult, expected: int) -> str:
    if result.error is not None:
        return "error"  # the sweep could not finish: a launch or compile raised
    if not result.bases or not result.values:
        return NOT_CHECKED  # nothing was swept: no case has the arg, or the sweep limit leaves no value
    if result.per_base_max > expected:
        return "storm"  # compiles grow with the dynamic arg's values
    if result.bases and result.compiles == 0:
        return NOT_LAUNCHED
    return "ok"
