"""Where a compile tier calls in: after a case's launch, every overflowing compile gets its `fit`.

The tier hands over its compile dicts with the (source, target, options) each was compiled from and a
FitTier that says how to probe one candidate and what counts as an overflow. Compiles of one kernel and
heuristic variant share one search. `PARITY_NO_FIT=1` (the `--no-fit` option) turns it off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from parity import settings
from parity.fit import cache, candidates, search
from parity.fit.probe import kernel_text, named_constants
from parity.results import Fit

OVERFLOW_KINDS = ("ub_overflow", "cc_overflow", "cbuf_overflow", "out_of_resources")


@dataclass(frozen=True)
class FitTier:
    name: str  # the tier, e.g. "ascend-compile"
    arch: str
    unit: Literal["bits", "bytes"]  # "bits" (Ascend's buffers) or "bytes" (CUDA's shared memory)
    capacity: int | None
    # the compile-option changes worth trying, given the failing compile's options
    offers: Callable[[Mapping[str, Any]], dict[str, list[Any]]]
    # (source, target, options, config) -> outcome, run in a forked child
    probe: Callable[[Any, Any, Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]
    # time.monotonic() by which the search must be done: the case's own timeout, less a margin
    deadline: float | None = None


def turn_off() -> None:
    """--no-fit: a setting, which forked compile children inherit and spawned ones get through
    parity.settings.child_env (xdist workers parse the same option)."""
    settings.configure(no_fit=True)


def disabled() -> bool:
    return settings.current().no_fit


def overflowed(compile_: Mapping[str, Any]) -> bool:
    kind = compile_.get("error_kind") or ""
    return kind in OVERFLOW_KINDS or kind.endswith("_overflow")


def autotune_configs(kernels: Iterable[Any], kernel: str) -> list[dict[str, Any]]:
    """The autotune configs of the kernel named `kernel`, as flat dicts (kwargs plus warps and stages)."""
    from parity.compile.counter import kernel_name
    from parity.compile.tools import autotuners, varied_options

    found = []
    for tuner in autotuners([k for k in kernels if kernel_name(k) == kernel]):
        knobs = varied_options(tuner.configs)  # triton-ascend's bishengir options, where the configs vary them
        for config in tuner.configs:
            flat = dict(config.kwargs)
            flat.update({k: v for k, v in config.all_kwargs().items() if k in knobs})
            flat.update({k: getattr(config, k) for k in ("num_warps", "num_stages") if getattr(config, k, None)})
            if flat not in found:  # a library's tuner above triton's lists the same configs again
                found.append(flat)
    return found


def _project(config: Mapping[str, Any], keys: Iterable[str]) -> str:
    return candidates.label({k: config[k] for k in keys if k in config})


def search_one(failing: Mapping[str, Any], source: tuple[Any, Any, Mapping[str, Any]],
               siblings: Sequence[Mapping[str, Any]], kernels: Iterable[Any], tier: FitTier) -> Fit:
    """The fit of one overflowing compile; `siblings` are the case's other compiles of the kernel and variant."""
    t0 = time.monotonic()
    src, target, options = source
    named = named_constants(src)
    own = autotune_configs(kernels, failing["kernel"])
    # every key an autotune config sets, warps and stages too: configs that differ only in stages are distinct
    own_keys = sorted({k for c in own for k in c})
    offers = tier.offers(options)
    base = {k: v for k, v in named.items() if candidates.is_block_name(k)}
    base.update({k: options[k] for k in offers if k in options})
    # the case's own launch compiled these already, on this tier and arch: proof enough. A fit without its
    # figure (bishengir prints UB use only on overflow) is compiled again by the probe, which reads the plan
    known = {_project(s["config"], own_keys): o for s in siblings
             if s.get("config") and own_keys and set(own_keys) <= set(s["config"])
             and ((o := _outcome(s, tier))["used"] is not None or not o["ok"])}
    text, signature = kernel_text(src), repr(sorted(named.items())) + repr(sorted(src.signature.items()))

    def key(config: Mapping[str, Any]) -> str:
        return cache.probe_key(tier.name, tier.arch, text, signature, config)

    def label(config: Mapping[str, Any]) -> str:  # an autotune config matches the case's compile of it
        own_config = own_keys and set(own_keys) <= set(config)
        return _project(config, own_keys) if own_config else "derived:" + candidates.label(config)

    budget_s = search.BUDGET_S if tier.deadline is None else min(search.BUDGET_S, tier.deadline - time.monotonic())
    done = search.run_search(
        candidates.ordered(own, base, offers), lambda c: tier.probe(src, target, options, c),
        known=known, cached=lambda c: cache.read(key(c)), remember=lambda c, o: cache.write(key(c), o), label=label,
        budget_s=budget_s)
    fitting = [c for c, o in done if o.get("ok")]
    cap = None if own else search.launcher_cap(base, fitting, candidates.block_keys(base))
    rows = [] if fitting or own or candidates.block_keys(base) else candidates.row_extents(text, named)
    if rows:  # nothing to halve: the kernel loads its problem whole; would a block of its rows fit?
        splits = search.run_search(
            candidates.row_splits(named, rows), lambda c: tier.probe(src, target, options, c),
            cached=lambda c: cache.read(key(c)), remember=lambda c, o: cache.write(key(c), o), enough=1,
            budget_s=max(0.0, budget_s - (time.monotonic() - t0)), label=candidates.label)
        cap = search.row_advice(named, rows, splits, tier.unit)
    need = failing.get("ub_bits") if tier.unit == "bits" else failing.get("shared_bytes")
    return search.fit_record(done, tier.arch, tier.unit, tier.capacity, need, cap, time.monotonic() - t0)


def _outcome(compile_: Mapping[str, Any], tier: FitTier) -> dict[str, Any]:
    used = compile_.get("ub_bits") if tier.unit == "bits" else compile_.get("shared_bytes")
    return {"ok": bool(compile_.get("ok")) and not compile_.get("launch_error"), "used": used,
            "of": tier.capacity, "error_kind": compile_.get("error_kind")}


def attach(compiles: Sequence[dict[str, Any]], sources: Sequence[tuple[Any, Any, Mapping[str, Any]] | None],
           kernels: Iterable[Any], tier: FitTier) -> None:
    """Give every overflowing compile its `fit`; one search per kernel and variant, shared by its compiles."""
    if disabled():
        return
    kernels = list(kernels)
    answers: dict[str, Fit] = {}
    for compile_, source in zip(compiles, sources, strict=True):
        if source is None or not overflowed(compile_):
            continue
        group = compile_["kernel"] + repr(sorted((compile_.get("variant") or {}).items()))
        if group not in answers:
            siblings = [c for c in compiles if c["kernel"] == compile_["kernel"]
                        and c.get("variant") == compile_.get("variant")]
            answers[group] = search_one(compile_, source, siblings, kernels, tier)
        compile_["fit"] = answers[group]
