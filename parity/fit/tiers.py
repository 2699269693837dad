"""The FitTier of each compile tier: how it probes a candidate and which option changes it offers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parity.fit.hook import FitTier
from parity.fit.probe import ascend_probe, cuda_probe


def ascend_offers(options: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Auto multi-buffer (on by default) doubles the buffers it pipelines; off is the one UB knob."""
    return {"multibuffer": [False]} if options.get("multibuffer") else {}


def cuda_offers(options: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Each pipeline stage holds another copy of the tiles in shared memory: two fewer at most."""
    stages = int(options.get("num_stages") or 1)
    return {"num_stages": list(range(stages - 1, 0, -1))[:2]} if stages > 1 else {}


SEARCH_MARGIN_S = 50.0  # left of a case's timeout when its search stops starting compiles (a probe: 40 s)


def ascend(tier: str, driver: Any, case_started: float, case_timeout_s: float) -> FitTier:
    """The search runs inside the case's compile child, so it stops in time for the case's own timeout; `tier`
    is the calling backend's name."""
    return FitTier(tier, driver.arch.name, "bits", driver.arch.ub_bits, ascend_offers,
                   lambda src, target, options, config: ascend_probe(driver, src, target, options, config),
                   deadline=case_started + case_timeout_s - SEARCH_MARGIN_S)


def cuda(backend: Any, original_compile: Any) -> FitTier:
    arch = backend.driver.arch
    return FitTier(backend.name, f"sm_{backend.arch}", "bytes", arch.max_shared_bytes, cuda_offers,
                   lambda src, target, options, config: cuda_probe(backend, original_compile, src, target, options,
                                                                   config))
