"""The per-library portability table: each cell names what happened, with a control per kind."""

from __future__ import annotations

from parity.report.portability import cell, portability_rows, render
from parity.results import Status


def _r(kernel, backend, status, reason=None, suite="accuracy", **compile_):
    return {"kernel": kernel, "backend": backend, "status": status, "reason": reason, "suite": suite,
            "compile": compile_ or None}


def test_cells_name_the_kind_of_finding():
    assert cell([_r("k", "interpret", Status.PASSED), _r("k", "interpret", Status.XFAILED, "bf16")]) == \
        "passed 1/2 (+1 known divergence)"
    ub = cell([_r("k", "ascend-compile", Status.FAILED, "ub_overflow after bishengir", "compile",
                  error_kind="ub_overflow", ub_bits=2621696)])
    assert ub.startswith("UB overflow (2621696 bits) (1/1)")
    assert cell([_r("k", "cuda-compile", Status.ERROR, "import error: importing x raised")]).startswith("import error")
    assert cell([_r("k", "ascend-compile", Status.FAILED, "unsupported", "compile", error_kind="unsupported")]) \
        .startswith("frontend error")
    assert cell([_r("k", "interpret", Status.SKIPPED, "fla-core is not installed")]).startswith("skipped: fla-core")
    assert cell([_r("k", "interpret", Status.PASSED), _r("k", "interpret", Status.FAILED, "err_ratio 1")]).startswith(
        "failed (1/2)")  # control: one bad case makes the cell a finding


def test_rows_are_ops_and_columns_tiers():
    records = [_r("a", "interpret", Status.PASSED), _r("a", "cuda-compile", Status.PASSED, suite="compile"),
               _r("b", "interpret", Status.FAILED, "x"), _r("a", "cuda-compile", Status.PASSED, suite="specialization")]
    tiers, rows = portability_rows(records)
    assert tiers == ["interpret", "cuda-compile"]
    assert rows == [["a", "passed 1/1", "passed 1/1"], ["b", "failed (1/1): x", ""]]
    assert "| op " in render(records)
