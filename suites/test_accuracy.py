"""Every kernel, every case: the result against the fp64 reference (the phases: parity.driver.pipeline)."""

from __future__ import annotations

import os

import pytest

from parity.driver import pipeline


@pytest.mark.parity_modes("run", "interpret")
def test_accuracy(parity, kernel_case):
    spec, case = kernel_case
    record = pipeline.accuracy_case(parity, spec, case)
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
