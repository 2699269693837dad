"""Pinned autotune configs end to end: the broken config fails where it is pinned, the good one
passes, and the repro of a failure replays the broken config standalone."""

from __future__ import annotations

from parity.backends import get_backend
from parity.driver import pipeline
from parity.run.autotune_pin import autotuners
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests import planted_autotune as planted
from tests.test_repro import _fresh_python


def test_the_pinned_config_decides_the_verdict_and_the_repro_replays_it(tmp_path):
    spec = planted.twice
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    tuner = autotuners(spec.kernels)[0]
    seen = set()
    for case in spec.cases("quick"):
        record, _ = run_case(spec, case, backend, seed=0, cache=cache)
        index = [str(c) for c in planted.CONFIGS].index(record["autotune_pinned"]["twice_kernel"])
        assert record["status"] == ("failed" if index == 1 else "passed"), record["reason"]
        if index == 1 and 1 not in seen:
            assert "tail" in record["metrics"]["region"] or "only" in record["metrics"]["region"]
            pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=tmp_path)
            assert record.get("repro"), record.get("repro_error")
            run = _fresh_python(tmp_path / record["repro"] / "repro.py")
            assert run.returncode == 1, run.stdout + run.stderr
        seen.add(index)
    assert seen == {0, 1}, "the six cases should pin both configs"
    assert tuner.configs == planted.CONFIGS  # restored after every case
