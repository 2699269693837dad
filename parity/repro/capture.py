"""Launch capture: run a case once while recording every Triton launch, its grid and its tensors.

Patches `run` on the JIT and interpreter classes (and keeps only an Autotuner's final launch),
so a repro can replay exactly the launches the failing run made. Tensors are captured by storage:
each storage the launches reach is one buffer (its bytes before the first launch that reached it),
each tensor argument and each checked output a view of one (dtype, shape, strides, storage offset),
and an integer argument holding addresses a table of references into buffers, which the repro
fills with its own tensors' addresses.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from parity.repro.source import SourceError, literal, python_function
from parity.repro.tensorlike import typed_pointer_view
from parity.run import autotune_pin, heap
from parity.spec import Case, KernelSpec
from parity.spec import inputs as inp


class ReproError(RuntimeError):
    """A repro cannot be generated for this case; the message says what stood in the way."""


class NoLaunch(ReproError):
    """The case raised before any Triton launch; `raised` is that exception (parity.repro.prelaunch reads it)."""

    def __init__(self, message: str, raised: BaseException | None) -> None:
        super().__init__(message)
        self.raised = raised


# ---------------------------------------------------------------- launch capture

# user-space addresses on x86-64 and aarch64 lie in [4 GiB, 256 TiB): an 8-byte integer tensor whose
# nonzero values all do is read as a table of pointers (indices and seeds hardly ever all do)
ADDRESS_RANGE = (1 << 32, 1 << 48)
POINTER_DTYPES = (torch.int64, torch.uint64)
POINTER_TABLE_MAX_NUMEL = 1 << 16
WHOLE_STORAGE_MAX_BYTES = 64 << 20  # storages up to this are kept whole; larger ones keep what views reach
ALIGN_BYTES = 256  # a kept byte range starts on this boundary, so pointer alignment (Triton's % 16) survives


@dataclass
class Buffer:
    """One storage the recorded launches reach (as a tensor argument, or through a pointer table)."""

    key: str
    live: torch.Tensor  # holds the storage, so its memory cannot be reused by another tensor mid-capture
    address: int
    nbytes: int
    # uint8 CPU copy of the whole storage before the first launch that reached it (a repro's case is shrunk,
    # so this is small; a storage of GBs would be copied whole here, though only `kept` is written)
    snapshot: torch.Tensor
    reach: tuple[int, int]  # byte range of the storage that views and pointers reach
    whole: bool = False  # reached through a pointer table: how far the kernel reads from it is unknown

    def extend(self, lo: int, hi: int) -> None:
        self.reach = (min(self.reach[0], lo), max(self.reach[1], hi))

    @property
    def kept(self) -> tuple[int, int]:
        """The byte range the repro rebuilds: the whole storage unless it is large and views reach less."""
        if self.whole or self.nbytes <= WHOLE_STORAGE_MAX_BYTES:
            return 0, self.nbytes
        return self.reach[0] // ALIGN_BYTES * ALIGN_BYTES, self.reach[1]

    def initial(self) -> torch.Tensor:
        lo, hi = self.kept
        return self.snapshot[lo:hi]


@dataclass
class TensorSlot:
    """One distinct tensor argument: a view (dtype, shape, strides, storage offset) of a Buffer."""

    key: str
    buffer: Buffer
    dtype: str
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int  # storage offset, in elements, from the storage's start

    def view_literal(self) -> str:
        """(buffer, dtype, shape, stride, offset in elements from the kept range's start) for repro.py."""
        return literal(view_spec(self.buffer, self.dtype, self.shape, self.stride, self.offset))


@dataclass
class PointerTable:
    """An integer tensor argument whose values are addresses: each one as (buffer, byte offset from its
    storage's start), or the value itself where it is no address (0); `unresolved` lists the addresses
    that lie in no storage of this run, which a repro cannot rebuild."""

    key: str
    entries: list[Any]
    unresolved: list[int]


@dataclass
class Launch:
    kernel: Any
    grid: tuple[int, ...]
    args: list[str]  # source expressions
    kwargs: dict[str, str]
    warmup: bool


def wrapped_base(v: Any) -> torch.Tensor | None:
    """The tensor under Triton's `TensorWrapper` (what `triton.reinterpret` returns: a tensor read as another dtype,
    e.g. test_core's unsigned and fp8 inputs), else None. By duck type: capture imports no triton."""
    base = getattr(v, "base", None)
    if type(v).__name__ == "TensorWrapper" and isinstance(base, torch.Tensor):
        return base
    return None


def view_spec(buffer: Buffer, dtype: str, shape: tuple[int, ...], stride: tuple[int, ...],
              offset: int) -> tuple[Any, ...]:
    size = torch.empty((), dtype=getattr(torch, dtype)).element_size()
    return (buffer.key, dtype, shape, stride, offset - buffer.kept[0] // size)


def _storage(t: torch.Tensor) -> tuple[str, int, int]:
    storage = t.untyped_storage()
    return str(t.device), storage.data_ptr(), storage.nbytes()


def storage_ident(t: torch.Tensor) -> tuple[str, int, int]:
    """(device, storage address, storage bytes): the key a Buffer is known by."""
    return _storage(t)


def storage_snapshot(t: torch.Tensor) -> torch.Tensor:
    """Every byte of t's storage, as a flat uint8 CPU copy (a Buffer's `snapshot`)."""
    return _snapshot(t)


def _byte_reach(t: torch.Tensor) -> tuple[int, int]:
    """Bytes of its storage that t's elements cover (start inclusive, end exclusive)."""
    size = t.element_size()
    start = int(t.storage_offset()) * size
    if t.numel() == 0:
        return start, start
    last = int(sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True)))
    return start, start + (last + 1) * size


def _snapshot(t: torch.Tensor) -> torch.Tensor:
    """Every byte of t's storage, as a flat uint8 CPU copy."""
    storage = t.untyped_storage()
    flat = torch.empty(0, dtype=torch.uint8, device=t.device).set_(storage, 0, (storage.nbytes(),), (1,))
    return flat.detach().cpu().clone()


def _addresses(t: torch.Tensor) -> list[int] | None:
    """t's values when t reads as a table of addresses (see ADDRESS_RANGE), else None."""
    if t.dtype not in POINTER_DTYPES or not 0 < t.numel() <= POINTER_TABLE_MAX_NUMEL:
        return None
    values = t.detach().cpu().contiguous().view(torch.int64).reshape(-1).tolist()
    lo, hi = ADDRESS_RANGE
    if not any(values) or not all(v == 0 or lo <= v < hi for v in values):
        return None
    return values


def _live_storages(device: str) -> list[torch.Tensor]:
    """Every tensor alive in this process on `device`: where a pointer table's addresses may point."""
    # type(), not isinstance: isinstance asks each object its __class__, which wakes lazy deprecated modules
    return [o for o in heap.live_objects() if issubclass(type(o), torch.Tensor) and str(o.device) == device
            and o.untyped_storage().nbytes()]


@dataclass
class LaunchRecorder:
    """Context manager: records every Triton launch (and warmup) made inside it.

    Patches `run` on the JIT and interpreter classes. Inside an Autotuner only its
    last launch is kept: the ones before it are the benchmark runs. Tensors are recorded by
    storage: each argument is a view of a Buffer, so views that share memory (a transposed state,
    a slice, an expanded weight) share it in the repro too; an integer argument holding addresses
    is recorded as references to the buffers they point into (a PointerTable).
    """

    launches: list[Launch] = field(default_factory=list)
    buffers: dict[tuple[str, int, int], Buffer] = field(default_factory=dict)
    views: dict[tuple[Any, ...], TensorSlot] = field(default_factory=dict)
    pointers: dict[str, PointerTable] = field(default_factory=dict)
    _undo: list[Callable[[], None]] = field(default_factory=list)

    def buffer(self, t: torch.Tensor) -> Buffer:
        ident = _storage(t)
        found = self.buffers.get(ident)
        if found is None:
            found = Buffer(key=f"b{len(self.buffers)}", live=t, address=ident[1], nbytes=ident[2],
                           snapshot=_snapshot(t), reach=_byte_reach(t))
            self.buffers[ident] = found
        return found

    def tensor(self, t: torch.Tensor) -> str:
        buf = self.buffer(t)
        buf.extend(*_byte_reach(t))
        dtype = str(t.dtype).split(".")[-1]
        ident = (buf.key, dtype, tuple(t.shape), tuple(t.stride()), int(t.storage_offset()))
        slot = self.views.get(ident)
        if slot is None:
            slot = TensorSlot(f"t{len(self.views)}", buf, dtype, ident[2], ident[3], ident[4])
            self.views[ident] = slot
            values = _addresses(t)
            if values is not None:
                self.pointers[slot.key] = self._table(slot.key, values, str(t.device))
        return f"T[{slot.key!r}]"

    def _owner(self, address: int, device: str) -> Buffer | None:
        return next((b for (dev, _, _), b in self.buffers.items()
                     if dev == device and b.address <= address < b.address + b.nbytes), None)

    def _table(self, key: str, values: list[int], device: str) -> PointerTable:
        entries: list[Any] = []
        unresolved: list[int] = []
        live: list[torch.Tensor] | None = None
        for value in values:
            buf = self._owner(value, device) if value else None
            if buf is None and value:
                if live is None:  # a weight the launcher only passes by address: find its tensor
                    live = _live_storages(device)
                t = next((o for o in live if o.untyped_storage().data_ptr() <= value
                          < o.untyped_storage().data_ptr() + o.untyped_storage().nbytes()), None)
                buf = self.buffer(t) if t is not None else None
            if buf is None:
                entries.append(value)
                if value:
                    unresolved.append(value)
                continue
            buf.whole = True
            entries.append((buf, value - buf.address))
        return PointerTable(key, entries, unresolved)

    def value(self, v: Any) -> str:
        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        base = wrapped_base(v)
        if base is not None:  # triton.reinterpret's wrapper: its base tensor by storage, read as the wrapper's dtype
            return f"triton.reinterpret({self.tensor(base)}, tl.dtype({literal(str(v.dtype))}))"
        typed = typed_pointer_view(v)
        if typed is not None:  # FlagGems' StridedBuffer: a torch view of its base's storage, same address and dtype
            view, exact = typed
            ref = self.tensor(view)
            if not exact:  # a negative stride: how far the kernel reads is unknown, so the whole storage is kept
                self.buffer(view).whole = True
            return ref
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

    def output_view(self, name: str, t: torch.Tensor) -> TensorSlot | None:
        """The output as a view of a buffer the launches reached (any strides and offset), or None."""
        buf = self.buffers.get(_storage(t))
        if buf is None:
            return None
        buf.extend(*_byte_reach(t))
        return TensorSlot(name, buf, str(t.dtype).split(".")[-1], tuple(t.shape), tuple(t.stride()),
                          int(t.storage_offset()))


# ---------------------------------------------------------------- one captured case


@dataclass
class Captured:
    """Everything a repro needs, from one recorded run of a (shrunk) case."""

    spec: KernelSpec
    params: dict[str, Any]
    launches: list[Launch]
    slots: list[TensorSlot]
    outputs: dict[str, TensorSlot]  # output name -> its view of a buffer
    inputs: dict[str, Any]  # the spec's CPU inputs, for the reference
    reference: dict[str, torch.Tensor]
    valid: dict[str, torch.Tensor]
    tolerance: dict[str, Any]
    error: str | None
    metrics: dict[str, Any] | None = None  # the captured run against the reference (worst output)
    pointers: list[PointerTable] = field(default_factory=list)

    @property
    def buffers(self) -> list[Buffer]:
        found = {id(s.buffer): s.buffer for s in [*self.slots, *self.outputs.values()]}
        for table in self.pointers:
            found.update({id(e[0]): e[0] for e in table.entries if isinstance(e, tuple)})
        return sorted(found.values(), key=lambda b: int(b.key[1:]))

    def buffer_arrays(self) -> dict[str, Any]:
        """inputs.npz's bytes of each buffer before the first launch, keyed by buffer."""
        return {b.key: b.initial().numpy() for b in self.buffers}

    def script_fields(self) -> dict[str, str]:
        """repro.py's BUFFERS, TENSORS, POINTERS, UNRESOLVED_POINTERS and OUTPUTS, as source text."""
        tables = {t.key: [[e[0].key, e[1] - e[0].kept[0]] if isinstance(e, tuple) else e for e in t.entries]
                  for t in self.pointers}
        return {
            "buffers": literal({b.key: b.kept[1] - b.kept[0] for b in self.buffers}),
            "tensors": "{" + ", ".join(f"{s.key!r}: {s.view_literal()}" for s in self.slots) + "}",
            "pointers": literal(tables),
            "unresolved_pointers": literal({t.key: [hex(v) for v in t.unresolved] for t in self.pointers
                                            if t.unresolved}),
            "outputs": "{" + ", ".join(f"{n!r}: {v.view_literal()}" for n, v in self.outputs.items()) + "}",
        }

    @property
    def unresolved(self) -> list[str]:
        """One line per pointer table with addresses that lie in no storage of this run."""
        return [f"{t.key} holds {len(t.unresolved)} address(es) in no tensor of the run "
                f"({', '.join(hex(v) for v in t.unresolved[:4])})" for t in self.pointers if t.unresolved]


def _as_outputs(value: Any) -> dict[str, torch.Tensor]:
    return {"out": value} if isinstance(value, torch.Tensor) else dict(value or {})


def capture_case(spec: KernelSpec, case: Case, backend: Any, *, seed: int, cache: Any) -> Captured:
    """Run the case once with launch recording on; it must go through at least one kernel launch."""
    from parity.errors import error_text
    from parity.run import prefill
    from parity.run.compare import worst_of
    from parity.run.runner import build_inputs, compare_outputs, reference_outputs

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
    mapped: dict[str, TensorSlot] = {}
    for name, tensor in outputs.items():
        if name not in ref:
            continue
        view = rec.output_view(name, tensor)
        if view is None:
            raise ReproError(f"{spec.name}: output {name!r} lies in no storage any kernel launch reached (the "
                             "launcher computes it afterwards), so a launch-only repro cannot check it")
        mapped[name] = view
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
    return Captured(spec=spec, params=dict(case.params), launches=rec.launches, slots=list(rec.views.values()),
                    outputs=mapped, inputs=dict(cpu_inputs), reference=ref, valid=valid, tolerance=tol.as_dict(),
                    error=error, metrics=metrics, pointers=list(rec.pointers.values()))
