"""One case end to end: inputs → reference → device → launch → compare → record."""

from __future__ import annotations

import inspect
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

import torch

from parity.backends.base import Backend
from parity.compile.ascend_only import launch_finding
from parity.compile.counter import CompileCounter
from parity.errors import error_text, input_error, raised_at, skip_reason
from parity.results import Record, Status, empty_record
from parity.results.outputs_store import input_digest
from parity.run import autotune_pin, mistakes, prefill, redzone, rounding, second_reference
from parity.run.compare import Metrics, compare, worst_of
from parity.run.faults import is_sticky_device_error
from parity.run.refcache import ReferenceCache, input_hash
from parity.spec import Case, KernelSpec, Tolerance
from parity.spec import inputs as inp
from parity.spec.context import backend_scope


def build_inputs(spec: KernelSpec, case: Case, seed: int) -> dict[str, Any]:
    """The CPU inputs of a case; identical on every machine for the same seed."""
    return spec.make_inputs(case.params, inp.generator(inp.case_seed(seed, spec.name, case.id)))


def reference_outputs(spec: KernelSpec, case: Case, cpu_inputs: Mapping[str, Any],
                      cache: ReferenceCache) -> dict[str, torch.Tensor]:
    key = input_hash(spec.name, spec.reference, cpu_inputs, case.params)
    cached = cache.get(key)
    if cached is not None:
        return cached
    ref = {k: v.to(torch.float64) if v.is_floating_point() else v
           for k, v in spec.reference(inp.as_fp64(cpu_inputs), case.params).items()}
    cache.put(key, ref)
    return ref


def reference_raised(spec: KernelSpec, exc: BaseException, part: str = "reference") -> str:
    """The reason of a case whose spec code raised (`part`: its "reference" or its "make_inputs"): where (the
    innermost frame outside parity, torch and triton, else that function's own definition) and what, and that no
    launch was judged."""
    what = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1][:400]
    where = raised_at(exc) or _defined_at(getattr(spec, part))
    runs = "it runs in fp64 on the CPU" if part == "reference" else "it builds the case's inputs on the CPU"
    return (f"the spec's {part} raised at {where}: {what}; the kernel was not launched or judged: fix the "
            f"{part} of {spec.name} ({runs}) and run the case again")


def _defined_at(fn: Any) -> str:
    code = getattr(inspect.unwrap(fn), "__code__", None) or getattr(type(fn).__call__, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}, in {code.co_name}" if code else repr(fn)[:120]


def compare_outputs(spec: KernelSpec, case: Case, outputs: Mapping[str, torch.Tensor],
                    ref: Mapping[str, torch.Tensor], tol: Tolerance,
                    where: Callable[[int], str] = lambda numel: "cpu",
                    device_outputs: Mapping[str, torch.Tensor] | None = None) -> list[Metrics]:
    """Metrics per output; `where(numel)` names the device that does the fp64 arithmetic.

    `outputs` are the CPU copies; `device_outputs`, where given, spare a big output's
    comparison on the device a copy back.
    """
    missing = sorted(set(ref) - set(outputs))
    if missing:
        raise ValueError(f"{spec.name}: launch returned {sorted(outputs)}, the reference also has {missing}")
    results = []
    for name, ref_t in ref.items():
        valid = valid_mask(spec, case, name, ref_t)
        device = where(ref_t.numel())
        out = device_outputs[name] if device_outputs is not None and device != "cpu" else outputs[name]
        results.append(compare(out, ref_t, tol, spec.out_dims.get(name), valid, name, device))
    return results


def valid_mask(spec: KernelSpec, case: Case, name: str, ref_t: torch.Tensor) -> torch.Tensor | None:
    """The elements of output `name` the spec compares (KernelSpec.valid), or None for all of them."""
    return spec.valid(name, case.params, ref_t.shape) if spec.valid else None


def _as_outputs(spec: KernelSpec, value: Any) -> dict[str, torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return {"out": value}
    if not isinstance(value, Mapping) or not value:
        raise TypeError(f"{spec.name}: launch must return a dict of output tensors, got {type(value).__name__}")
    return dict(value)


def launch_pinned(spec: KernelSpec, case: Case, dev_inputs: Mapping[str, Any], backend: Backend,
                   record: Record) -> dict[str, torch.Tensor]:
    """Launch with each autotuned kernel pinned to one config (parity.run.autotune_pin).

    A config the device cannot hold (OutOfResources) is skipped for the next one, as the
    Autotuner itself would skip it; the skipped ones are recorded.
    """
    skipped: list[str] = []
    for shift in range(autotune_pin.MAX_SHIFTS):
        with autotune_pin.pinned_case(spec, case.params, shift) as picks:
            try:
                outputs = _as_outputs(spec, spec.launch(dev_inputs, case.params))
                backend.synchronize()
            except Exception as exc:
                if not picks or not autotune_pin.is_out_of_resources(exc):
                    raise
                skipped.append(f"{picks}: {error_text(exc, 200)}")
                continue
            finally:  # after the launch: autotuners the spec does not list are pinned as it reaches them
                record["autotune_pinned"] = dict(picks) or None
        if skipped:
            record["autotune_skipped"] = skipped
        return outputs
    raise RuntimeError(f"every pinned autotune config ran out of resources: {skipped}")


def memory_skip(spec: KernelSpec, case: Case, backend: Backend) -> str | None:
    """Why a case cannot run on this backend (its library is missing, or it needs a bigger device), or None."""
    missing = spec.unavailable() if spec.unavailable is not None else None
    if missing:
        return missing
    if spec.device_gib is None:
        return None
    need = spec.device_gib(case.params)
    if need is None:
        return None
    have = backend.memory_gib()
    if have is None:
        return (f"needs a device with {need:.1f} GiB of memory; backend {backend.name} runs on the host "
                f"(run it with nox -s cuda or nox -s ascend)")
    if have < need:
        return f"needs {need:.1f} GiB of device memory; {backend.device} has {have:.1f} GiB"
    return None


def run_case(spec: KernelSpec, case: Case, backend: Backend, *, seed: int,
             cache: ReferenceCache) -> tuple[Record, dict[str, torch.Tensor] | None]:
    """Run one case and return its results record and its outputs (on the CPU)."""
    record = empty_record(backend.name, backend.mode, spec.name, case.id, dict(case.params))
    record["suite"] = "accuracy"
    if backend.scope:
        record["scope"] = backend.scope  # e.g. ascend-lowered: a pass checks the lowering, not the NPU
    tol = spec.tolerance_for(case.params)
    record["tolerance"] = tol.as_dict()
    timing = record["timing"]
    t0 = time.perf_counter()
    try:
        cpu_inputs = build_inputs(spec, case, seed)
    except Exception as exc:  # a damaged bundle, or the spec's own make_inputs: an `error`, never a missing record
        if (bad := input_error(exc)) is None:
            record.update({"status": Status.ERROR, "error_kind": "inputs",
                           "reason": reference_raised(spec, exc, "make_inputs")})
            return record, None
        kind: str = getattr(bad, "parity_error_kind", "")  # a str: input_error found it so
        record.update({"status": Status.ERROR, "error_kind": kind, "reason": error_text(bad)})
        return record, None
    record["input_digest"] = input_digest(cpu_inputs)  # proves inputs match across backends
    timing["inputs_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:
        ref = reference_outputs(spec, case, cpu_inputs, cache)
    except Exception as exc:  # the spec's own code: an `error` of the case, owned by its author, never a gap
        timing["ref_s"] = time.perf_counter() - t0
        record.update({"status": Status.ERROR, "error_kind": "reference", "reason": reference_raised(spec, exc)})
        return record, None
    timing["ref_s"] = time.perf_counter() - t0
    # a library's own golden against our fp64 reference: before the launch, whatever the kernel does
    second, gold = second_reference.cross_check(spec.reference, inp.as_fp64(cpu_inputs), case.params, ref)
    if second is not None:
        record["second_reference"] = second

    outputs: dict[str, torch.Tensor] | None = None
    zones: redzone.RedZones | None = None
    t0 = time.perf_counter()
    try:
        dev_inputs = inp.to_device(cpu_inputs, backend.device)
        # what the launcher allocates itself starts as NaN too, on run tiers (parity.run.prefill)
        # on a CPU tier every tensor a launch reaches lies between red zones (parity.run.redzone)
        with CompileCounter() as counter, backend_scope(backend.name), backend.presented() as present, \
                prefill.launcher_allocations(backend.mode) as filled, redzone.guarded_launches(backend) as zones:
            dev_outputs = launch_pinned(spec, case, present(dev_inputs), backend, record)
        record["launcher_allocs_filled"] = filled.count if filled is not None else None
        if zones is not None and (summary := zones.summary()) is not None:
            record["oob"] = summary
        outputs = {k: v.detach().cpu() for k, v in dev_outputs.items()}
    except Exception as exc:  # a kernel or compiler error is a result, not a crash of the suite
        timing["run_s"] = time.perf_counter() - t0
        skip = skip_reason(exc)
        if skip is not None:  # the backend cannot run this kernel (e.g. an op its CPU pipeline lacks)
            record["status"], record["reason"] = Status.SKIPPED, skip
            return record, None
        if mark_declined(spec, exc, record):  # the library's own guard: no finding, no repro
            return record, None
        # a launch option this Triton rejects (triton-ascend's multibuffer= on upstream) is named as such
        launch = launch_finding(exc)
        reason = launch or error_text(exc)
        if launch:
            record["error_kind"] = "launch_option"
        record["status"] = Status.CRASHED if is_sticky_device_error(reason) else Status.ERROR
        record["reason"] = reason
        if zones is not None and (summary := zones.summary()) is not None:  # it wrote out of bounds before it raised
            record["oob"] = summary
            record["reason"] = f"{zones.reason()}; then: {reason}"
        _diagnose(spec, exc, record)
        timing["run_s"] = time.perf_counter() - t0
        return _apply_divergence(spec, case, backend, record), None
    timing["run_s"] = time.perf_counter() - t0
    if second is not None:
        second_reference.note_kernel(second, gold, outputs)
    if backend.mode != "interpret":  # the interpreter has no compile hooks
        # every compile of the launch, also of a kernel the library generated in it (no spec can list
        # that one: FlagGems' pointwise_dynamic), with what compiled by name and defining file
        record["compiles"], record["compiled_kernels"] = counter.count(), counter.compiled_kernels()
        timing["compile_s"] = counter.compile_seconds()

    t0 = time.perf_counter()
    per_output = compare_outputs(spec, case, outputs, ref, tol, backend.compare_device, dev_outputs)
    worst = worst_of(per_output)
    metrics = record["metrics"] = worst.as_dict()
    metrics["per_output"] = {m.output: {"err_ratio": m.err_ratio, "max_abs_err": m.max_abs_err, "passed": m.passed}
                             for m in per_output}
    failure = None if all(m.passed for m in per_output) else failure_reason(worst, tol)
    if failure is not None and not record.get("oob"):
        failure = _judge_rounding(spec, case, cpu_inputs, outputs, ref, tol, per_output, record, failure)
    if failure is None and spec.extra_check is not None:
        failure = spec.extra_check(inp.as_fp64(cpu_inputs), {k: v.double() for k, v in outputs.items()},
                                   case.params)
    timing["compare_s"] = time.perf_counter() - t0
    if record.get("oob"):  # the values may be right: the writes landed in a red zone, not in another tensor
        failure = "; ".join(x for x in (zones.reason() if zones is not None else None, failure) if x)
    record["status"] = Status.FAILED if failure else Status.PASSED
    record["reason"] = failure
    return _apply_divergence(spec, case, backend, record), outputs


def _judge_rounding(spec: KernelSpec, case: Case, cpu_inputs: Mapping[str, Any], outputs: Mapping[str, torch.Tensor],
                    ref: Mapping[str, torch.Tensor], tol: Tolerance, per_output: list[Metrics],
                    record: Record, failure: str) -> str | None:
    """The failure as the accumulation error model sees it (parity.run.rounding): None (a pass) where the spec chose
    no tolerance and every mismatch lies within a correct kernel's rounding; else the failure, with what the model
    found (a failure within it, under a tolerance the spec chose, is the tolerance's: parity.triage)."""
    judged = not spec.tolerance_chosen(case.params)
    model = rounding.judge_case(spec.reference, cpu_inputs, case.params, outputs, ref, tol,
                                [m.output for m in per_output if not m.passed],
                                lambda name, ref_t: valid_mask(spec, case, name, ref_t), judged)
    if model is None:
        return failure
    record["rounding"] = model
    if model.get("not_checked"):
        return f"{failure}; not checked against rounding: {model['not_checked']}"
    if model["within"] and judged:
        return None
    return f"{failure}; {model['sentence']}"


def failure_reason(m: Metrics, tol: Tolerance) -> str:
    if m.nan_count:
        return (f"output {m.output!r}: {m.nan_count} non-finite value(s) where the reference is finite "
                f"(or the reverse), first at {m.worst_index}; region: {m.region}")
    limit = (f"err_ratio {m.err_ratio:.3g} > {tol.max_err_ratio:g}" if tol.max_err_ratio is not None
             else f"{100 * m.mismatch_frac:.3g}% of elements outside atol={tol.atol:g} + rtol={tol.rtol:g}·|ref|")
    worst = (f"worst mismatch at {m.worst_index}: {m.worst_out:.6g} vs reference {m.worst_ref:.6g} "
             f"(|err| {abs(m.worst_out - m.worst_ref):.3g})"
             if m.worst_out is not None and m.worst_ref is not None else f"worst at {m.worst_index}")
    return f"output {m.output!r}: {limit}; {worst}; max_abs_err {m.max_abs_err:.3g} overall; region: {m.region}"


def mark_declined(spec: KernelSpec, exc: BaseException, record: Record) -> bool:
    """Skip the record when the error is a guard its library raises on purpose (KernelSpec.declines)."""
    if not spec.declines:
        return False
    text = "\n".join(error_text(e, 4000) for e in (exc, exc.__cause__) if e is not None)
    declined = spec.declined(text)
    if declined is None:
        return False
    record["status"], record["reason"] = Status.SKIPPED, declined.note(error_text(exc))
    record["declined"] = {"library": declined.library, "reason": declined.reason, "link": declined.link}
    return True


def _diagnose(spec: KernelSpec, exc: BaseException, record: Record) -> None:
    """Name a classic kernel mistake behind the error in plain words (parity.run.mistakes)."""
    # the interpreter wraps the real error; its own text carries the useful message
    full = "\n".join(error_text(e, 4000) for e in (exc, exc.__cause__) if e is not None)
    diagnosis = mistakes.diagnose(full, spec.kernels)
    if diagnosis is not None:
        record["diagnosis"] = diagnosis
        record["reason"] = mistakes.explain(diagnosis, record["reason"])


def _apply_divergence(spec: KernelSpec, case: Case, backend: Backend, record: Record) -> Record:
    known = spec.divergence_for(backend.name, case.params)
    if known is None:
        return record
    note = f"known divergence: {known.reason} ({known.link})"
    record["known_divergence"] = {"reason": known.reason, "link": known.link,  # REPORT.md shows it apart
                                 "expected_by": known.expected_by}
    if record["status"] in (Status.FAILED, Status.ERROR):
        record["status"], record["reason"] = Status.XFAILED, f"{note}; observed: {record['reason']}"
    elif record["status"] is Status.PASSED:
        record["status"], record["reason"] = Status.XPASSED, note
    return record
