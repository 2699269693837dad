"""Every kernel, every case: the result against the fp64 reference (the phases: parity.driver.pipeline)."""

from __future__ import annotations

import os

import pytest

from parity.driver import pipeline
from parity.results import Status


@pytest.mark.parity_modes("run", "interpret")
def test_accuracy(parity, kernel_case):
    spec, case = kernel_case
    record = pipeline.accuracy_case(parity, spec, case)
    status, reason = record["status"], record["reason"]
    if status == Status.CRASHED:
        if parity.worker != "main":
            os._exit(70)  # the device context is poisoned: xdist replaces this worker with a clean one
        pytest.fail(f"{spec.name}[{case.id}] crashed the device context: {reason}", pytrace=False)
    if status == Status.SKIPPED:
        pytest.skip(reason)
    if status == Status.XFAILED:  # unscored: pytest's line says why it is expected, never the error it showed
        pytest.xfail(str(reason).partition("; observed: ")[0])
    if status == Status.ERROR:
        pytest.fail(f"{spec.name}[{case.id}] raised: {reason}", pytrace=False)
    if status == Status.FAILED:
        pytest.fail(f"{spec.name}[{case.id}] differs from the fp64 reference: {reason}", pytrace=False)
