"""Compile the perf cases' kernels and autotune configs in an accuracy worker, for the perf pass to load.

The perf pass runs each library's own autotuning, unpinned and alone on the device: on the H200 most
of its time went to the autotuners compiling every config before timing it, one case after another in
one process. The accuracy workers run side by side, so a few of them compile those configs first: each
dry-runs each perf case once (`dry_launches`: the launcher runs, but no Triton kernel does: an autotuner
records the arguments it gets, any other kernel compiles through Triton's own warm-up), then compiles
every config that autotuner would time, with the same warm-up, into the Triton cache the whole run
shares. Nothing runs on the device at the perf sizes, so a perf case cannot fault a worker's device
before the perf pass meets it. The spec's peer (the library op its perf target compares with) is
dry-run too, so its autotuners warm alike. The perf pass then loads the binaries instead of compiling
them; the autotuner still times every config itself, alone on the device, so the config it picks and
the figures it reports do not change.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from parity.backends.base import Backend
from parity.perf.pick_cache import PickStore, source_key, store_for, tuning_key
from parity.run.autotune_pin import autotuners
from parity.run.runner import memory_skip
from parity.spec import Case, KernelSpec
from parity.spec.context import backend_scope

Seen = dict[int, tuple[Any, tuple[Any, ...], dict[str, Any]]]  # id(tuner) -> (tuner, args, kwargs)


MAX_SHARES = 4  # accuracy cases (so workers) that split the configs one spec's perf cases tune


def share(spec: KernelSpec, case: Case, backend: Backend, *, cases: Sequence[Case], perf: str,
          worker: str) -> tuple[int, int] | None:
    """(i, n): this case's worker compiles the i-th of n shares of the configs the spec's perf cases tune, or None.

    Only where the perf pass will time perf cases on a device and the accuracy pass runs in xdist
    workers (alone in one process there is nothing to overlap with). Cases spread over the spec's
    list share the work, so a big op is not one worker's tail.
    """
    if perf == "off" or worker == "main" or backend.mode != "run" or not backend.times_kernels:
        return None
    ids = [c.id for c in cases]
    if not warmable(spec) or case.id not in ids:
        return None
    # the configs are split, not the autotuners: one autotuner's list (GDN's chunk_fwd_h: 36 configs across
    # the peer's and ours, 91 s of compiles) was one worker's single long item and the pass's tail
    tuned = bool(autotuners(spec.kernels)) or spec.peer is not None
    n = max(1, min(len(ids), MAX_SHARES if tuned else 1))
    # spread over the spec's cases: xdist hands out neighbouring cases to one worker, and one worker doing
    # every share would serialize them
    at = [i * len(ids) // n for i in range(n)]
    position = ids.index(case.id)
    return (at.index(position), n) if position in at else None


def warmable(spec: KernelSpec) -> list[Case]:
    """The spec's perf cases (nothing of them runs on the device here: `dry_launches`)."""
    return list(spec.perf_cases) if spec.timed else []


@contextlib.contextmanager
def dry_launches(spec: KernelSpec) -> Iterator[Seen]:
    """Inside, launches run no kernel: each autotuner records its first call's arguments and returns without
    tuning (subclasses with their own run too); any other Triton kernel compiles instead of launching
    (JITFunction.run's own warm-up). A launcher that reads a kernel's output back sees an unwritten buffer;
    what it then raises is the warm's to note, never a finding."""
    from triton.runtime.autotuner import Autotuner

    from parity.compile.counter import caches_on, drop_unlaunchable
    from parity.seams.jit import autotuner_run, jit_run

    seen: Seen = {}
    callers: dict[int, Any] = {}  # library layers above a spied tuner: they may have stored its None
    classes = {Autotuner, *(type(t) for t in autotuners(spec.kernels))}

    def spy(inner: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.setdefault(id(self), (self, args, dict(kwargs)))
        callers.update((id(o), o) for o in caching_callers())
        return None  # nothing ran: a library cache that stores this (FlagGems' LibEntry) is cleaned below

    def compile_only(inner: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["warmup"] = True
        return inner(self, *args, **kwargs)

    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(jit_run().layer(compile_only))
            for cls in classes:
                if "run" in cls.__dict__:
                    stack.enter_context(autotuner_run(cls).layer(spy))
            yield seen
    finally:
        # FlagGems' LibEntry keeps what the tuner's run returned, per key: the spy's None stayed there, and the
        # next real launch of that key in this worker failed with "'NoneType' object is not subscriptable"
        drop_unlaunchable(cache for owner in callers.values() for cache in caches_on(owner))


def caching_callers(depth: int = 16) -> list[Any]:
    """The objects on the call stack (their methods' `self`) that keep a library kernel cache (the adapters'
    `kernel_cache_attrs`): the library layers a launch passed through on its way to this tuner."""
    import sys

    from parity.compile.counter import caches_on

    found: list[Any] = []
    frame: FrameType | None = sys._getframe(1)
    for _ in range(depth):
        if frame is None:
            break
        owner = frame.f_locals.get("self")
        if owner is not None and caches_on(owner):
            found.append(owner)
        frame = frame.f_back
    return found


def planned(tuner: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], store: PickStore | None = None) -> list[Any]:
    """The configs the autotuner would time for these arguments (only the pick, where `store` holds one for
    them: the perf pass will launch that alone); none where one config is left (launched untimed, the perf
    pass compiles it as it runs)."""
    stored = store.lookup(tuner, tuning_key(tuner, args, kwargs)) if store is not None else None
    if stored is not None:
        return [stored]
    tuner.nargs = dict(zip(tuner.arg_names, args, strict=False))  # what the tuner's pruning reads
    try:
        configs = list(tuner.prune_configs(dict(kwargs)))
    finally:
        tuner.nargs = None
    return configs if len(configs) > 1 else []


def compile_one(tuner: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], config: Any) -> bool:
    """Compile, without launching, one config; False where it does not build (the autotuner's to skip,
    not ours to report)."""
    kwargs = {k: v for k, v in kwargs.items() if k != "warmup"}  # warm-up sets it itself
    try:
        tuner.fn.warmup(*args, **kwargs, **config.all_kwargs())
    except Exception:
        return False
    return True


def stand_in(value: Any) -> Any:
    """A few bytes in place of a perf-size tensor, with what a compile reads of it: the dtype, the device and
    the pointer's alignment (Triton specializes on 16-byte alignment). Anything else passes as it is."""
    import torch

    if not isinstance(value, torch.Tensor) or value.device.type == "meta":
        return value
    offset = value.data_ptr() % 16  # a multiple of the element size; a fresh block is 512-byte aligned
    raw = torch.empty(64, dtype=torch.uint8, device=value.device)
    return raw[offset:offset + 32].view(value.dtype)


def launch_peer(spec: KernelSpec, dev_inputs: Any, params: Any) -> str | None:
    """Dry-run the spec's peer (fla for the GDN kernels) once, so its autotuners are seen and warmed too: cold,
    the perf pass spent most of its time in the peer's autotuning compiles. Why it could not, or None."""
    peer = spec.peer
    if peer is None or peer.unavailable() is not None:
        return None
    try:
        peer.prepare(dev_inputs, params)()
    except Exception as exc:  # the perf pass times the peer itself and reports its error there
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


PERF_SIZE_SLOTS = 4  # workers holding perf-size inputs at once: the device's memory is the whole run's


@contextlib.contextmanager
def device_slot(lock_dir: Path, slots: int = PERF_SIZE_SLOTS) -> Iterator[None]:
    """One of `slots` cross-worker locks: at most that many workers hold perf-size tensors on the device at
    once (16 workers each building GDN's T=65536 inputs and running fla's forward ran an H200 out of memory)."""
    from parity.compile import once

    while True:
        for i in range(slots):
            with once.held(lock_dir, f"perf-size-slot-{i}", 0.0) as got:
                if got:
                    yield
                    return
        time.sleep(0.2)


def perf_configs(spec: KernelSpec, backend: Backend, *, seed: int, part: tuple[int, int] = (0, 1),
                 retune: bool = False) -> dict[str, Any]:
    """Warm this worker's share of the configs the spec's perf cases tune: the j-th of them, in the order the
    launches reach their autotuners, where j % n == i; what was compiled, and the seconds it took. Where an
    earlier run stored a tuner's pick (parity.perf.pick_cache) and `retune` is off, only the pick is compiled.

    The perf-size inputs live only through the dry launch, inside a device slot; the compiles that follow
    read stand-ins (`stand_in`), so the memory goes back to the device first."""
    from parity.paths import triton_cache_dir

    t0 = time.perf_counter()
    store = store_for(backend, retune=retune)
    marker = warmed_marker(spec, backend, part, store)
    if marker.exists():  # an earlier run compiled this share into the cache the run shares
        return {"configs": 0, "failed": 0, "seconds": round(time.perf_counter() - t0, 3),
                "skipped": f"warmed by an earlier run ({marker.name})"}
    compiled = failed = 0
    errors: list[str] = []
    spent = {"slot_wait_s": 0.0, "dry_run_s": 0.0, "compile_s": 0.0}  # where a long warm went
    for case in warmable(spec):
        if memory_skip(spec, case, backend):
            continue
        try:
            t1 = time.perf_counter()
            with device_slot(triton_cache_dir(backend.name) / "warm-slots"):
                t2 = time.perf_counter()
                work = _dry_run(spec, case, backend, seed, store, part, errors)
                backend.release_memory()
            t3 = time.perf_counter()
            with backend_scope(backend.name):
                built = [compile_one(tuner, args, kwargs, config) for tuner, args, kwargs, config in work]
            compiled, failed = compiled + sum(built), failed + len(built) - sum(built)
            spent["slot_wait_s"] += t2 - t1
            spent["dry_run_s"] += t3 - t2
            spent["compile_s"] += time.perf_counter() - t3
        except Exception as exc:  # the perf pass will meet and report the same error itself
            errors.append(f"{case.id}: {type(exc).__name__}: {str(exc)[:200]}")
    out: dict[str, Any] = {"configs": compiled, "failed": failed, "seconds": round(time.perf_counter() - t0, 3),
                           **{k: round(v, 3) for k, v in spent.items()}}
    if errors:
        out["errors"] = errors
    else:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(out))
    return out


def warmed_marker(spec: KernelSpec, backend: Backend, part: tuple[int, int], store: PickStore) -> Path:
    """Where a finished share says it is done, beside the binaries it compiled (Triton's cache for this tier):
    named by what the share compiled from (the spec's kernel sources, its perf cases, the peer library's
    version, the device and Triton), so a changed kernel, case list or release warms again, and a cleared
    cache takes its markers with it. On the H200 a warm run's shares found every binary cached and still
    spent 350 worker-seconds building perf-size inputs and dry-running them."""
    from parity.paths import triton_cache_dir

    peer = spec.peer.library if spec.peer is not None else None
    ident = json.dumps([spec.name, [c.id for c in warmable(spec)], [source_key(k) for k in spec.kernels],
                        peer, library_versions(peer), store.device, store.triton_version, list(part)])
    digest = hashlib.sha256(ident.encode()).hexdigest()[:24]
    return triton_cache_dir(backend.name) / "warmed" / f"{spec.name[:60]}-{digest}"


@functools.cache
def library_versions(module: str | None) -> tuple[str, ...]:
    """The installed distributions that provide a top-level module, with their versions (fla: fla-core 0.6.0)."""
    if not module:
        return ()
    from importlib import metadata

    from parity.seams.versions import package_version

    dists = metadata.packages_distributions().get(module, [])
    return tuple(sorted(f"{d} {package_version(d)}" for d in dists))


Work = list[tuple[Any, tuple[Any, ...], dict[str, Any], Any]]  # (tuner, args, kwargs, config)


def _dry_run(spec: KernelSpec, case: Case, backend: Backend, seed: int, store: PickStore, part: tuple[int, int],
             errors: list[str]) -> Work:
    """This share's (tuner, args, kwargs, config) of one perf case, its tensors already stand-ins."""
    from parity.perf.case import device_inputs

    dev_inputs, _ = device_inputs(spec, case, seed, backend.device)
    with backend_scope(backend.name):
        with dry_launches(spec) as seen:
            spec.launch(dev_inputs, case.params)
            peer_error = launch_peer(spec, dev_inputs, case.params)
        if peer_error:
            errors.append(f"{case.id}: peer {peer_error}")
        work = [(tuner, args, kwargs, config) for tuner, args, kwargs in seen.values()
                for config in planned(tuner, args, kwargs, store)][part[0]::part[1]]
    return [(tuner, tuple(stand_in(a) for a in args), {k: stand_in(v) for k, v in kwargs.items()}, config)
            for tuner, args, kwargs, config in work]
