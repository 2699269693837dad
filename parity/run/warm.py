"""Compile the perf cases' autotune configs in an accuracy worker, for the perf pass to load.

The perf pass runs each library's own autotuning, unpinned and alone on the device: on the H200 most
of its time went to the autotuners compiling every config before timing it, one case after another in
one process. The accuracy workers run side by side, so one of them compiles those configs first: it
launches each perf case once, pinned as the accuracy pass launches (parity.run.autotune_pin), which
shows the arguments each autotuner gets, then compiles every config that autotuner would time with
Triton's own warm-up (compile, no launch) into the Triton cache the whole run shares. The perf pass
then loads the binaries instead of compiling them; the autotuner still times every config itself,
alone on the device, so the config it picks and the figures it reports do not change.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from parity.backends.base import Backend
from parity.context import backend_scope
from parity.run.autotune_pin import autotuners, pinned_case
from parity.spec import Case, KernelSpec

Seen = dict[int, tuple[Any, tuple[Any, ...], dict[str, Any]]]  # id(tuner) -> (tuner, args, kwargs)


def wanted(spec: KernelSpec, case: Case, backend: Backend, *, last_case: str, perf: str, worker: str) -> bool:
    """Warm from the xdist worker that runs the spec's last accuracy case, where the perf pass will time
    perf cases on a device (alone in one process there is nothing to overlap with)."""
    return (perf != "off" and worker != "main" and backend.mode == "run" and backend.times_kernels
            and bool(spec.perf_cases) and case.id == last_case)


@contextlib.contextmanager
def arguments_seen(spec: KernelSpec) -> Iterator[Seen]:
    """Records the first call of each autotuner during the block (subclasses with their own run too)."""
    from triton.runtime.autotuner import Autotuner

    seen: Seen = {}
    classes = {Autotuner, *(type(t) for t in autotuners(spec.kernels))}
    originals = {cls: cls.__dict__["run"] for cls in classes if "run" in cls.__dict__}

    def spy(original: Any) -> Any:
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            seen.setdefault(id(self), (self, args, dict(kwargs)))
            return original(self, *args, **kwargs)
        return run

    try:
        for cls, original in originals.items():
            cls.run = spy(original)
        yield seen
    finally:
        for cls, original in originals.items():
            cls.run = original


def compile_configs(tuner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, int]:
    """Compile, without launching, every config the autotuner would time for these arguments;
    (compiled, failed). A config that does not build is the autotuner's to skip, not ours to report."""
    tuner.nargs = dict(zip(tuner.arg_names, args, strict=False))  # what the tuner's pruning reads
    try:
        configs = tuner.prune_configs(kwargs)
    finally:
        tuner.nargs = None
    kwargs = {k: v for k, v in kwargs.items() if k != "warmup"}  # warm-up sets it itself
    done = failed = 0
    for config in configs if len(configs) > 1 else ():
        try:
            tuner.fn.warmup(*args, **kwargs, **config.all_kwargs())
            done += 1
        except Exception:
            failed += 1
    return done, failed


def perf_configs(spec: KernelSpec, backend: Backend, *, seed: int) -> dict[str, Any]:
    """Warm every perf case of the spec; what was compiled, and the seconds it took."""
    from parity.run.perf_case import device_inputs
    from parity.run.runner import memory_skip

    t0 = time.perf_counter()
    compiled = failed = 0
    errors: list[str] = []
    for case in spec.perf_cases:
        if memory_skip(spec, case, backend):
            continue
        try:
            dev_inputs, _ = device_inputs(spec, case, seed, backend.device)
            with arguments_seen(spec) as seen, backend_scope(backend.name):
                with pinned_case(spec, case.params):
                    spec.launch(dev_inputs, case.params)
                backend.synchronize()
                for tuner, args, kwargs in seen.values():  # the tuners have all their configs back here
                    done, bad = compile_configs(tuner, args, kwargs)
                    compiled, failed = compiled + done, failed + bad
        except Exception as exc:  # the perf pass will meet and report the same error itself
            errors.append(f"{case.id}: {type(exc).__name__}: {str(exc)[:200]}")
    out: dict[str, Any] = {"configs": compiled, "failed": failed, "seconds": round(time.perf_counter() - t0, 3)}
    if errors:
        out["errors"] = errors
    return out
