"""Outputs a launcher allocates itself start as NaN on run tiers (parity.run.prefill)."""

from __future__ import annotations

import torch

from parity.backends.interpret import InterpretBackend
from parity.run import prefill
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests import planted_prefill as planted


def _run(tmp_path) -> dict:
    spec = planted.relu_own_output
    record, _ = run_case(spec, spec.cases("quick")[0], InterpretBackend(), seed=0,
                         cache=ReferenceCache(tmp_path, enabled=False))
    return record


def test_an_unwritten_tail_of_a_launcher_allocated_output_fails_at_the_tail(tmp_path):
    record = _run(tmp_path)
    m = record["metrics"]
    assert record["status"] == "failed" and record["launcher_allocs_filled"] >= 1
    assert m["nan_count"] == planted.TAIL and m["worst_index"][0] >= 1000 - planted.TAIL
    assert m["region"].startswith("tail"), m["region"]


def test_control_without_the_fill_the_same_bug_passes_by_luck(tmp_path, monkeypatch):
    # zeroed memory (fresh pages, a recycled zero buffer) matches the true tail: the bug hides
    monkeypatch.setattr(prefill, "ENABLED", False)
    monkeypatch.setattr(torch, "empty_like", lambda t, **kw: torch.zeros_like(t, **kw))
    record = _run(tmp_path)
    assert record["status"] == "passed" and record["launcher_allocs_filled"] is None


def test_compile_tiers_allocate_unfilled():
    with prefill.launcher_allocations("compile") as filled:
        assert filled is None
    with prefill.launcher_allocations("run") as filled:
        x = torch.empty(4)
        torch.empty(0)  # nothing to fill, not counted
    assert filled is not None and filled.count == 1 and x.isnan().all()


def test_every_uninitialised_factory_is_filled_with_its_dtype_marker():
    base = torch.ones(2, dtype=torch.int32)
    with prefill.launcher_allocations("interpret"):
        made = {"empty": torch.empty(3, dtype=torch.float16), "empty_like": torch.empty_like(base),
                "new_empty": base.new_empty(3, dtype=torch.uint8), "empty_strided": torch.empty_strided((2, 2), (2, 1)),
                "new_empty_strided": base.new_empty_strided((2,), (1,), dtype=torch.bfloat16),
                "zeros": torch.zeros(2)}
    assert made["empty"].isnan().all() and made["empty_strided"].isnan().all()
    assert made["new_empty_strided"].isnan().all()
    assert (made["empty_like"] == torch.iinfo(torch.int32).min).all()  # signed: the most negative value
    assert (made["new_empty"] == 255).all()  # unsigned: the largest
    assert (made["zeros"] == 0).all()  # initialised allocations are left alone
