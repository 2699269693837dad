"""Every kernel, heuristic variant and autotune config, compiled for the backend's target.

Runs on the compile-only tiers (cuda-compile, ascend-compile): nothing is launched, each
compile is one results record with its stage, error kind, message and resources.
"""

from __future__ import annotations

import pytest

from parity.compile.tools import declared_variants, reached_variants
from parity.driver import pipeline
from parity.results import Status, empty_record
from parity.run.runner import build_inputs


@pytest.mark.parity_modes("compile")
def test_compile(parity, kernel_case):
    spec, case = kernel_case
    records = pipeline.compile_case(parity, spec, case)
    first = records[0] if records else None
    if first is not None and first["compile"] is None:  # no compile ran: a skip, or the launcher's own raise
        if first["status"] == Status.SKIPPED:
            pytest.skip(first["reason"])
        pytest.fail(f"{spec.name}[{case.id}] raised outside the compiler: {first['reason']}", pytrace=False)
    bad = pipeline.failures(records)
    if bad:
        pytest.fail("\n".join(f"{r['kernel']}[{r['case']}] {r['status']}: {r['reason']}" for r in bad),
                    pytrace=False)
    if records and all(r["status"] == Status.XFAILED for r in records):
        pytest.xfail(records[0]["reason"])
    if all(r["status"] == Status.SKIPPED for r in records):
        pytest.skip(records[0]["reason"])


@pytest.mark.parity_modes("compile")
def test_compile_variants(parity, kernel_spec):
    """The compile cases reach every heuristic variant the spec declares."""
    spec = kernel_spec
    if not spec.variants:
        pytest.skip(f"{spec.name} declares no heuristic variants")
    missing_reason = spec.unavailable() if spec.unavailable is not None else None
    if missing_reason:  # as test_compile: a spec that cannot run here is a skip, not a coverage failure
        pytest.skip(missing_reason)
    cases = parity.cases(spec)
    reached = reached_variants(spec, cases, lambda case: build_inputs(spec, case, parity.seed),
                               parity.backend.launch_device_type)
    declared = declared_variants(spec)
    missing = sorted(declared - reached, key=str)
    record = empty_record(parity.backend.name, "compile", spec.name, "variant-coverage",
                          {"declared": len(declared), "reached": len(declared & reached)})
    record["suite"] = "compile-variants"
    record["status"] = Status.FAILED if missing else Status.PASSED
    if missing:
        listed = "; ".join(",".join(f"{k}={v}" for k, v in combo) for combo in missing)
        record["reason"] = (f"no compile case reaches {len(missing)} of {len(declared)} declared variant(s): "
                            f"{listed}; add compile cases (compile_signature) that select them")
    parity.write(record)
    if missing:
        pytest.fail(f"{spec.name}: {record['reason']}", pytrace=False)
