"""Launch capture: run a case once while recording every Triton launch, its grid and its tensors.

Patches `run` on the JIT and interpreter classes (and keeps only an Autotuner's final launch),
so a repro can replay exactly the launches the failing run made.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from parity.repro.source import SourceError, literal, python_function
from parity.run import autotune_pin
from parity.spec import Case, KernelSpec


class ReproError(RuntimeError):
    """A repro cannot be generated for this case; the message says what stood in the way."""


class NoLaunch(ReproError):
    """The case raised before any Triton launch; `raised` is that exception (parity.repro.prelaunch reads it)."""

    def __init__(self, message: str, raised: BaseException | None) -> None:
        super().__init__(message)
        self.raised = raised


# ---------------------------------------------------------------- launch capture


@dataclass
class TensorSlot:
    """One distinct tensor seen by the recorded launches, with its value before the first one."""

    key: str
    live: torch.Tensor  # held so its memory cannot be reused by another tensor mid-capture
    initial: torch.Tensor  # CPU copy of the storage span it covers
    dtype: str
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    contiguous: bool

    @property
    def spec_literal(self) -> str:
        return literal((self.dtype, self.shape, self.stride, self.contiguous))


@dataclass
class Launch:
    kernel: Any
    grid: tuple[int, ...]
    args: list[str]  # source expressions
    kwargs: dict[str, str]
    warmup: bool


def _identity(t: torch.Tensor) -> tuple[Any, ...]:
    return (t.data_ptr(), str(t.dtype), tuple(t.shape), tuple(t.stride()), t.device.type)


def _span(t: torch.Tensor) -> torch.Tensor:
    """The elements of t's storage that t can reach, as a flat CPU copy."""
    if t.is_contiguous():
        return t.detach().reshape(-1).cpu().clone()
    n = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True)) if t.numel() else 0
    return t.detach().as_strided((n,), (1,), t.storage_offset()).cpu().clone()


@dataclass
class LaunchRecorder:
    """Context manager: records every Triton launch (and warmup) made inside it.

    Patches `run` on the JIT and interpreter classes. Inside an Autotuner only its
    last launch is kept: the ones before it are the benchmark runs.
    """

    launches: list[Launch] = field(default_factory=list)
    slots: dict[tuple[Any, ...], TensorSlot] = field(default_factory=dict)
    _undo: list[Callable[[], None]] = field(default_factory=list)

    def tensor(self, t: torch.Tensor) -> str:
        ident = _identity(t)
        slot = self.slots.get(ident)
        if slot is None:
            slot = TensorSlot(key=f"t{len(self.slots)}", live=t, initial=_span(t), dtype=str(t.dtype).split(".")[-1],
                              shape=tuple(t.shape), stride=tuple(t.stride()), contiguous=t.is_contiguous())
            self.slots[ident] = slot
        return f"T[{slot.key!r}]"

    def value(self, v: Any) -> str:
        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        kind = type(v).__name__
        if kind == "constexpr":
            return self.value(v.value)
        if kind == "dtype" and type(v).__module__.startswith("triton"):
            return f"tl.dtype({literal(str(v))})"
        try:
            return literal(v)
        except SourceError as exc:
            raise ReproError(f"a kernel argument cannot be written into a script: {exc}") from None

    def record(self, kernel: Any, args: tuple[Any, ...], grid: Any, warmup: bool, kwargs: dict[str, Any]) -> None:
        if callable(grid):
            names = getattr(kernel, "arg_names", None) or list(inspect.signature(python_function(kernel)).parameters)
            grid = grid({**dict(zip(names, args, strict=False)), **kwargs})
        grid = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,)))
        self.launches.append(Launch(kernel, grid, [self.value(a) for a in args],
                                    {k: self.value(v) for k, v in kwargs.items()}, bool(warmup)))

    def _record(self, inner: Any, self_: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        self.record(self_, args, grid, warmup, dict(kwargs))
        return inner(self_, *args, grid=grid, warmup=warmup, **kwargs)

    def _chosen_only(self, inner: Any, self_: Any, *args: Any, **kwargs: Any) -> Any:
        start = len(self.launches)
        try:
            return inner(self_, *args, **kwargs)
        finally:
            del self.launches[start:-1]  # keep only the launch with the chosen config

    def __enter__(self) -> LaunchRecorder:
        from parity.seams.jit import autotuner_run, interpreted_run, jit_run

        self._undo.append(jit_run().add(self._record))
        interpreted = interpreted_run()  # None where the release sets `run` per instance: nothing to wrap
        if interpreted is not None:
            self._undo.append(interpreted.add(self._record))
        self._undo.append(autotuner_run().add(self._chosen_only))
        return self

    def __exit__(self, *exc: object) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def slot_of(self, t: torch.Tensor) -> TensorSlot | None:
        """The captured tensor an output lives in: the same one, or a same-sized view of it."""
        slot = self.slots.get(_identity(t))
        if slot is not None:
            return slot
        return next((s for s in self.slots.values() if s.live.data_ptr() == t.data_ptr() and s.contiguous
                     and t.is_contiguous() and s.live.numel() == t.numel() and str(t.dtype).endswith(s.dtype)), None)


# ---------------------------------------------------------------- one captured case


@dataclass
class Captured:
    """Everything a repro needs, from one recorded run of a (shrunk) case."""

    spec: KernelSpec
    params: dict[str, Any]
    launches: list[Launch]
    slots: list[TensorSlot]
    outputs: dict[str, tuple[str, tuple[int, ...]]]  # output name -> (slot key, shape)
    inputs: dict[str, Any]  # the spec's CPU inputs, for the reference
    reference: dict[str, torch.Tensor]
    valid: dict[str, torch.Tensor]
    tolerance: dict[str, Any]
    error: str | None
    metrics: dict[str, Any] | None = None  # the captured run against the reference (worst output)


def _as_outputs(value: Any) -> dict[str, torch.Tensor]:
    return {"out": value} if isinstance(value, torch.Tensor) else dict(value or {})


def capture_case(spec: KernelSpec, case: Case, backend: Any, *, seed: int, cache: Any) -> Captured:
    """Run the case once with launch recording on; it must go through at least one kernel launch."""
    from parity import inputs as inp
    from parity.run import prefill
    from parity.run.compare import worst_of
    from parity.run.runner import build_inputs, compare_outputs, error_text, reference_outputs

    cpu_inputs = build_inputs(spec, case, seed)
    ref = reference_outputs(spec, case, cpu_inputs, cache)
    error, outputs, raised = None, {}, None
    # the config the accuracy pass pinned, so the repro records the launch that failed
    # with the accuracy pass's prefill, so a buffer the launcher left unwritten holds NaN in the repro too
    with LaunchRecorder() as rec, autotune_pin.pinned_case(spec, case.params), \
            prefill.launcher_allocations(backend.mode):
        try:
            outputs = _as_outputs(spec.launch(inp.to_device(cpu_inputs, backend.device), case.params))
            backend.synchronize()
        except Exception as exc:
            error, raised = error_text(exc), exc
    if not rec.launches:
        raise NoLaunch(f"{spec.name}[{case.id}]: no Triton launch was recorded"
                         + (f" before the error ({error})" if error else "") + "; nothing to reproduce", raised)
    mapped: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, tensor in outputs.items():
        if name not in ref:
            continue
        slot = rec.slot_of(tensor)
        if slot is None:
            raise ReproError(f"{spec.name}: output {name!r} is not a buffer any kernel launch received (the "
                             "launcher computes it afterwards), so a launch-only repro cannot check it")
        mapped[name] = (slot.key, tuple(tensor.shape))
    valid = {}
    for name, r in ref.items():
        mask = spec.valid(name, case.params, r.shape) if spec.valid else None
        if mask is not None:
            valid[name] = mask.to(torch.bool).expand(r.shape).contiguous()
    tol = spec.tolerance_for(case.params)
    metrics = None
    if error is None and set(ref) <= set(outputs):
        cpu_outputs = {k: v.detach().cpu() for k, v in outputs.items()}
        metrics = worst_of(compare_outputs(spec, case, cpu_outputs, ref, tol)).as_dict()
    return Captured(spec=spec, params=dict(case.params), launches=rec.launches, slots=list(rec.slots.values()),
                    outputs=mapped, inputs=dict(cpu_inputs), reference=ref, valid=valid, tolerance=tol.as_dict(),
                    error=error, metrics=metrics)
