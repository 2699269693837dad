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
import time
from collections.abc import Iterator, Sequence
from typing import Any

from parity.backends.base import Backend
from parity.context import backend_scope
from parity.run.autotune_pin import autotuners
from parity.run.pick_cache import PickStore, store_for, tuning_key
from parity.spec import Case, KernelSpec

Seen = dict[int, tuple[Any, tuple[Any, ...], dict[str, Any]]]  # id(tuner) -> (tuner, args, kwargs)


MAX_SHARES = 4  # accuracy cases (so workers) that split one spec's compiles


def share(spec: KernelSpec, case: Case, backend: Backend, *, cases: Sequence[Case], perf: str,
          worker: str) -> tuple[int, int] | None:
    """(i, n): this case's worker compiles the i-th of n shares of the spec's autotuners, or None.

    Only where the perf pass will time perf cases on a device and the accuracy pass runs in xdist
    workers (alone in one process there is nothing to overlap with). Cases spread over the spec's
    list share the work, at most one per autotuner the spec lists, so a big op is not one worker's tail.
    """
    if perf == "off" or worker == "main" or backend.mode != "run" or not backend.times_kernels:
        return None
    ids = [c.id for c in cases]
    if not warmable(spec, cases) or case.id not in ids:
        return None
    n = max(1, min(len(ids), len(autotuners(spec.kernels)), MAX_SHARES))
    # spread over the spec's cases: xdist hands out neighbouring cases to one worker, and one worker doing
    # every share would serialize them
    at = [i * len(ids) // n for i in range(n)]
    position = ids.index(case.id)
    return (at.index(position), n) if position in at else None


def warmable(spec: KernelSpec, cases: Sequence[Case]) -> list[Case]:
    """The spec's perf cases (nothing of them runs on the device here: `dry_launches`)."""
    return list(spec.perf_cases) if spec.timed else []


@contextlib.contextmanager
def dry_launches(spec: KernelSpec) -> Iterator[Seen]:
    """Inside, launches run no kernel: each autotuner records its first call's arguments and returns without
    tuning (subclasses with their own run too); any other Triton kernel compiles instead of launching
    (JITFunction.run's own warm-up). A launcher that reads a kernel's output back sees an unwritten buffer;
    what it then raises is the warm's to note, never a finding."""
    from triton.runtime.autotuner import Autotuner

    from parity.seams.jit import autotuner_run, jit_run

    seen: Seen = {}
    classes = {Autotuner, *(type(t) for t in autotuners(spec.kernels))}

    def spy(inner: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.setdefault(id(self), (self, args, dict(kwargs)))

    def compile_only(inner: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["warmup"] = True
        return inner(self, *args, **kwargs)

    with contextlib.ExitStack() as stack:
        stack.enter_context(jit_run().layer(compile_only))
        for cls in classes:
            if "run" in cls.__dict__:
                stack.enter_context(autotuner_run(cls).layer(spy))
        yield seen


def compile_configs(tuner: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                    store: PickStore | None = None) -> tuple[int, int]:
    """Compile, without launching, every config the autotuner would time for these arguments (only the
    pick, where `store` holds one for them: the perf pass will launch that alone); (compiled, failed).
    A config that does not build is the autotuner's to skip, not ours to report."""
    stored = store.lookup(tuner, tuning_key(tuner, args, kwargs)) if store is not None else None
    tuner.nargs = dict(zip(tuner.arg_names, args, strict=False))  # what the tuner's pruning reads
    try:
        configs = [stored] if stored is not None else tuner.prune_configs(kwargs)
    finally:
        tuner.nargs = None
    if stored is None and len(configs) <= 1:
        configs = []  # one config is launched untimed: the perf pass compiles it as it runs
    kwargs = {k: v for k, v in kwargs.items() if k != "warmup"}  # warm-up sets it itself
    done = failed = 0
    for config in configs:
        try:
            tuner.fn.warmup(*args, **kwargs, **config.all_kwargs())
            done += 1
        except Exception:
            failed += 1
    return done, failed


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


def perf_configs(spec: KernelSpec, backend: Backend, *, seed: int, cases: Sequence[Case],
                 part: tuple[int, int] = (0, 1), retune: bool = False) -> dict[str, Any]:
    """Warm this worker's share of the spec's warmable perf cases: the autotuners j with j % n == i, in
    the order the launch reaches them; what was compiled, and the seconds it took. Where an earlier run
    stored a tuner's pick (parity.run.pick_cache) and `retune` is off, only the pick is compiled."""
    from parity.run.perf_case import device_inputs
    from parity.run.runner import memory_skip

    t0 = time.perf_counter()
    store = store_for(backend, retune=retune)
    compiled = failed = 0
    errors: list[str] = []
    for case in warmable(spec, cases):
        if memory_skip(spec, case, backend):
            continue
        try:
            dev_inputs, _ = device_inputs(spec, case, seed, backend.device)
            with backend_scope(backend.name):
                with dry_launches(spec) as seen:
                    spec.launch(dev_inputs, case.params)
                    peer_error = launch_peer(spec, dev_inputs, case.params)
                if peer_error:
                    errors.append(f"{case.id}: peer {peer_error}")
                for tuner, args, kwargs in list(seen.values())[part[0]::part[1]]:
                    done, bad = compile_configs(tuner, args, kwargs, store)
                    compiled, failed = compiled + done, failed + bad
        except Exception as exc:  # the perf pass will meet and report the same error itself
            errors.append(f"{case.id}: {type(exc).__name__}: {str(exc)[:200]}")
    out: dict[str, Any] = {"configs": compiled, "failed": failed, "seconds": round(time.perf_counter() - t0, 3)}
    if errors:
        out["errors"] = errors
    return out
