"""Every kernel with dynamic args: sweeping them must not add compilations.

Runs where compilations can be observed: cuda and ascend (launches), cuda-compile and
ascend-compile (warm-up through the compile-only driver). The interpreter has no
compile hooks, so an interpret run does not collect it.
"""

from __future__ import annotations

from typing import Any

import pytest

from parity.compile.device_tensors import launch_on_target
from parity.compile.keep_going import keep_going
from parity.compile.specialize import (
    NOT_CHECKED,
    NOT_LAUNCHED,
    SWEEP,
    SweepResult,
    expected_per_base,
    ir_violations,
    run_sweep,
    verdict,
)
from parity.repro import sweep_repro
from parity.results import empty_record
from parity.run.runner import build_inputs, launch_pinned
from parity.spec import KernelSpec
from parity.spec import inputs as inp
from parity.triage import library_rule as owner
from parity.triage.decide import make_owner


def storm_text(spec: KernelSpec, result: SweepResult, expected: int, record: dict[str, Any]) -> str:
    """Why a sweep is a storm; where the kernel ships in a library, worded (and marked) as its finding."""
    what = (f"{result.kernel}: {result.per_base_max} compilations of one variant and config across "
            f"{result.arg} in {result.values} (expected {expected}): a recompile storm")
    finding = owner.mark(record, spec.family, spec.kernels,
                         why=f"its kernel recompiles as {result.arg} changes (a recompile storm)")
    if finding is None:  # our kernel or a user's: the fix is in the spec or the kernel
        # the case parameter's name need not be the kernel argument's (N vs n): name the change, not a guess
        fix = (f"mark the kernel argument that carries {result.arg} do_not_specialize "
               f"(@triton.jit(do_not_specialize=[...])) or explain it in the spec's expected_compiles")
        # the verdict's ✗ names whose change it is (parity.report.verdict scores a failed sweep)
        record["owner"] = make_owner("author", "kernel author", f"the kernel recompiles as {result.arg} changes "
                                     f"(a recompile storm): {fix}")
        return f"{what}; {fix}"
    record["owner"] = make_owner("library", finding["name"], finding["why"])
    version = f" {finding['version']}" if finding.get("version") else ""
    return (f"{finding['name']}{version}'s finding, not parity's: {what}. The library's kernel specializes "
            f"on {result.arg}; do_not_specialize there would avoid it ({finding['repo']}/issues)")


def not_checked_text(spec: KernelSpec, result: SweepResult) -> str:
    """Why a sweep checked nothing, and what would make it check."""
    if result.bases and result.values and not result.compiles:
        return (f"not checked: {result.bases} base case(s) launched across {result.arg} in {result.values}, and "
                f"{result.kernel} never compiled (the launcher took another path here), so nothing was counted")
    if not result.values:
        return (f"not checked: sweep_limit={spec.sweep_limit} leaves no value of {result.arg} to sweep "
                f"(the sweep's values start at {SWEEP[0]})")
    return (f"not checked: no case of {spec.name} has the parameter {result.arg!r}, so nothing was swept; "
            "name a case parameter in dynamic_args")


@pytest.mark.parity_modes("run", "compile")  # TRITON_INTERPRET=1 cannot count compilations
def test_specialization(parity, kernel_spec):
    spec, backend = kernel_spec, parity.backend
    if not spec.dynamic_args:
        pytest.skip(f"{spec.name} declares no dynamic_args")
    if spec.unavailable is not None and spec.unavailable():
        pytest.skip(spec.unavailable())

    def run_one(case):
        cpu = build_inputs(spec, case, parity.seed)
        if backend.mode == "run":  # pinned as the accuracy pass launches: a sweep counts compiles, it does not tune
            launch_pinned(spec, case, inp.to_device(cpu, backend.device), backend, {})
        else:  # a launch option this Triton rejects is the compile suite's finding; count the kernel's compiles
            with keep_going(spec.kernels, lambda: 0, on_option=lambda *rejected: None):
                # on tensors of the target's device type, as the compile suite's launches, so a library
                # takes the path it takes on that device (parity.compile.device_tensors)
                launch_on_target(spec.launch, cpu, case.params, backend.launch_device_type)
        backend.synchronize()

    expected = expected_per_base(spec, backend.name)
    problems: list[str] = []
    reruns: dict[str, dict[str, Any]] = {}  # a case the sweep stopped at, re-run once for its repro
    checked: list[bool] = []
    unchecked: list[str] = []
    for arg in spec.dynamic_args:
        for result in run_sweep(spec, arg, run_one):
            seen = len(result.variants_seen) or (1 if result.compiles else 0)
            verdict_text = verdict(result, expected)
            record = empty_record(backend.name, backend.mode, spec.name, f"sweep-{arg}-{result.kernel}",
                                  {"arg": arg, "values": result.values, "launched": result.kernel})
            if not result.listed:  # generated by the library during the launch (e.g. FlagGems' pointwise_dynamic)
                record["params"]["defined_in"] = result.file
            record["suite"] = "specialization"
            record["compiles"] = result.compiles
            record["timing"]["compile_s"] = result.compile_s
            ir_problems = ir_violations(spec, result.ir)
            record["specialization"] = {
                "arg": arg, "distinct_values": len(result.values), "bases": result.bases,
                "compiles": result.compiles, "per_base_max": result.per_base_max,
                "expected_per_base": expected, "variants_declared": spec.variant_count,
                "variants_seen": seen, "verdict": verdict_text, "ir_checked": len(result.ir),
                "ir_problems": ir_problems,
            }
            mine: list[str] = []
            if verdict_text == "error":  # recorded, not only raised: REPORT.md and results.jsonl show it
                mine.append(f"{result.kernel}: the {arg} sweep raised at {result.error}")
                record["specialization"]["error"] = result.error
            if verdict_text == "storm":
                mine.append(storm_text(spec, result, expected, record))
            # fewer is fine here (some variants need cases the sweep skips; the compile suite checks
            # coverage); more means the kernel specializes on something the spec does not declare
            if spec.variants and result.variants_seen and seen > spec.variant_count:
                mine.append(f"{result.kernel}: declared {spec.variant_count} heuristic variants "
                            f"({dict(spec.variants)}), the sweep compiled {seen}: {result.variants_seen}")
            mine += [f"{result.kernel}: {p}" for p in ir_problems]
            if mine and verdict_text != "storm":  # a variant count or dead branch the spec claims, not found
                record["owner"] = make_owner("author", "kernel author", "the spec's claim about the kernel's "
                                             f"variants or IR does not hold: {'; '.join(mine)}")
            record["status"] = "error" if verdict_text == "error" else "failed" if mine else "passed"
            record["reason"] = "; ".join(mine) or None
            if verdict_text in (NOT_CHECKED, NOT_LAUNCHED) and not mine:  # a sweep of nothing is no pass
                record["status"] = "skipped"
                record["reason"] = not_checked_text(spec, result)
            # the case that raised, through its tier's own repro path; a count over the sweep: why no script
            sweep_repro.attach(record, spec, result.error_case, backend, seed=parity.seed, cache=parity.ref_cache,
                               results_dir=parity.results_dir, reruns=reruns)
            parity.write(record)
            problems += mine
            checked.append(record["status"] != "skipped")
            if record["status"] == "skipped":
                unchecked.append(record["reason"])
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
    if unchecked and not any(checked):  # the terminal says it too: nothing here was checked
        pytest.skip("; ".join(dict.fromkeys(unchecked)))
