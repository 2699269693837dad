"""Shrinking: smaller while the failure persists, never past the point where it stops failing."""

from __future__ import annotations

import itertools

from parity.backends import get_backend
from parity.repro import run_repro as repro
from parity.repro.shrink import candidates, shrink
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests import planted_repro as planted


def test_planted_failure_shrinks_its_T():
    spec = planted.SPECS[0]
    case = next(iter(spec.cases("quick")))
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
    assert record["status"] == "failed"
    result = repro.shrink_case(spec, case, backend, record, seed=0, cache=cache)
    assert result.original["T"] == 40 and result.shrunk["T"] < 40
    assert result.shrunk["B"] == 1 and result.shrunk["H"] == 1
    shrunk_record, _ = run_case(spec, type(case)(result.shrunk), backend, seed=0, cache=cache)
    assert repro.failure_signature(shrunk_record) == repro.failure_signature(record)


def test_stops_where_the_failure_stops():
    # the bug needs a second chunk of 64 rows: T must stay above 64
    result = shrink({"B": 4, "T": 1000, "H": 8, "K": 128}, lambda p: p["T"] > 64)
    assert 64 < result.shrunk["T"] <= 128
    assert result.shrunk["B"] == result.shrunk["H"] == result.shrunk["K"] == 1
    assert result.original == {"B": 4, "T": 1000, "H": 8, "K": 128} and result.changed


def test_nothing_smaller_fails_so_nothing_changes():
    result = shrink({"T": 100, "H": 4}, lambda p: p == {"T": 100, "H": 4})
    assert not result.changed and result.shrunk == {"T": 100, "H": 4} and result.trials == 2


def test_a_different_error_does_not_count():
    def still_fails(p):
        if p["T"] < 50:
            raise ValueError("the smaller case is invalid, a different failure")
        return True

    assert shrink({"T": 100}, still_fails).shrunk == {"T": 50}


def test_drops_varlen_sequences_and_keeps_T_consistent():
    params = {"T": 100, "lengths": [0, 64, 36], "H": 1}
    result = shrink(params, lambda p: 36 in p["lengths"], axes=())
    assert result.shrunk["lengths"] == [36] and result.shrunk["T"] == 36
    offsets = shrink({"T": 100, "cu_seqlens": [0, 0, 64, 100]}, lambda p: p["cu_seqlens"][-1] >= 36, axes=())
    assert offsets.shrunk["cu_seqlens"] == [0, 36] and offsets.shrunk["T"] == 36


def test_trials_are_bounded():
    counter = itertools.count()
    result = shrink({"T": 1 << 30}, lambda p: next(counter) >= 0, max_trials=5)
    assert result.trials == 5 and result.shrunk["T"] == 1 << 25


def test_candidates_skip_flags_and_ones():
    names = [d for d, _ in candidates({"T": 1, "B": 2, "use_g": True, "K": True})]
    assert names == ["B 2 -> 1"]


class _Clock:
    """A clock each trial advances by `per_trial` seconds."""

    def __init__(self, per_trial: float) -> None:
        self.now, self.per_trial = 0.0, per_trial

    def __call__(self) -> float:
        return self.now

    def trial(self, params: dict) -> bool:
        self.now += self.per_trial
        return True  # every smaller case still fails: only the clock can stop the search


def test_a_first_trial_slower_than_a_third_of_the_budget_ends_the_search():
    clock = _Clock(per_trial=8.0)
    result = shrink({"B": 4, "T": 1024, "H": 8}, clock.trial, max_seconds=20.0, clock=clock)
    assert result.trials == 1 and result.shrunk["T"] == 512  # the one trial's smaller case is kept
    assert result.steps[-1].startswith("stopped: the first trial took 8.0 s of a 20 s budget")


def test_negative_control_fast_trials_shrink_all_the_way():
    clock = _Clock(per_trial=0.1)
    result = shrink({"B": 4, "T": 1024, "H": 8}, clock.trial, max_seconds=20.0, clock=clock)
    assert result.shrunk == {"B": 1, "T": 1, "H": 1} and not any(s.startswith("stopped") for s in result.steps)


def test_an_error_gets_a_much_smaller_shrink_budget_than_a_wrong_result(monkeypatch):
    seen: list[float] = []
    monkeypatch.setattr(repro, "shrink", lambda params, fails, **kw: seen.append(kw["max_seconds"]))
    spec = planted.SPECS[0]
    case = next(iter(spec.cases("quick")))
    for status in ("error", "failed"):
        repro.shrink_case(spec, case, None, {"status": status, "reason": "RuntimeError: x"}, seed=0, cache=None)
    assert seen == [20.0, 120.0]
