"""One perf case on the device: check it once against fp64, then time it beside its baseline and peer.

Perf cases are the shapes users run (KernelSpec.perf_cases), far larger than accuracy cases, so
the fp64 reference runs on the device (torch.device context: the references' factory calls land
there too); a reference on the CPU at 2^28 elements or 8192³ would take minutes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import torch

from parity.backends.base import Backend
from parity.errors import error_text
from parity.perf import figures as perf
from parity.perf import roofline
from parity.results import Record, Status, empty_record
from parity.results.record import Timing
from parity.run.compare import worst_of
from parity.run.runner import build_inputs, compare_outputs, failure_reason, mark_declined, memory_skip
from parity.spec import Case, KernelSpec
from parity.spec import inputs as inp
from parity.spec.context import backend_scope

SUITE = "perf"


def fp64_on(values: Mapping[str, Any]) -> dict[str, Any]:
    """Floating tensors as fp64 where they already are (the device); others unchanged."""
    return {k: v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
            for k, v in values.items()}


def device_inputs(spec: KernelSpec, case: Case, seed: int, device: str) -> tuple[dict[str, Any], str]:
    """(inputs, where they were made): on the device from a device generator seeded as the case's CPU one.

    At perf sizes the CPU would take minutes (2^28 normal samples, or the GDN fp64 pipeline at
    T=65536 that several kernels' inputs come from). These inputs are reproducible on one kind of
    device, not bit-identical across backends, which perf figures do not need. A make_inputs that
    cannot build on the device falls back to the CPU.
    """
    if device != "cpu":
        try:
            gen = torch.Generator(device=device).manual_seed(inp.case_seed(seed, spec.name, case.id))
            with torch.device(device):
                return inp.to_device(spec.make_inputs(case.params, gen), device), device
        except Exception:  # e.g. a CPU-only step in make_inputs; the slow path still works
            pass
    return inp.to_device(build_inputs(spec, case, seed), device), "cpu"


def check(spec: KernelSpec, case: Case, dev_inputs: Mapping[str, Any], outputs: Mapping[str, torch.Tensor],
          device: str) -> tuple[dict[str, Any], str | None]:
    """(metrics, failure or None) of the outputs against the fp64 reference computed on `device`."""
    reference = spec.perf_reference or spec.reference
    with torch.device(device):
        ref = {k: v.to(torch.float64) if v.is_floating_point() else v
               for k, v in reference(fp64_on(dev_inputs), case.params).items()}
    tol = spec.tolerance_for(case.params)
    per_output = compare_outputs(spec, case, outputs, ref, tol, lambda numel: device, outputs)
    worst = worst_of(per_output)
    failure = None if all(m.passed for m in per_output) else failure_reason(worst, tol)
    return worst.as_dict(), failure


def time_optional(time_ms: Callable[[Callable[[], Any]], float], make: Callable[[], Callable[[], Any]] | None,
                  ) -> tuple[float | None, str | None]:
    """(ms, None) or (None, why not): a broken baseline or peer must not cost the kernel its figures."""
    if make is None:
        return None, None
    try:
        fn = make()
        fn()  # compile, autotune or load outside the timed region
        return time_ms(fn), None
    except Exception as exc:
        return None, error_text(exc, 300)


def run_perf_case(spec: KernelSpec, case: Case, backend: Backend, *, seed: int,
                  roof: roofline.Roof | None, declined: Record | None = None) -> Record:
    """The results record of one perf case (suite "perf"): status from the fp64 check, `perf` figures.

    `declined`: an accuracy record of this op that its library declined (KernelSpec.declines); the
    perf case is then skipped with the same reason instead of running into the same guard.
    """
    p = case.params
    record = empty_record(backend.name, backend.mode, spec.name, case.id, dict(p))
    record["suite"] = SUITE
    record["tolerance"] = spec.tolerance_for(p).as_dict()
    skip = memory_skip(spec, case, backend)
    if skip:
        record["status"], record["reason"] = Status.SKIPPED, skip
        return record
    if declined:
        record["status"], record["reason"] = Status.SKIPPED, declined["reason"]
        record["declined"] = declined["declined"]
        return record
    timing = record["timing"]
    t0 = time.perf_counter()
    dev_inputs, record["inputs_made_on"] = device_inputs(spec, case, seed, backend.device)
    timing["inputs_s"] = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        with backend_scope(backend.name):
            outputs = dict(spec.launch(dev_inputs, p))  # NaN-prefilled: unwritten elements fail the check
        backend.synchronize()
        timing["run_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        record["metrics"], record["reason"] = check(spec, case, dev_inputs, outputs, backend.device)
        record["status"] = Status.FAILED if record["reason"] else Status.PASSED
        timing["ref_s"] = time.perf_counter() - t0
        del outputs
        record["perf"] = measure(spec, case, dev_inputs, backend, roof, timing)
    except Exception as exc:  # a kernel or reference error is a result, not the end of the perf pass
        if not mark_declined(spec, exc, record):
            record["status"], record["reason"] = Status.ERROR, error_text(exc)
    return record


def measure(spec: KernelSpec, case: Case, dev_inputs: Mapping[str, Any], backend: Backend,
            roof: roofline.Roof | None, timing: Timing | None = None) -> dict[str, Any]:
    """Kernel, baseline and peer times and the roofline figures; output buffers skip their NaN prefill.
    `timing` gets the seconds each of the three took to time (autotuning included)."""
    p = case.params
    spent: Timing = timing if timing is not None else {}
    with inp.unfilled(), backend_scope(backend.name):
        t0 = time.perf_counter()
        ms = backend.time_ms(lambda: spec.launch(dev_inputs, p))
        t1 = time.perf_counter()
        baseline = spec.baseline
        base_ms, base_err = time_optional(backend.time_ms, (lambda: lambda: baseline(dev_inputs, p))
                                          if baseline else None)
        t2 = time.perf_counter()
        peer = spec.peer
        peer_skip = peer.unavailable() if peer is not None else None
        peer_ms, peer_err = time_optional(backend.time_ms, (lambda: peer.prepare(dev_inputs, p))
                                          if peer is not None and not peer_skip else None)
        spent.update({"kernel_timing_s": t1 - t0, "baseline_timing_s": t2 - t1,
                      "peer_timing_s": time.perf_counter() - t2})
    n_bytes = spec.bytes(p) if spec.bytes else None
    n_flops = spec.flops(p) if spec.flops else None
    out: dict[str, Any] = {"ms": ms, "baseline_ms": base_ms, "device": backend.device,
                           **roofline.figures(n_bytes, n_flops, ms, roof, p.get("dtype"), spec.bound)}
    out["pct_of_peak"] = out["pct_of_datasheet"]  # the results contract's name for the datasheet share
    if base_err:
        out["baseline_error"] = base_err
    if peer is not None:
        out.update(peer=peer.library, peer_ms=peer_ms)
        if peer_skip or peer_err:
            out["peer_skipped" if peer_skip else "peer_error"] = peer_skip or peer_err
    if spec.perf_target is not None:
        out["target"] = spec.perf_target.as_dict()
    if roof is not None:
        out["roof_measured"] = roof.as_dict()
    return out


def measure_case(spec: KernelSpec, case: Case, backend: Backend, *, seed: int) -> dict[str, Any]:
    """Kernel and torch-baseline times with roofline figures, for a case that already passed.

    Runs after the accuracy pass, one case at a time, so no other work shares the device.
    Output buffers skip their NaN prefill here: the fill is the harness's, not the kernel's.
    """
    p = case.params
    dev_inputs = inp.to_device(build_inputs(spec, case, seed), backend.device)
    base = spec.baseline
    baseline = (lambda: base(dev_inputs, p)) if base else None
    with inp.unfilled():
        spec.launch(dev_inputs, p)  # compile and autotune outside the timed region
        backend.synchronize()
        return perf.measure(backend.time_ms, lambda: spec.launch(dev_inputs, p), baseline,
                            spec.bytes(p) if spec.bytes else None, spec.flops(p) if spec.flops else None,
                            backend.device_name(), p.get("dtype"))
