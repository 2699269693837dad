"""Kernels as data: the KernelSpec table entry, its cases and its tolerances.

A spec says everything the suites need to know about one kernel; the suites are
generated from the registered specs and never name a kernel themselves.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from parity.spec.perf import BOUNDS, Peer, PerfTarget

Params = Mapping[str, Any]
Tensors = Mapping[str, Any]  # name -> torch.Tensor, or a plain scalar input

LEVELS = ("quick", "full")

DTYPES: dict[str, torch.dtype] = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
    "fp64": torch.float64,
}


class SpecError(ValueError):
    """A spec is malformed; the message says which field and how to fix it."""


class _Required:
    """Default of the fields a spec must give: a missing one becomes a SpecError naming the spec and
    the field, instead of the dataclass's TypeError that names neither."""

    def __repr__(self) -> str:
        return "<missing>"


REQUIRED: Any = _Required()

# what to give for each required field, quoted when it is missing
REQUIRED_FIELDS: dict[str, str] = {
    "name": "a unique identifier such as 'my_softmax'",
    "family": "a group name such as 'basics'",
    "kernel": "the @triton.jit function it launches",
    "launch": "launch(inputs_on_device, params) -> {output name: tensor}",
    "reference": "an fp64 CPU function reference(inputs, params) -> {output name: fp64 tensor}",
    "cases": "cases(level) -> the Case list, e.g. parity.cases.by_level(product(...))",
    "make_inputs": "make_inputs(params, generator) -> {input name: CPU tensor}",
}


def format_value(value: Any) -> str:
    """One parameter value as it appears in a case id; stable across runs and machines."""
    if isinstance(value, bool):
        return str(int(value))
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "-".join(format_value(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Case:
    """One parametrization of a kernel. `params` keeps its insertion order, so ids are stable."""

    params: Mapping[str, Any]

    @property
    def id(self) -> str:
        return ",".join(f"{k}={format_value(v)}" for k, v in self.params.items())

    @property
    def dtype(self) -> torch.dtype | None:
        name = self.params.get("dtype")
        return DTYPES[name] if name is not None else None

    def replace(self, **changes: Any) -> Case:
        return Case({**self.params, **changes})


@dataclass(frozen=True)
class Tolerance:
    """Pass criterion for one dtype.

    Elementwise, an output passes when |out - ref| <= atol + rtol * |ref| everywhere.
    With `max_err_ratio`, it passes instead when rms(out - ref) / rms(ref) stays
    below it (fla's criterion), so long accumulations are judged as a whole.
    """

    rtol: float
    atol: float
    max_err_ratio: float | None = None
    reason: str = ""  # required whenever a spec overrides the default

    def as_dict(self) -> dict[str, Any]:
        return {"rtol": self.rtol, "atol": self.atol, "max_err_ratio": self.max_err_ratio,
                "reason": self.reason or None}


# Anchored on torch.testing.assert_close's defaults (https://pytorch.org/docs/stable/testing.html).
DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    "fp16": Tolerance(rtol=1e-3, atol=1e-5, reason="torch.testing default"),
    "bf16": Tolerance(rtol=1.6e-2, atol=1e-5, reason="torch.testing default"),
    "fp32": Tolerance(rtol=1.3e-6, atol=1e-5, reason="torch.testing default"),
    "fp64": Tolerance(rtol=1e-7, atol=1e-7, reason="torch.testing default"),
}


@dataclass(frozen=True)
class KnownDivergence:
    """An expected failure on one backend, kept as data with its public source."""

    backend: str
    reason: str
    link: str
    applies: Callable[[Params], bool] | None = None  # None: every case
    # who documents it when it is not the compiler: the kernel's own author (a library's test that skips the
    # case itself, say). Triage then names that author, and nothing is drafted: they already know
    expected_by: str | None = None

    def matches(self, backend: str, params: Params) -> bool:
        return self.backend == backend and (self.applies is None or self.applies(params))


@dataclass(frozen=True)
class DeclinedEnvironment:
    """A guard the library raises on purpose where it knows it would compute wrong results (a Triton
    version it refuses on one GPU, say): a case whose error text matches `pattern` is skipped with the
    library's reason and public link, not reported as a finding, shrunk or drafted to a vendor."""

    library: str
    pattern: str  # regular expression, searched in the error text
    reason: str
    link: str

    def matches(self, error: str) -> bool:
        return re.search(self.pattern, error) is not None

    def note(self, error: str) -> str:
        """The skip reason: who declined, why, where that is documented, and what it raised."""
        first = error.strip().splitlines()[0] if error.strip() else ""
        return f"declined by {self.library}: {self.reason} ({self.link}); it raised: {first[:300]}"


@dataclass(frozen=True)
class ExpectedCompileError:
    """A compile that must fail on one backend, with a message matching `pattern`."""

    backend: str
    pattern: str
    reason: str


@dataclass
class KernelSpec:
    # identity: `name` is unique across the registry, `family` groups related kernels
    name: str = REQUIRED
    family: str = REQUIRED
    # the Triton function(s) (JITFunction / Heuristics / Autotuner): source extraction,
    # compile counting and the compile tiers look at these
    kernel: Any = REQUIRED
    # launch(inputs_on_device, params) -> {output name: tensor}; allocates its outputs
    # pre-filled with NaN (parity.spec.inputs.nan_empty) so unwritten elements show up. The compile
    # tiers pass CPU tensors: a launcher that picks a path per device asks parity.current_backend()
    # (or current_target(): "cuda" / "ascend") which backend it runs for
    launch: Callable[[Tensors, Params], Mapping[str, torch.Tensor]] = REQUIRED
    # reference(inputs as fp64 on the CPU, params) -> {output name: fp64 tensor}
    reference: Callable[[Tensors, Params], Mapping[str, torch.Tensor]] = REQUIRED
    # cases(level) -> the cases to run at that level ("quick" or "full")
    cases: Callable[[str], Iterable[Case]] = REQUIRED
    # make_inputs(params, generator) -> CPU inputs; all randomness from the generator
    make_inputs: Callable[[Params, torch.Generator], dict[str, Any]] = REQUIRED
    # tolerance key -> Tolerance; keys are dtype names unless `tolerance_key` says otherwise.
    # Missing dtypes fall back to DEFAULT_TOLERANCES. Every override must carry a reason.
    tolerance: Mapping[str, Tolerance] = field(default_factory=dict)
    # params -> tolerance key, for cases whose limit depends on more than the dtype
    # (e.g. "fp32-tf32"); default: the case's dtype
    tolerance_key: Callable[[Params], str] | None = None
    # params whose values must not cause a recompile (do_not_specialize), e.g. ("T",)
    dynamic_args: tuple[str, ...] = ()
    # heuristic flags -> the values they take; the expected variant count is their product
    variants: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    # compiles per backend that one base case may need across a dynamic-arg sweep (default 1)
    expected_compiles: Mapping[str, int] = field(default_factory=dict)
    # largest value the specialization sweep may give a dynamic arg (None: the whole sweep)
    sweep_limit: int | None = None
    # (flag, value) -> regexes the TTIR of that variant must not contain (a dead branch left in)
    ir_absent: Mapping[tuple[str, Any], Sequence[str]] = field(default_factory=dict)
    # compile_signature(level) -> the cases the compile tiers warm up (default: quick cases)
    compile_signature: Callable[[str], Iterable[Case]] | None = None
    known_divergences: tuple[KnownDivergence, ...] = ()
    expected_compile_errors: tuple[ExpectedCompileError, ...] = ()
    # guards the library raises on purpose in some environments: such a case is skipped with its reason
    declines: tuple[DeclinedEnvironment, ...] = ()
    # (error text, params) -> why this tier cannot run the case at all, e.g. a replayed launch's option of
    # another backend (parity.record.replay): the compile is then skipped with that reason, never failed
    not_here: Callable[[str, Params], str | None] | None = None
    # a probe that exists to (not) compile: only the compile tiers take its cases, because there
    # is no output to compare where it does not build
    compile_only: bool = False
    # compile tiers: run each case in a forked child, so state the launcher's code keeps between
    # calls (a library's own kernel cache) cannot carry over to the next case. None: automatic, on
    # when a kernel comes from another package than the launcher (parity.compile.fork.wants_fork)
    fork: bool | None = None
    # params -> bytes moved / flops done, for roofline figures
    bytes: Callable[[Params], float] | None = None
    flops: Callable[[Params], float] | None = None
    # output name -> dim names, so mismatch regions read "tail t>=1024" or "head 3 only"
    out_dims: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # valid(output name, params, shape) -> bool mask of the elements to compare, or None for all
    valid: Callable[[str, Params, torch.Size], torch.Tensor | None] | None = None
    # extra_check(inputs fp64, outputs fp64, params) -> failure message or None
    extra_check: Callable[[Tensors, Mapping[str, torch.Tensor], Params], str | None] | None = None
    # device_gib(params) -> device memory a big case needs (None: runs anywhere); where the backend
    # has less, or no device at all (interpret), the case is skipped with that reason
    device_gib: Callable[[Params], float | None] | None = None
    # unavailable() -> why this spec cannot run in this environment, or None: e.g. the library it
    # tests is not installed ("pip install fla-core==0.6.0"); its cases are then skipped with that reason
    unavailable: Callable[[], str | None] | None = None
    # a torch eager baseline for perf: baseline(inputs_on_device, params), the op users would call
    baseline: Callable[[Tensors, Params], Any] | None = None
    # the shapes the perf pass times on a device, at the sizes users run (e.g. 2^28 elements); each is
    # checked once against the reference there. Empty: the largest passing accuracy case per dtype is timed
    perf_cases: Sequence[Case] = ()
    # a reference for the perf cases when `reference` would not fit the device at those sizes (e.g. one
    # that loops over heads); it runs on the device in fp64. Default: `reference`
    perf_reference: Callable[[Tensors, Params], Mapping[str, torch.Tensor]] | None = None
    # "memory" or "compute": the roof the perf figures are against; None: whichever bytes and flops
    # say, against the machine's measured balance (parity.perf.roofline)
    bound: str | None = None
    # the same op in the library this family comes from, timed beside it (parity.spec.perf.Peer)
    peer: Peer | None = None
    # the speed goal REPORT.md prints as met or missed (parity.spec.perf.PerfTarget); never asserted
    perf_target: PerfTarget | None = None
    # False: the perf pass leaves the op out, e.g. a probe for a verdict whose own autotuning (100+
    # configs, each timed by the library) would be most of the pass
    timed: bool = True
    doc: str = ""

    def __post_init__(self) -> None:
        self.perf_cases = tuple(self.perf_cases)
        validate(self)

    @property
    def kernels(self) -> tuple[Any, ...]:
        return tuple(self.kernel) if isinstance(self.kernel, (tuple, list)) else (self.kernel,)

    @property
    def variant_count(self) -> int:
        return math.prod(len(v) for v in self.variants.values()) if self.variants else 1

    def tolerance_key_for(self, params: Params) -> str:
        return self.tolerance_key(params) if self.tolerance_key else str(params.get("dtype") or "fp32")

    def tolerance_chosen(self, params: Params) -> bool:
        """Whether the spec gives this case's tolerance itself (else torch.testing's default applies, and a
        mismatch inside a correct kernel's rounding is judged a pass: parity.run.rounding)."""
        return self.tolerance_key_for(params) in self.tolerance

    def tolerance_for(self, params: Params) -> Tolerance:
        key = self.tolerance_key_for(params)
        tol = self.tolerance.get(key) or DEFAULT_TOLERANCES.get(key)
        if tol is None:
            raise SpecError(f"KernelSpec {self.name!r}: no tolerance for key {key!r}; add it to `tolerance` "
                            f"with a reason (defaults exist for {sorted(DEFAULT_TOLERANCES)})")
        return tol

    def divergence_for(self, backend: str, params: Params) -> KnownDivergence | None:
        return next((d for d in self.known_divergences if d.matches(backend, params)), None)

    def declined(self, error: str) -> DeclinedEnvironment | None:
        """The library guard this error text is, or None."""
        return next((d for d in self.declines if d.matches(error)), None)

    def compile_cases(self, level: str) -> list[Case]:
        source = self.compile_signature or self.cases
        return list(source(level))


def validate(spec: KernelSpec) -> None:
    """Cross-check one spec; every error names the field and the fix."""
    where = f"KernelSpec {spec.name!r}" if spec.name is not REQUIRED else "KernelSpec"
    missing = [f for f in REQUIRED_FIELDS if getattr(spec, f) is REQUIRED]
    if missing:
        raise SpecError(f"{where}: missing {', '.join(f'`{f}`' for f in missing)}; give "
                        + "; ".join(f"`{f}`: {REQUIRED_FIELDS[f]}" for f in missing))
    if not spec.name or not spec.name.replace("_", "").isalnum():
        raise SpecError(f"{where}: name must be a non-empty identifier (letters, digits, _)")
    for attr in ("launch", "reference", "cases", "make_inputs"):
        if not callable(getattr(spec, attr)):
            raise SpecError(f"{where}: `{attr}` must be callable; it is {getattr(spec, attr)!r}")
    if spec.kernel is None:
        raise SpecError(f"{where}: `kernel` is missing; give the @triton.jit function it launches")
    for dtype, tol in spec.tolerance.items():
        if dtype not in DTYPES and spec.tolerance_key is None:
            raise SpecError(f"{where}: tolerance for unknown dtype {dtype!r}; valid: {sorted(DTYPES)} "
                            "(or give `tolerance_key` to key tolerances on more than the dtype)")
        if not tol.reason:
            raise SpecError(f"{where}: tolerance override for {dtype} has no reason; "
                            "write why the default does not hold")
    for d in spec.known_divergences:
        if not d.link or not d.reason:
            raise SpecError(f"{where}: known divergence on {d.backend} needs a reason and a public link")
    for declined in spec.declines:
        if not (declined.library and declined.reason and declined.link):
            raise SpecError(f"{where}: a declined environment needs the library, a reason and a public link")
        _check_pattern(where, f"declined environment of {declined.library}", declined.pattern)
    for e in spec.expected_compile_errors:
        if not e.reason:
            raise SpecError(f"{where}: expected compile error on {e.backend} needs a reason")
        _check_pattern(where, f"expected compile error on {e.backend}", e.pattern)
    validate_perf(spec, where)


def _check_pattern(where: str, what: str, pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise SpecError(f"{where}: {what}: pattern {pattern!r} is not a valid regular expression ({exc}); "
                        "escape its special characters") from None


def validate_perf(spec: KernelSpec, where: str) -> None:
    """The optional perf fields: a known bound, unique perf case ids, the right types."""
    if spec.bound is not None and spec.bound not in BOUNDS:
        raise SpecError(f"{where}: bound {spec.bound!r} is not one of {BOUNDS} (or None to infer it)")
    ids = [c.id for c in spec.perf_cases if isinstance(c, Case)]
    if len(ids) != len(spec.perf_cases):
        raise SpecError(f"{where}: perf_cases must be Case objects, "
                        "e.g. parity.cases.product(N=[1 << 28], dtype=['bf16'])")
    if len(set(ids)) != len(ids):
        raise SpecError(f"{where}: duplicate perf case id(s) {sorted({i for i in ids if ids.count(i) > 1})}")
    if spec.peer is not None and not isinstance(spec.peer, Peer):
        raise SpecError(f"{where}: peer must be a parity.spec.perf.Peer(library, prepare, unavailable)")
    if spec.perf_target is not None and not isinstance(spec.perf_target, PerfTarget):
        raise SpecError(f"{where}: perf_target must be a parity.spec.perf.PerfTarget")
    if spec.perf_target is not None and spec.perf_target.max_time_vs_peer is not None and spec.peer is None:
        raise SpecError(f"{where}: perf_target compares with a peer, but the spec has no `peer`")


def check_dynamic_args(spec: KernelSpec, cases: Sequence[Case]) -> None:
    """Every `dynamic_args` name must be a parameter of the cases: the specialization sweep varies that
    parameter, so a name the cases lack (the kernel's own argument `n` for the case parameter `N`) would
    sweep nothing and read as a clean check."""
    if not spec.dynamic_args or not cases:
        return
    params = list(dict.fromkeys(k for c in cases for k in c.params))
    unknown = [a for a in spec.dynamic_args if a not in params]
    if unknown:
        names = ", ".join(repr(a) for a in unknown)
        near = {a: next((p for p in params if p.lower() == a.lower()), None) for a in unknown}
        hint = "; ".join(f"did you mean {near[a]!r}?" for a in unknown if near[a])
        raise SpecError(f"KernelSpec {spec.name!r}: dynamic_args names {names}, which is no case parameter; "
                        f"the cases have {', '.join(repr(p) for p in params)}. dynamic_args names the case "
                        f"parameters the specialization sweep varies (not the kernel's own argument names)"
                        + (f": {hint}" if hint else ""))


def check_sweeps(specs: Iterable[KernelSpec], level: str) -> None:
    """check_dynamic_args for every spec at `level` (an unknown level is validate_cases' error to give)."""
    for spec in specs if level in LEVELS else ():
        check_dynamic_args(spec, list(spec.cases(level)) if spec.dynamic_args else [])


def validate_compile_cases(spec: KernelSpec, level: str) -> list[Case]:
    """The compile signature of one level, checked for unique ids (no tolerance needed: nothing runs)."""
    if level not in LEVELS:
        raise SpecError(f"unknown level {level!r}; valid: {', '.join(LEVELS)}")
    check_dynamic_args(spec, list(spec.cases(level)) if spec.dynamic_args else [])
    cases = spec.compile_cases(level)
    ids = [c.id for c in cases]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise SpecError(f"KernelSpec {spec.name!r}: duplicate compile case id(s) {dupes} at level {level}")
    return cases


def validate_cases(spec: KernelSpec, level: str) -> list[Case]:
    """The cases of one level, checked: unique ids, known dtypes with a tolerance."""
    if level not in LEVELS:
        raise SpecError(f"unknown level {level!r}; valid: {', '.join(LEVELS)}")
    cases = list(spec.cases(level))
    check_dynamic_args(spec, cases)
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise SpecError(f"KernelSpec {spec.name!r}: duplicate case id {case.id!r} at level {level}")
        seen.add(case.id)
        dtype = case.params.get("dtype")
        if dtype is not None and dtype not in DTYPES:
            raise SpecError(f"KernelSpec {spec.name!r}: case {case.id} has unknown dtype {dtype!r}; "
                            f"valid: {sorted(DTYPES)}")
        spec.tolerance_for(case.params)  # raises with the fix when a case has no tolerance
    return cases
