"""Every kernel, every case: the result against the fp64 reference."""

from __future__ import annotations

import os
import time

import pytest

from parity.repro import run_repro as repro
from parity.results import empty_record, outputs_store
from parity.run import warm
from parity.run.faults import is_timeout
from parity.run.runner import memory_skip, run_case
from parity.run.sanitize import sanitized_case
from parity.triage import interrupt
from parity.triage.interrupt import interrupted_record


@pytest.mark.parity_modes("run", "interpret")
def test_accuracy(parity, kernel_case):
    spec, case = kernel_case
    skip = memory_skip(spec, case, parity.backend)
    if skip:
        record = empty_record(parity.backend.name, parity.backend.mode, spec.name, case.id, dict(case.params))
        record.update(suite="accuracy", status="skipped", reason=skip)
        parity.write(record)
        pytest.skip(skip)
    try:
        if parity.sanitize:  # a fresh child under compute-sanitizer's memcheck (parity.run.sanitize)
            record, outputs = sanitized_case(spec, case, parity.backend, seed=parity.seed, level=parity.level,
                                             kernels=parity.kernels_option)
        else:
            record, outputs = run_case(spec, case, parity.backend, seed=parity.seed, cache=parity.ref_cache)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):  # Ctrl-C or a job stop: the case is `interrupted`, no finding
            parity.write(interrupted_record(parity.backend, spec, case, "accuracy"))
        elif is_timeout(exc):  # a hang: record it before pytest-timeout fails the test
            record = empty_record(parity.backend.name, parity.backend.mode, spec.name, case.id, dict(case.params))
            record.update(suite="accuracy", status="error", reason=f"timeout: {str(exc).splitlines()[0]}")
            parity.write(record)
        raise
    t0 = time.perf_counter()
    outputs_store.save_case(parity.results_dir, spec, case, outputs, record.get("input_digest"))
    record["timing"]["store_s"] = time.perf_counter() - t0
    # only a failed/errored case pays for shrinking and the repro
    try:
        repro.attach(record, spec, case, parity.backend, seed=parity.seed, cache=parity.ref_cache,
                     results_dir=parity.results_dir)
        cases = parity.cases(spec)
        part = warm.share(spec, case, parity.backend, cases=cases, perf=parity.perf, worker=parity.worker)
        if part and record["status"] in ("passed", "failed", "xfailed", "xpassed"):  # one that raised would again
            # the perf pass's autotune compiles, done here beside the other workers (parity.run.warm)
            record["perf_warm"] = warm.perf_configs(spec, parity.backend, seed=parity.seed, part=part,
                                                    retune=parity.retune)
            record["timing"]["warm_s"] = record["perf_warm"]["seconds"]
    except KeyboardInterrupt:
        interrupt.note()
        parity.write(record)  # settled as `interrupted` there, with any draft it got removed
        raise
    parity.write(record)
    status, reason = record["status"], record["reason"]
    if status == "crashed":
        if parity.worker != "main":
            os._exit(70)  # the device context is poisoned: xdist replaces this worker with a clean one
        pytest.fail(f"{spec.name}[{case.id}] crashed the device context: {reason}", pytrace=False)
    if status == "skipped":
        pytest.skip(reason)
    if status == "xfailed":  # unscored: pytest's line says why it is expected, never the error it showed
        pytest.xfail(str(reason).partition("; observed: ")[0])
    if status == "error":
        pytest.fail(f"{spec.name}[{case.id}] raised: {reason}", pytrace=False)
    if status == "failed":
        pytest.fail(f"{spec.name}[{case.id}] differs from the fp64 reference: {reason}", pytrace=False)
