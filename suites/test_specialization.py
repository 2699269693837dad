"""Every kernel with dynamic args: sweeping them must not add compilations.

Runs where compilations can be observed: cuda and ascend (launches), cuda-compile and
ascend-compile (warm-up through the compile-only driver). The interpreter has no
compile hooks, so an interpret run does not collect it. The sweep, its records and their
owners are the driver's (parity.driver.sweep); this suite only says the outcome to pytest.
"""

from __future__ import annotations

import pytest

from parity.driver import sweep
from parity.results import Status


@pytest.mark.parity_modes("run", "compile")  # TRITON_INTERPRET=1 cannot count compilations
def test_specialization(parity, kernel_spec):
    skip = sweep.skip_reason(kernel_spec)
    if skip:
        pytest.skip(skip)
    done = sweep.specialization_case(parity, kernel_spec)
    if done.problems:
        pytest.fail("\n".join(done.problems), pytrace=False)
    if done.unchecked and all(r["status"] == Status.SKIPPED for r in done.records):
        pytest.skip("; ".join(dict.fromkeys(done.unchecked)))  # the terminal says it too: nothing was checked
