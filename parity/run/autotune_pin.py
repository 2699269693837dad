"""Accuracy runs pin every autotuned kernel to one of its configs instead of timing them all.

Autotuning inside an accuracy pass costs a compile and a benchmark of every config for
every new key, in every xdist worker, and then checks only the winner. Pinning checks a
config chosen by a stable hash of the kernel and what makes Triton build a new binary for
the launch (its constexpr values, tensor dtypes and integer specializations: `binary_key`),
plus one of CONFIGS_PER_BINARY buckets drawn from the case's specialization (its params
without the dynamic args). So different binaries cover different configs, the cases that
would share a binary share at most CONFIGS_PER_BINARY compiles of it (a case's batch size
or scale no longer buys a compile of its own), and every machine picks the same config for
the same case. The perf pass runs unpinned, so it times what autotuning picks.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from parity.compile.counter import innermost_name
from parity.seams.env import interpreting


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
    if not interpreting():
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


CONFIGS_PER_BINARY = 2  # configs one binary is checked with across the cases that share it


def _int_class(value: int, not_specialized: bool) -> str:
    # Triton specializes an int on being 1 and on divisibility by 16, unless told not to
    if not_specialized:
        return "int"
    return "1" if value == 1 else "16k" if value % 16 == 0 else "int"


def _arg_class(value: Any, constexpr: bool, not_specialized: bool) -> str:
    if constexpr or value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, int):
        return _int_class(value, not_specialized)
    if isinstance(value, float):
        return "float"
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return f"*{dtype}"
    block = getattr(value, "block_shape", None)  # a tensor descriptor: its block is part of the binary
    return f"{type(value).__name__}{list(block) if block is not None else ''}"


def binary_key(tuner: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    """What makes Triton build a new binary for this launch, the config aside."""
    from parity.compile.counter import base_jit_function
    from parity.seams.jit import kernel_params

    named = dict(zip(getattr(tuner, "arg_names", ()), args, strict=False))
    named.update(kwargs)
    return ",".join(f"{name}={_arg_class(named[name], constexpr, dns)}"
                    for name, constexpr, dns in kernel_params(base_jit_function(tuner)) if name in named)


def bucket(specialization: str) -> int:
    return int.from_bytes(hashlib.sha256(specialization.encode()).digest()[:8], "little") % CONFIGS_PER_BINARY


def prunable(tuner: Any, configs: list[Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> list[Any]:
    """The configs the autotuner would time for this launch: its own early_config_prune, called as Triton calls
    it (the positional args by name, the rest as keywords), so a pin never picks a config the tuner drops
    (on the H200 a quarter of the pins that ran out of shared memory were configs the kernel's prune drops)."""
    prune = getattr(tuner, "early_config_prune", None)
    if prune is None or len(configs) <= 1:
        return configs
    try:
        kept = list(prune(configs, dict(zip(tuner.arg_names, args, strict=False)), **kwargs))
    except Exception:  # the prune's own error is the launch's to show, unpinned or not
        return configs
    return kept or configs


def _pin(tuner: Any, configs: list[Any], key: str, shift: int, picks: dict[str, str]) -> None:
    if len(configs) <= 1:  # one config (or the prune left one): set it, or the tuner would time its whole list
        if configs:
            tuner.configs = [interpretable(configs[0])]
        return
    name = innermost_name(tuner)
    chosen = configs[pick(configs, name, key, shift)]
    tuner.configs = [interpretable(chosen)]  # one config: the Autotuner launches it without timing
    earlier = picks.get(name)
    picks[name] = str(chosen) if earlier in (None, str(chosen)) else f"{earlier}; {chosen}"


@contextlib.contextmanager
def pinned(kernels: Iterable[Any], specialization: str, shift: int = 0) -> Iterator[dict[str, str]]:
    """Inside, each autotuned kernel runs one config; yields {kernel name: the config}.

    Every Autotuner a launch reaches is pinned when it runs, from the arguments it gets (`binary_key`):
    the spec's kernels and any other a launch reaches (a library's helpers, which a spec rarely lists),
    so an accuracy pass never re-runs a library's own autotuning. `shift` moves every pick to the next
    config in its list (after an out-of-resources launch).
    """
    from triton.runtime.autotuner import Autotuner

    from parity.seams.jit import autotuner_run

    originals: dict[int, tuple[Any, list[Any]]] = {}
    picks: dict[str, str] = {}
    salt = bucket(specialization)

    def run_pinned(inner: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
        configs = prunable(self, originals.setdefault(id(self), (self, list(self.configs)))[1], args, kwargs)
        _pin(self, configs, f"{binary_key(self, args, kwargs)}#{salt}", shift, picks)
        return inner(self, *args, **kwargs)

    classes = {Autotuner, *(type(t) for t in autotuners(kernels))}  # a library's tuner may define its own run
    try:
        with contextlib.ExitStack() as stack:
            for cls in classes:
                if "run" in cls.__dict__:
                    stack.enter_context(autotuner_run(cls).layer(run_pinned))
            yield picks
    finally:
        for tuner, configs in originals.values():
            tuner.configs = configs


def pinned_case(spec: Any, params: Mapping[str, Any],
                shift: int = 0) -> contextlib.AbstractContextManager[dict[str, str]]:
    """`pinned` for a KernelSpec's kernels at a case's specialization: what the accuracy pass and
    the repro capture both pin, so a repro replays the config that failed."""
    return pinned(spec.kernels, specialization_key(params, spec.dynamic_args), shift)
