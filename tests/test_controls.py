"""Negative controls: each planted bug must fail, with the metrics that locate it."""

from __future__ import annotations

from pathlib import Path

import pytest

from parity.backends.interpret import InterpretBackend
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests import planted


def run(spec, tmp_path: Path) -> dict:
    case = spec.cases("quick")[0]
    record, _ = run_case(spec, case, InterpretBackend(), seed=0, cache=ReferenceCache(tmp_path, enabled=True))
    return record


def test_floor_grid_fails_at_the_tail(tmp_path):
    record = run(planted.floor_grid, tmp_path)
    m = record["metrics"]
    assert record["status"] == "failed"
    assert m["nan_count"] == (1000 - 960) * 16  # the ragged last block, never written
    assert m["worst_index"][0] >= 960
    assert m["region"] == "tail t>=960"


def test_mask_off_by_one_points_at_the_last_element(tmp_path):
    record = run(planted.mask_off_by_one, tmp_path)
    m = record["metrics"]
    assert record["status"] == "failed"
    assert m["worst_index"] == [4096]
    assert m["region"] == "i 4096 only"
    assert m["nan_count"] == 0


def test_nan_output_fails_with_nan_count(tmp_path):
    record = run(planted.nan_output, tmp_path)
    assert record["status"] == "failed"
    assert record["metrics"]["nan_count"] == 1
    assert record["metrics"]["worst_index"] == [7]
    assert "non-finite" in record["reason"]


def test_correct_kernel_passes_with_default_tolerance(tmp_path):
    assert run(planted.correct_add, tmp_path)["status"] == "passed"


def test_too_tight_tolerance_override_fails(tmp_path):
    record = run(planted.too_tight, tmp_path)
    assert record["status"] == "failed"
    assert record["tolerance"]["rtol"] == 1e-6
    assert record["tolerance"]["reason"] == "deliberately tighter than fp16 rounding"


@pytest.mark.parametrize("spec", [planted.floor_grid, planted.nan_output])
def test_known_divergence_turns_failure_into_xfail(spec, tmp_path):
    from dataclasses import replace

    from parity.spec import KnownDivergence

    marked = replace(spec, known_divergences=(
        KnownDivergence(backend="interpret", reason="planted", link="https://example.invalid/1"),))
    record = run(marked, tmp_path)
    assert record["status"] == "xfailed"
    assert "planted" in record["reason"]
