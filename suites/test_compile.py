"""Every kernel, heuristic variant and autotune config, compiled for the backend's target.

Runs on the compile-only tiers (cuda-compile, ascend-compile): nothing is launched, each
compile is one results record with its stage, error kind, message and resources.
"""

from __future__ import annotations

import pytest

from parity.compile.tools import declared_variants, reached_variants
from parity.errors import error_text
from parity.repro.compile_prelaunch import attach_compile_tier
from parity.repro.compile_repro import attach_all
from parity.results import empty_record
from parity.run.compile_judge import compile_records
from parity.run.fit_proof import attach as prove_fits
from parity.run.runner import build_inputs, mark_declined
from parity.triage.interrupt import interrupted_record


@pytest.mark.parity_modes("compile")
def test_compile(parity, kernel_case):
    spec, case = kernel_case
    backend = parity.backend
    missing = spec.unavailable() if spec.unavailable is not None else None
    if missing:  # e.g. the library the spec tests is not installed: a skip with the install command
        record = empty_record(backend.name, "compile", spec.name, case.id, dict(case.params))
        record.update(suite="compile", status="skipped", reason=missing)
        parity.write(record)
        pytest.skip(missing)
    cpu_inputs = build_inputs(spec, case, parity.seed)
    try:
        compiles = backend.compile_case(spec, case, cpu_inputs)
    except KeyboardInterrupt:  # Ctrl-C or a job stop: the case is `interrupted`, no finding
        parity.write(interrupted_record(backend, spec, case, "compile"))
        raise
    except Exception as exc:  # the launcher itself failed, outside any compile
        record = empty_record(backend.name, "compile", spec.name, case.id, dict(case.params))
        record.update(suite="compile", status="error", reason=error_text(exc))
        if mark_declined(spec, exc, record):  # the library's own guard for this target (KernelSpec.declines)
            parity.write(record)
            pytest.skip(record["reason"])
        # a library's raise before any compile is its finding: an ISSUE.md to it and a standalone call
        attach_compile_tier(record, spec, case, backend, cpu_inputs, parity.results_dir, parity.seed, exc)
        parity.write(record)
        pytest.fail(f"{spec.name}[{case.id}] raised outside the compiler: {record['reason']}", pytrace=False)
    records = compile_records(backend.name, spec, case, compiles)
    # a config that fits is a fix only if it computes: run it on a tier that computes, before any draft says so
    prove_fits(records, compiles, spec, case, parity.seed, backend)
    attach_all(records, spec, case, backend, cpu_inputs, parity.results_dir, parity.seed)
    for record in records:
        parity.write(record)
    bad = [r for r in records if r["status"] in ("failed", "error", "xpassed")]
    if bad:
        pytest.fail("\n".join(f"{r['kernel']}[{r['case']}] {r['status']}: {r['reason']}" for r in bad),
                    pytrace=False)
    if records and all(r["status"] == "xfailed" for r in records):
        pytest.xfail(records[0]["reason"])
    if all(r["status"] == "skipped" for r in records):
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
    record["status"] = "failed" if missing else "passed"
    if missing:
        listed = "; ".join(",".join(f"{k}={v}" for k, v in combo) for combo in missing)
        record["reason"] = (f"no compile case reaches {len(missing)} of {len(declared)} declared variant(s): "
                            f"{listed}; add compile cases (compile_signature) that select them")
    parity.write(record)
    if missing:
        pytest.fail(f"{spec.name}: {record['reason']}", pytrace=False)
