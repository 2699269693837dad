"""The fork runner must survive what compilers do to a process: raise, abort, hang."""

from __future__ import annotations

import os
import time

import torch

from parity.compile.isolate import run_isolated


def test_a_value_comes_back():
    result = run_isolated(lambda: {"n": 3}, timeout_s=30)
    assert result.ok and result.value == {"n": 3}


def test_an_exception_is_reported_not_raised():
    def boom():
        raise ValueError("bad tile")

    result = run_isolated(boom, timeout_s=30)
    assert not result.ok and "ValueError: bad tile" in result.error


def test_an_abort_is_a_crash_with_the_signal_named():
    result = run_isolated(os.abort, timeout_s=30)
    assert result.crashed and "SIGABRT" in result.crashed
    assert not result.ok


def test_a_hang_is_a_timeout():
    t0 = time.monotonic()
    result = run_isolated(lambda: time.sleep(60), timeout_s=1)
    assert result.timed_out and not result.ok
    assert time.monotonic() - t0 < 30


def test_torch_works_in_the_child_after_the_parent_ran_parallel_work():
    (torch.randn(2_000_000) * 2).sum()  # starts the OpenMP pool in the parent
    result = run_isolated(lambda: float(torch.ones(2_000_000).sum()), timeout_s=60)
    assert result.value == 2_000_000.0
