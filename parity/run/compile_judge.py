"""A compile tier's verdict: each compile of a case judged against the spec's expectations, as results records."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from parity.backends import backend_class
from parity.compile.ascend_only import language_finding
from parity.compile.tools import COMPILE_KEYS
from parity.results import Record, Status, empty_record
from parity.run import mistakes
from parity.spec import Case, ExpectedCompileError, KernelSpec, format_value


def compile_label(compile_: Mapping[str, Any], with_kernel: bool) -> str:
    """The part a record's case id gets when a case compiled more than once."""
    parts = [f"kernel={compile_['kernel']}"] if with_kernel else []
    parts += [f"{k}={format_value(v)}" for k, v in {**compile_["variant"], **compile_["config"]}.items()]
    if compile_.get("error_kind") == "launch_option":  # the rejected launch, beside the retry's compile
        parts.append("launch")
    return ",".join(parts) or "compile"


def expected_error(spec: KernelSpec, backend: str) -> ExpectedCompileError | None:
    """The spec's expected compile error on this backend; `cuda` also covers `cuda-compile` (its target)."""
    names = {backend, backend_class(backend).target or backend}
    return next((e for e in spec.expected_compile_errors if e.backend in names), None)


def judge(compile_: Mapping[str, Any], expected: ExpectedCompileError | None) -> tuple[Status, str | None]:
    """(status, reason) of one compile: a record's verdict, before known divergences."""
    message = compile_.get("message") or ""
    if expected is not None:
        if compile_["ok"]:
            return Status.FAILED, (f"expected a compile error matching {expected.pattern!r} ({expected.reason}), "
                                   f"but it compiled to {compile_.get('stage_reached')}")
        if re.search(expected.pattern, message, re.IGNORECASE | re.DOTALL):
            return Status.PASSED, f"failed as expected ({expected.reason}): {message}"
        return Status.FAILED, (f"expected a compile error matching {expected.pattern!r}, got "
                               f"{compile_.get('error_kind')}: {message}")
    if compile_.get("error_kind") == "launch_option":
        return Status.FAILED, f"launch: {message}"
    if not compile_["ok"] and not compile_.get("error_kind"):  # the launcher raised, not a compiler
        return Status.FAILED, f"launch: {message}"
    if not compile_["ok"]:
        stage = compile_.get("stage_reached")
        where = f"after {stage}" if stage else "in the code generator, before any IR"
        ascend = language_finding(message)  # an Ascend-first kernel on upstream: say which extension
        return Status.FAILED, f"{compile_.get('error_kind')} {where}: {ascend + ': ' if ascend else ''}{message}"
    if compile_.get("launch_error"):
        return Status.FAILED, f"launch: {compile_['launch_error']}"
    return Status.PASSED, None


def compile_records(backend: str, spec: KernelSpec, case: Case,
                    compiles: Sequence[Mapping[str, Any]]) -> list[Record]:
    """One results record per compile of a case, judged against the spec's expectations.

    With more than one compile, each record's case id gets the kernel/variant/config after a `;`.
    A case that compiled nothing gets one `skipped` record, so every case is accounted for.
    """
    expected = expected_error(spec, backend)
    if not compiles:
        record = empty_record(backend, "compile", spec.name, case.id, dict(case.params))
        record.update({"suite": "compile", "compiles": 0, "status": Status.FAILED if expected else Status.SKIPPED,
                       "reason": "the launcher compiled no kernel for this case"})
        return [record]
    with_kernel = len({c["kernel"] for c in compiles}) > 1
    records: list[Record] = []
    for compile_ in compiles:
        case_id = case.id if len(compiles) == 1 else f"{case.id};{compile_label(compile_, with_kernel)}"
        record = empty_record(backend, "compile", spec.name, case_id, dict(case.params))
        record.update({"suite": "compile", "compiles": 1, "compile": {k: compile_.get(k) for k in COMPILE_KEYS},
                       "expected_compile_error": expected.pattern if expected else None})
        record["timing"]["compile_s"] = compile_.get("seconds")
        if compile_.get("fit"):  # the configs that fit, for an overflow (parity.fit)
            record["fit"] = compile_["fit"]
        if compile_.get("tf32_dots"):  # fp32 tl.dot compiled as TF32 (parity.backends.cuda.dot_precision)
            record["tf32_dots"] = compile_["tf32_dots"]
        if compile_.get("ascend_perf"):  # static performance advice (parity.backends.ascend.perf_rules)
            record["ascend_perf"] = compile_["ascend_perf"]
        record["status"], record["reason"] = judge(compile_, expected)
        why = spec.not_here(compile_.get("message") or "", case.params) if spec.not_here is not None else None
        if record["status"] is Status.FAILED and why:  # about where it runs, not the kernel: no finding, no owner
            record.update({"status": Status.SKIPPED, "reason": why, "compiles": 0})
            records.append(record)
            continue
        # an Ascend-only extension is named as such (ascend_only), never as a misspelt tl. function
        failed = record["status"] is Status.FAILED
        diagnosis = (mistakes.diagnose(compile_.get("message"), spec.kernels)
                     if failed and not language_finding(compile_.get("message") or "") else None)
        if diagnosis is not None:
            record["diagnosis"] = diagnosis
            record["reason"] = mistakes.explain(diagnosis, record["reason"])
        known = spec.divergence_for(backend, case.params)
        if known is not None and record["status"] in (Status.FAILED, Status.PASSED):
            note = f"known divergence: {known.reason} ({known.link})"
            record["known_divergence"] = {"reason": known.reason, "link": known.link,  # a field on every tier
                                         "expected_by": known.expected_by}
            record["status"] = Status.XFAILED if failed else Status.XPASSED
            record["reason"] = f"{note}; observed: {record['reason']}" if failed else note
        records.append(record)
    _skip_configs_the_autotuner_skips(records, compiles)
    return records


def _skip_configs_the_autotuner_skips(records: list[Record], compiles: Sequence[Mapping[str, Any]]) -> None:
    """An autotune config over the SM's resources is one Triton's Autotuner drops (it times it as
    inf), so it is `skipped` with its message while another config of the same kernel and
    variant fits; with none that fits, it stays `failed`."""
    def group(c: Mapping[str, Any]) -> tuple[Any, ...]:
        return (c["kernel"], tuple(sorted((k, format_value(v)) for k, v in c["variant"].items())))

    fits = {group(c) for c, r in zip(compiles, records, strict=True) if r["status"] is Status.PASSED}
    for compile_, record in zip(compiles, records, strict=True):
        if (record["status"] is Status.FAILED and compile_.get("error_kind") == "out_of_resources"
                and compile_.get("config") and group(compile_) in fits):
            record["status"] = Status.SKIPPED
            record["reason"] = f"the Autotuner drops this config, another one fits: {record['reason']}"
