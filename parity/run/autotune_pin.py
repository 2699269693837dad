"""Accuracy runs pin every autotuned kernel to one of its configs instead of timing them all.

Autotuning inside an accuracy pass costs a compile and a benchmark of every config for
every new key, in every xdist worker, and then checks only the winner. Pinning checks a
config chosen by a stable hash of the kernel and the case's specialization (its params
without the dynamic args), so different cases cover different configs, the cases that
share a specialization share a compile, and every machine picks the same config for the
same case. The perf pass runs unpinned, so it times what autotuning picks.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from parity.compile.counter import innermost_name


def autotuners(kernels: Iterable[Any]) -> list[Any]:
    """The Autotuner objects inside each kernel's decorator chain (heuristics, autotune, jit)."""
    from triton.runtime.autotuner import Autotuner

    found = []
    for kernel in kernels:
        obj = kernel
        while obj is not None:
            if isinstance(obj, Autotuner):
                found.append(obj)
                break
            obj = getattr(obj, "fn", None)
    return found


MAX_SHIFTS = 8  # configs tried, in rotation, before a launch gives up on out-of-resources


def pick(configs: list[Any], name: str, specialization: str, shift: int = 0) -> int:
    digest = hashlib.sha256(f"{name}/{specialization}".encode()).digest()
    return (int.from_bytes(digest[:8], "little") + shift) % len(configs)


def is_out_of_resources(exc: BaseException) -> bool:
    """The device cannot hold this config (shared memory, registers): the Autotuner skips such configs."""
    return type(exc).__name__ == "OutOfResources" or "out of resource" in str(exc)


def specialization_key(params: Mapping[str, Any], dynamic_args: Iterable[str]) -> str:
    dynamic = set(dynamic_args)
    return ",".join(f"{k}={params[k]}" for k in sorted(params) if k not in dynamic)


def interpretable(config: Any) -> Any:
    """The config as triton's interpreter can launch it.

    Triton 3.2's Config carries Hopper warp-specialization fields (num_buffers_warp_spec,
    num_consumer_groups, reg_dec_producer, reg_inc_consumer, 0 by default) that its interpreter
    does not reserve, so every autotuned kernel fails under TRITON_INTERPRET=1 with "got an
    unexpected keyword argument 'num_buffers_warp_spec'". A copy without them (None drops a field
    from Config.all_kwargs) runs the kernel; compiled tiers keep the config as it is.
    """
    if os.environ.get("TRITON_INTERPRET") != "1":
        return config
    from triton.runtime import interpreter

    reserved = getattr(interpreter, "RESERVED_KWS", None)
    if reserved is None or not hasattr(config, "all_kwargs"):
        return config
    extra = [k for k in config.all_kwargs() if k not in reserved and k not in config.kwargs]
    if not extra:
        return config
    fixed = copy.copy(config)
    for key in extra:
        setattr(fixed, key, None)
    return fixed


def _pin(tuner: Any, specialization: str, shift: int, saved: list[tuple[Any, list[Any]]],
         picks: dict[str, str]) -> None:
    configs = list(tuner.configs)
    if len(configs) <= 1:
        if configs and interpretable(configs[0]) is not configs[0]:
            saved.append((tuner, tuner.configs))
            tuner.configs = [interpretable(configs[0])]
        return
    name = innermost_name(tuner)
    chosen = configs[pick(configs, name, specialization, shift)]
    saved.append((tuner, tuner.configs))
    tuner.configs = [interpretable(chosen)]  # one config: the Autotuner launches it without timing
    picks[name] = str(chosen)


@contextlib.contextmanager
def pinned(kernels: Iterable[Any], specialization: str, shift: int = 0) -> Iterator[dict[str, str]]:
    """Inside, each autotuned kernel has one config; yields {kernel name: the config}.

    The spec's kernels are pinned up front; any other Autotuner the launch reaches (a library's
    helpers, which a spec rarely lists) is pinned the same way when it first runs, so an accuracy
    pass never re-runs a library's own autotuning. `shift` moves every pick to the next config in
    its list (after an out-of-resources launch).
    """
    from parity.seams.jit import autotuner_run

    saved: list[tuple[Any, list[Any]]] = []
    picks: dict[str, str] = {}
    handled: set[int] = set()

    def run_pinned(inner: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
        if id(self) not in handled:
            handled.add(id(self))
            _pin(self, specialization, shift, saved, picks)
        return inner(self, *args, **kwargs)

    try:
        for tuner in autotuners(kernels):
            handled.add(id(tuner))
            _pin(tuner, specialization, shift, saved, picks)
        with autotuner_run().layer(run_pinned):
            yield picks
    finally:
        for tuner, configs in reversed(saved):
            tuner.configs = configs


def pinned_case(spec: Any, params: Mapping[str, Any],
                shift: int = 0) -> contextlib.AbstractContextManager[dict[str, str]]:
    """`pinned` for a KernelSpec's kernels at a case's specialization: what the accuracy pass and
    the repro capture both pin, so a repro replays the config that failed."""
    return pinned(spec.kernels, specialization_key(params, spec.dynamic_args), shift)
