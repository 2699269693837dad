"""Red zones on the CPU tiers: an out-of-bounds access is found, not survived.

On interpret and ascend-lowered a kernel reads and writes host memory through raw addresses. An unmasked
tail (BLOCK 1024 over N = 1000) then reads whatever lies after the tensor and writes over it: the
comparison may pass, and the process may die later from a heap the kernel corrupted. So, around each
launch on these tiers, every tensor argument (in a tuple too) is moved into a guarded allocation:

    [ red zone | the tensor's whole storage | red zone ]

A red zone holds NaN for a floating storage (a signalling NaN with a payload of its own per zone, so that a
value read from one red zone and written into another, computed on or not, changes the bytes there) and a
byte (0xA5, 0xA7, ...) for any other. Views that share a storage
share one guarded copy, so aliasing (in-place kernels, q/k/v views of one buffer) is what it was. After
the launch the storage's bytes go back to the caller's tensor, and each red zone is compared with its fill:

- a changed red zone is an out-of-bounds **write**: a `Breach` names the kernel, the argument, the element
  range past (or before) the tensor's storage, and the kernel's unmasked tl.store lines;
- an out-of-bounds **read** gets NaN (or 0xA5 bytes), which reaches the result, where the comparison
  with the fp64 reference catches it; where such a NaN lands in an argument's storage with its payload intact,
  a `Read` names the argument whose red zone it came from and the argument that holds it.

Each finding names the kernel's unmasked accesses whose pointer derives from the argument it caught
(parity.run.unmasked.touching): every one when several do, none (said so) when none does.

A red zone is `PAD_MIN_BYTES` (64 KiB: an unmasked tail of BLOCK 16384 fp32) up to `PAD_MAX_BYTES`
(4 MiB; an eighth of the storage's size in between) on each side: an access beyond it is not caught.
Storages over `GUARD_MAX_BYTES` are left as they are, and counted. The copies cost two passes over each
argument's storage per launch, small beside an interpreted or CPU-lowered kernel.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

PAD_MIN_BYTES = 64 << 10
PAD_MAX_BYTES = 4 << 20
GUARD_MAX_BYTES = 2 << 30
INT_FILL = 0xA5  # the byte a non-floating storage's red zones hold
ALIGN = 64  # keeps each tensor's address modulo 16 (Triton specializes on it) as it was


def applies(backend: Any) -> bool:
    """Red zones go where kernels run on host memory: a tier that launches, on the CPU."""
    return bool(backend.mode != "compile" and backend.device_type == "cpu")


def _plain_torch() -> Any:
    """Torch calls without __torch_function__ handling: the guard's own copies and comparisons are no launcher's
    allocations (parity.run.prefill) and no target tensors (ascend-lowered's npu tensors); through those
    handlers they cost several times the launch of a small lowered kernel."""
    return torch._C.DisableTorchFunction()


def pad_bytes(nbytes: int) -> int:
    pad = min(max(nbytes // 8, PAD_MIN_BYTES), PAD_MAX_BYTES)
    return -(-pad // ALIGN) * ALIGN


# signalling NaN bit patterns (exponent all ones, quiet bit clear): arithmetic on one gives a quiet NaN, so
# a value read from a red zone, computed on and written back into one changes its bits; each zone of a
# launch gets its own payload, so a value copied from one tensor's red zone into another's changes too
_SNAN = {torch.float64: (torch.int64, 0x7FF0_0000_0000_0000, 0xFFFF), torch.float32: (torch.int32, 0x7F80_0000, 0xFFFF),
         torch.float16: (torch.int16, 0x7C00, 0x1FF), torch.bfloat16: (torch.int16, 0x7F80, 0x3F)}


def fill_pattern(dtype: torch.dtype, nbytes: int, index: int = 0) -> torch.Tensor:
    """`nbytes` bytes of red zone for a storage first reached as `dtype`, the `index`-th of its launch: a
    signalling NaN of that dtype, else a byte (0xA5, 0xA7, ...) for integers and the rest."""
    found = _SNAN.get(dtype)
    if found is not None and nbytes % dtype.itemsize == 0:
        bits, exponent, payloads = found
        return torch.full((nbytes // dtype.itemsize,), exponent | (1 + index % payloads), dtype=bits).view(torch.uint8)
    return torch.full((nbytes,), (INT_FILL + 2 * index) % 256, dtype=torch.uint8)


def _bytes_of(storage: torch.UntypedStorage) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8).set_(storage)


@dataclass
class Breach:
    """Bytes of a red zone that a launch changed: an out-of-bounds write."""

    kernel: str
    tensor: str  # the kernel argument(s) that reach the storage
    dtype: str
    numel: int  # elements of the argument as passed
    first: int  # element offsets relative to the argument's first element, half open
    last: int
    stores: list[str] = field(default_factory=list)  # the kernel's unmasked tl.store lines
    joined: list[dict[str, Any]] = field(default_factory=list)  # those whose pointer derives from `tensor`

    def words(self) -> str:
        side = "past its end" if self.first >= 0 else "before its start"
        text = (f"out-of-bounds write by {self.kernel}: elements [{self.first}, {self.last}) of argument "
                f"`{self.tensor}` ({self.dtype}, {self.numel} elements) were written, {side}, into parity's red zone")
        if self.stores:
            text += "; unmasked tl.store: " + " | ".join(self.stores)
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "tensor": self.tensor, "dtype": self.dtype, "numel": self.numel,
                "elements": [self.first, self.last], "unmasked_stores": list(self.stores),
                "accesses": list(self.joined)}


@dataclass
class Read:
    """Values of one argument's red zone found in an argument's storage after a launch: an out-of-bounds read
    whose value the kernel wrote back (the NaN's payload names the zone it came from)."""

    kernel: str
    tensor: str  # the argument(s) whose red zone was read
    into: str  # the argument(s) whose storage holds the values
    count: int
    joined: list[dict[str, Any]] = field(default_factory=list)  # unmasked loads whose pointer derives from `tensor`

    def words(self) -> str:
        text = (f"out-of-bounds read by {self.kernel}: {self.count} value(s) from parity's red zone around argument "
                f"`{self.tensor}` reached argument `{self.into}`")
        if self.joined:
            text += "; unmasked tl.load: " + " | ".join(a["where"] for a in self.joined)
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "tensor": self.tensor, "into": self.into, "count": self.count,
                "accesses": list(self.joined)}


# per floating dtype: every bit but the sign and the quiet bit, so a red zone's NaN matches once computed on
_QUIET_CLEAR = {torch.float64: 0x7FF7_FFFF_FFFF_FFFF, torch.float32: 0x7FBF_FFFF, torch.float16: 0x7DFF,
                torch.bfloat16: 0x7FBF}


def zone_values(zone: Any) -> torch.Tensor | None:
    """A floating zone's in-bounds bits with sign and quiet bit cleared, where its NaNs could hold red zone
    payloads; None for any other storage, or one without NaN."""
    dtype = zone.first.dtype
    if dtype not in _SNAN or zone.nbytes % dtype.itemsize:
        return None
    inside: torch.Tensor = zone.base[zone.pad: zone.pad + zone.nbytes]
    if not torch.isnan(inside.view(dtype)).any():
        return None
    return inside.view(_SNAN[dtype][0]) & _QUIET_CLEAR[dtype]


def reads_into(zones: Sequence[Any], kernel: str) -> list[Read]:
    """The red zone values each zone's storage holds: zone j's fill is its pattern's first element."""
    found = []
    for into in zones:
        bits = zone_values(into)
        if bits is None:
            continue
        for source in zones:
            if source.first.dtype != into.first.dtype:
                continue
            count = int((bits == source.pattern.view(bits.dtype)[0]).sum())
            if count:
                found.append(Read(kernel, ", ".join(dict.fromkeys(source.names)),
                                  ", ".join(dict.fromkeys(into.names)), count))
    return found


class _Zone:
    """One storage's guarded copy: [pad | storage bytes | pad]."""

    def __init__(self, first: torch.Tensor, name: str, index: int) -> None:
        self.original = first.untyped_storage()
        self.key = self.original.data_ptr()
        self.nbytes = self.original.nbytes()
        self.pad = pad_bytes(self.nbytes)
        self.first, self.names = first, [name]
        self.pattern = fill_pattern(first.dtype, self.pad, index)
        self.base = torch.empty(self.nbytes + 2 * self.pad, dtype=torch.uint8)  # (under _plain_torch: no prefill)
        self.base[: self.pad] = self.pattern
        self.base[self.pad + self.nbytes:] = self.pattern
        self.base[self.pad: self.pad + self.nbytes] = _bytes_of(self.original)

    def view(self, t: torch.Tensor) -> torch.Tensor:
        """`t` as a view of the guarded copy, of `t`'s own class (a tensor that says `npu` stays one)."""
        offset = self.pad // t.element_size() + t.storage_offset()
        guarded = torch.empty(0, dtype=t.dtype).set_(self.base.untyped_storage(), offset, t.size(), t.stride())
        return guarded if type(t) is torch.Tensor else guarded.as_subclass(type(t))

    def finish(self, kernel: str, stores: list[str]) -> list[Breach]:
        """Copy the storage back to the caller's tensor and report the red zone bytes that changed."""
        _bytes_of(self.original).copy_(self.base[self.pad: self.pad + self.nbytes])
        t, size = self.first, self.first.element_size()
        start = t.storage_offset() * size  # the argument's first byte in its storage
        breaches = []
        for lo, zone in ((-self.pad, self.base[: self.pad]), (self.nbytes, self.base[self.pad + self.nbytes:])):
            if torch.equal(zone, self.pattern):  # the usual case: one pass, no index tensor
                continue
            changed = (zone != self.pattern).nonzero()
            a, b = lo + int(changed[0]) - start, lo + int(changed[-1]) + 1 - start
            breaches.append(Breach(kernel, ", ".join(dict.fromkeys(self.names)), str(t.dtype).replace("torch.", ""),
                                   t.numel(), a // size, -(-b // size), stores))
        return breaches


@dataclass
class RedZones:
    """The launch layer (parity.seams.jit) that guards each launch's tensors; what it found, for the record."""

    breaches: list[Breach] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    guarded: int = 0  # storages guarded over the launches
    too_big: int = 0  # storages left unguarded (over GUARD_MAX_BYTES)

    def _guard(self, value: Any, name: str, zones: dict[int, _Zone]) -> Any:
        if isinstance(value, tuple):
            return type(value)(self._guard(v, f"{name}[{i}]", zones) for i, v in enumerate(value)) \
                if not hasattr(value, "_fields") else value
        if not isinstance(value, torch.Tensor) or value.device.type not in ("cpu", "npu", "cuda") \
                or value.untyped_storage().device.type != "cpu":
            return value
        key = value.untyped_storage().data_ptr()
        zone = zones.get(key)
        if zone is None:
            if value.untyped_storage().nbytes() > GUARD_MAX_BYTES:
                self.too_big += 1
                return value
            zone = zones[key] = _Zone(value, name, len(zones))
        else:
            zone.names.append(name)
        guarded = zone.view(value)
        _ORIGINALS[guarded.data_ptr()] = value
        return guarded

    def layer(self, inner: Any, kernel: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        if warmup:
            return inner(kernel, *args, grid=grid, warmup=warmup, **kwargs)
        from parity.run.unmasked import (  # reads the source
            stray_stores,
            touching,
            unmasked_accesses,
            unmasked_with_args,
        )

        names = list(getattr(kernel, "arg_names", None) or [])
        names += [f"arg{i}" for i in range(len(names), len(args))]
        zones: dict[int, _Zone] = {}
        with _plain_torch():
            args = tuple(self._guard(v, n, zones) for n, v in zip(names, args, strict=False))
            kwargs = {k: self._guard(v, k, zones) for k, v in kwargs.items()}
            # a storage that holds red zone values before the launch (an earlier launch's read) hides this one's
            trace_reads = not reads_into(list(zones.values()), "")
        self.guarded += len(zones)
        try:
            return inner(kernel, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            for zone in zones.values():
                for address in [a for a, t in _ORIGINALS.items() if t.untyped_storage().data_ptr() == zone.key]:
                    del _ORIGINALS[address]
            kernel_name = getattr(kernel, "__name__", None) or type(kernel).__name__
            with _plain_torch():
                reads = reads_into(list(zones.values()), kernel_name) if trace_reads else []
            tensors = {n.partition("[")[0] for z in zones.values() for n in z.names}

            def joined(op: str, tensor: str) -> list[dict[str, Any]]:  # each with the tensor arguments it touches
                found = stray_stores(kernel, tensor) if op == "store" else touching(unmasked_with_args(kernel, op),
                                                                                     tensor)
                return [{**a.as_dict(), "args": [x for x in a.args if x in tensors]} for a in found]

            for r in reads:
                r.joined = joined("load", r.tensor)
            self.reads += reads
            stores: list[str] | None = None
            for zone in zones.values():
                with _plain_torch():
                    found = zone.finish(kernel_name, [])
                if found and stores is None:
                    stores = unmasked_accesses(kernel, "store")
                for b in found:
                    b.stores = list(stores or [])
                    b.joined = joined("store", b.tensor)
                self.breaches += found

    def summary(self) -> dict[str, Any] | None:
        """record["oob"]: the breaches and the reads found, or None when the red zones stayed intact and unread."""
        if not self.breaches and not self.reads:
            return None
        found: dict[str, Any] = {"writes": [b.as_dict() for b in self.breaches], "guarded": self.guarded}
        return {**found, "reads": [r.as_dict() for r in self.reads]} if self.reads else found

    def reason(self) -> str | None:
        said: list[Breach | Read] = [*self.breaches, *self.reads]
        if not said:
            return None
        more = f" (and {len(said) - 1} more)" if len(said) > 1 else ""
        return said[0].words() + more


# during a launch: the guarded view's address -> the caller's tensor it stands for
_ORIGINALS: dict[int, torch.Tensor] = {}


def unguarded(value: Any) -> Any:
    """The caller's tensor behind a guarded view that a launch passes on (a launcher-level buffer log, such as
    ascend-lowered's repro, records the caller's memory, not parity's red zones); anything else as it is."""
    return _ORIGINALS.get(value.data_ptr(), value) if isinstance(value, torch.Tensor) else value


ENABLED = True  # tests switch it off to show what an unguarded launch lets through
_REMOVE: list[Any] = []  # what takes the process-wide layers out again (empty: not installed)
_COLLECTORS: list[RedZones] = []  # the case being run collects the breaches; none: they are dropped


def _process_layer(inner: Any, kernel: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
    if not ENABLED:
        return inner(kernel, *args, grid=grid, warmup=warmup, **kwargs)
    zones = _COLLECTORS[-1] if _COLLECTORS else RedZones()
    return zones.layer(inner, kernel, *args, grid=grid, warmup=warmup, **kwargs)


def install() -> Any:
    """Guard every launch of this process (a CPU tier's session installs it first, so its layer is the
    innermost: a repro's launch recorder still sees the caller's tensors). Returns the undo; a no-op undo
    where it was already installed. Every launch is guarded, not only a case's first: a repro's or a
    shrink's re-run of a kernel that writes out of bounds must not corrupt the worker's heap either."""
    if _REMOVE:
        return lambda: None
    from parity.seams.jit import interpreted_run, jit_run

    _REMOVE.append(jit_run().add(_process_layer))
    interpreted = interpreted_run()
    if interpreted is not None:
        _REMOVE.append(interpreted.add(_process_layer))

    def undo() -> None:
        while _REMOVE:
            _REMOVE.pop()()

    return undo


@contextlib.contextmanager
def guarded_launches(backend: Any) -> Iterator[RedZones | None]:
    """Around a case's launch on a CPU tier: yields the RedZones that collect its launches' breaches, or None
    where red zones do not apply (compile tiers, a device)."""
    if not ENABLED or not applies(backend):
        yield None
        return
    undo = install()
    zones = RedZones()
    _COLLECTORS.append(zones)
    try:
        yield zones
    finally:
        _COLLECTORS.remove(zones)
        undo()
