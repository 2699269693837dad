"""The cuda tier's timer picks do_bench, a median of three calls or one call by the first call's time."""

from __future__ import annotations

import pytest

from parity.backends.cuda import run as cuda_run


def _timer(first_ms: float, later_ms: list[float]):
    times = iter([first_ms, *later_ms])
    calls = []

    def event_ms(fn):
        calls.append(fn)
        return next(times)

    return event_ms, calls


@pytest.fixture
def fake_do_bench(monkeypatch):
    import triton.testing

    monkeypatch.setattr(triton.testing, "do_bench", lambda fn, warmup, rep: 0.123)


def test_a_fast_function_gets_do_bench(fake_do_bench):
    event_ms, calls = _timer(1.0, [])
    assert cuda_run.slow_aware_ms(lambda: None, event_ms) == 0.123 and len(calls) == 1


def test_a_slow_function_is_the_median_of_three_calls(fake_do_bench):
    event_ms, calls = _timer(90.0, [60.0, 70.0])
    assert cuda_run.slow_aware_ms(lambda: None, event_ms) == 70.0 and len(calls) == 3


def test_a_very_slow_function_is_timed_once(fake_do_bench):
    event_ms, calls = _timer(cuda_run.ONE_CALL_MS + 1, [1.0, 1.0])
    assert cuda_run.slow_aware_ms(lambda: None, event_ms) == cuda_run.ONE_CALL_MS + 1 and len(calls) == 1
