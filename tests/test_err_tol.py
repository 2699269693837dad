"""err/tol: one definition in REPORT.md, DIVERGENCE.md and the heatmap (the README's)."""

from __future__ import annotations

import math
import re

import pytest

from parity.report import backend_md, divergence_md, err_tol
from parity.report.divergence import Column
from parity.results import Status, empty_record

ELEMENTWISE = {"rtol": 1.6e-2, "atol": 1e-5, "max_err_ratio": None, "reason": "default"}
RATIO = {"rtol": 0.0, "atol": 1e-6, "max_err_ratio": 2e-3, "reason": "long accumulation"}


def rec(status: Status, tol: dict, **metrics: float) -> dict:
    r = empty_record("cuda", "run", "matmul", f"c{len(metrics)}{status}", {})
    r.update(status=status, tolerance=tol, suite="accuracy",
             metrics={"err_ratio": 3.4e-3, "max_abs_err": 0.02, "nan_count": 0, **metrics})
    return r


def records() -> list[dict]:
    return [rec(Status.PASSED, ELEMENTWISE, max_tol_ratio=0.42),
            # a known divergence far over its bound: listed apart, never the kernel's worst
            rec(Status.XFAILED, ELEMENTWISE, max_tol_ratio=8.57e13, nan_count=0, err_ratio=1.0)]


def summary_cell(text: str) -> str:
    summary = text[text.index("## Summary by kernel"):]  # the verdict table above names the kernel too
    row = next(line for line in summary.splitlines() if line.startswith("| matmul"))
    return [c.strip() for c in row.strip("|").split("|")][-2]


def test_report_and_divergence_print_the_same_err_over_tol():
    recs = records()
    report = backend_md.render_report(recs, {"backend": "cuda"})
    column = Column("cuda", "cuda", "run", {"backend": "cuda"})
    div = divergence_md.render([column], {"cuda": recs}, [], None)
    in_report = summary_cell(report)  # worst err_ratio, worst err/tol, compiles: err/tol is second to last
    in_div = re.search(r"err/tol ([0-9.e+-]+)", div).group(1)
    assert float(in_report) == float(in_div) == 0.42


def test_err_over_tol_is_above_one_exactly_when_compare_fails():
    # elementwise: the worst element's own bound; a NaN disagreement is outside every bound
    assert err_tol.err_over_tol(rec(Status.PASSED, ELEMENTWISE, max_tol_ratio=0.9)) == 0.9
    assert err_tol.err_over_tol(rec(Status.FAILED, ELEMENTWISE, max_tol_ratio=0.5, nan_count=3)) == math.inf
    # err_ratio-judged: compare passes when err_ratio <= limit or max_abs <= atol
    assert err_tol.err_over_tol(rec(Status.FAILED, RATIO, err_ratio=4e-3, max_abs_err=1e-3)) == 2.0
    tiny = err_tol.err_over_tol(rec(Status.PASSED, RATIO, err_ratio=1.0, max_abs_err=5e-7))  # ref all ~0
    assert tiny == 0.5


def test_expected_failures_are_listed_apart_with_reason_and_link():
    recs = records()
    recs[1]["known_divergence"] = {"reason": "bf16 dot rounds differently", "link": "https://example.org/1"}
    recs[1]["reason"] = "known divergence: bf16 dot rounds differently (https://example.org/1); observed: boom"
    report = backend_md.render_report(recs, {"backend": "cuda"})
    section = report.split("## Expected failures", 1)[1].split("##", 1)[0]
    assert "bf16 dot rounds differently" in section and "[link](https://example.org/1)" in section
    assert "not scored" in section and "boom" not in section  # an unscored case shows no error figures
    assert "## Expected failures" not in backend_md.render_report(recs[:1], {"backend": "cuda"})


def test_a_case_the_rounding_model_judged_reads_its_err_over_the_models_bound():
    # outside the default tolerance (max_tol_ratio 12.7), within the model's bound: err/tol below 1, as its pass
    probes = [{"err": 3e-5, "probabilistic": 0.06}, {"err": 1e-5, "probabilistic": 0.05}]
    record = {"status": Status.PASSED, "metrics": {"max_tol_ratio": 12.7}, "tolerance": {"rtol": 1.3e-6, "atol": 1e-5},
              "rounding": {"judged": True, "within": True, "outputs": [{"probes": probes}]}}
    assert err_tol.err_over_tol(record) == pytest.approx(5e-4)
    # control: the model on a spec that chose its tolerance does not judge it: the elementwise ratio stands
    record["rounding"]["judged"] = False
    assert err_tol.err_over_tol(record) == 12.7
