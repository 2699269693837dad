"""bench/suite_speed.py's figures, from synthetic records (the script itself needs a tier to run)."""

from __future__ import annotations

import pytest

from tests import bench_module

suite_speed = bench_module.load("suite_speed")


def record(worker: str = "gw0", **timing: float) -> dict:
    return {"status": "passed", "timing": timing, "worker": worker}


def test_overhead_splits_into_waits_untimed_work_and_idle_time():
    records = [record(compile_s=3.0, run_s=4.0, ref_s=1.0, compare_s=0.5, inputs_s=0.5, case_wall_s=7.0, wait_s=2.0),
               record("gw1", compile_s=0.0, run_s=1.0, ref_s=0.5, compare_s=0.5, inputs_s=0.0, case_wall_s=3.0,
                      wait_s=0.5)]
    fig = suite_speed.summarize(records, wall_s=10.0, workers=2)
    assert fig["busy_worker_s"] == 20.0
    assert fig["kernel_s"] == 2.0  # run minus compile
    assert fig["overhead_share"] == pytest.approx((20.0 - 3.0 - 2.0) / 20.0)
    assert fig["wait_s"] == 2.5
    assert fig["untimed_s"] == pytest.approx(10.0 - 6.0 - 2.0)  # case wall minus run, ref, compare, inputs
    assert fig["idle_s"] == pytest.approx(20.0 - 10.0 - 2.5)
    assert fig["tail_s"] == pytest.approx(9.0 - 3.5)  # gw1 waited for gw0 to finish
    assert fig["first_wait_s"] == 2.0


def test_records_without_stamps_give_no_breakdown():
    fig = suite_speed.summarize([record(compile_s=1.0, run_s=2.0, ref_s=0.1)], wall_s=5.0, workers=1)
    assert fig["wait_s"] is None and fig["untimed_s"] is None and fig["idle_s"] is None and fig["tail_s"] is None
    assert fig["overhead_share"] == pytest.approx((5.0 - 1.0 - 1.0) / 5.0)


def test_compile_tier_records_count_their_compile_as_a_phase():
    t = {"compile_s": 2.0, "repro_s": 0.5, "case_wall_s": 3.0, "wait_s": 0.1}
    assert suite_speed.phase_seconds(t) == 2.5
    assert suite_speed.phase_seconds({**t, "run_s": 2.5}) == 3.0  # run_s already holds the compile


def test_compile_only_records_add_compile_time_but_take_no_kernel_time():
    runs = [record(compile_s=1.0, run_s=3.0), record(compile_s=5.0)]  # an accuracy case, then a sweep
    fig = suite_speed.summarize(runs, wall_s=10.0, workers=1)
    assert fig["compile_s"] == 6.0 and fig["kernel_s"] == 2.0
