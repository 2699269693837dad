"""Speed figures of accuracy cases: kernel and baseline time, bandwidth and throughput, share of peak.

Peaks are data; a device missing here simply gets no "% of peak".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parity.perf.roofline import DATASHEETS

# Vendor datasheet figures (parity.perf.roofline.DATASHEETS, without their sources): HBM in GB/s,
# math in TFLOP/s by input dtype.
PEAKS: dict[str, dict[str, float]] = {name: {k: v for k, v in sheet.items() if k != "source"}
                                      for name, sheet in DATASHEETS.items()}


def roofline(n_bytes: float | None, n_flops: float | None, ms: float, peak: Mapping[str, float] | None,
             dtype: str | None) -> dict[str, float | None]:
    """GB/s, TFLOP/s and the larger of the two shares of the device's peak (in percent)."""
    gbps = n_bytes / ms / 1e6 if n_bytes and ms > 0 else None
    tflops = n_flops / ms / 1e9 if n_flops and ms > 0 else None
    shares = []
    if peak:
        if gbps is not None and peak.get("hbm_gbps"):
            shares.append(100 * gbps / peak["hbm_gbps"])
        math_peak = peak.get(f"{dtype}_tflops") if dtype else None
        if tflops is not None and math_peak:
            shares.append(100 * tflops / math_peak)
    return {"gbps": gbps, "tflops": tflops, "pct_of_peak": max(shares) if shares else None}


def measure(time_ms: Callable[[Callable[[], Any]], float], launch: Callable[[], Any],
            baseline: Callable[[], Any] | None, n_bytes: float | None, n_flops: float | None,
            device_name: str | None, dtype: str | None) -> dict[str, float | str | None]:
    """The perf block of a results record; the timer is the backend's (do_bench with an L2 flush on cuda)."""
    ms = time_ms(launch)
    baseline_ms, baseline_error = None, None
    if baseline is not None:
        try:
            baseline_ms = time_ms(baseline)
        except Exception as exc:  # a broken baseline must not cost the kernel its figures
            baseline_error = f"{type(exc).__name__}: {exc}"[:300]
    return {"ms": ms, "baseline_ms": baseline_ms, **({"baseline_error": baseline_error} if baseline_error else {}),
            **roofline(n_bytes, n_flops, ms, PEAKS.get(device_name or ""), dtype)}


def case_size(bytes_fn: Callable[[Mapping[str, Any]], float] | None,
              flops_fn: Callable[[Mapping[str, Any]], float] | None, params: Mapping[str, Any]) -> float:
    """How much work a case is, for picking the one worth timing: bytes moved, else flops."""
    if bytes_fn is not None:
        return float(bytes_fn(params))
    if flops_fn is not None:
        return float(flops_fn(params))
    return 0.0


def pick_cases(candidates: Sequence[tuple[str, str, Mapping[str, Any], float]], mode: str) -> list[tuple[str, str]]:
    """(kernel, case id) to time from (kernel, case id, params, size) of the cases that passed.

    "largest" keeps one case per kernel and dtype, the biggest: timing a 37-element case measures
    launch latency, not the kernel. "all" keeps every one. Ties keep the earliest case.
    """
    if mode == "all":
        return [(k, c) for k, c, _, _ in candidates]
    if mode != "largest":
        return []
    best: dict[tuple[str, Any], tuple[float, str]] = {}
    for kernel, case, params, size in candidates:
        key = (kernel, params.get("dtype"))
        if key not in best or size > best[key][0]:
            best[key] = (size, case)
    return [(kernel, case) for (kernel, _), (_, case) in best.items()]
