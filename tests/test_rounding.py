"""The accumulation error model (parity.run.rounding): correct long fp32 sums and dots pass at the default
tolerance, a tolerance tighter than rounding owns its failure, and real precision bugs stay failures (issue 49)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.run import rounding
from parity.spec import DEFAULT_TOLERANCES, Tolerance

ROOT = Path(__file__).resolve().parents[1]
FP32 = DEFAULT_TOLERANCES["fp32"]


def _sum(inputs, p):
    return {"s": inputs["x"].sum().reshape(1)}


def _matmul(inputs, p):
    return {"c": inputs["a"] @ inputs["b"]}


def test_bounds_follow_the_formulas():
    u = 2.0 ** -24
    prob, worst = rounding.bounds(4096, 1.0, 0.0, u, u)
    assert prob == pytest.approx(rounding.lam(4096) * 64 * u, rel=1e-3)
    assert worst == pytest.approx(4096 * u / (1 - 4096 * u))
    assert 5 < rounding.lam(1) < rounding.lam(1 << 20) < 8  # λ grows like √(log n)
    # a narrower output adds its own rounding of the result
    assert rounding.bounds(1, 0.0, 100.0, u, 2.0 ** -11)[0] == pytest.approx(100 * 2.0 ** -11)


def test_terms_and_magnitudes_come_from_the_reference():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1000, generator=gen, dtype=torch.float64)
    [(n, s)] = rounding.element_terms(_sum, {"x": x}, {}, "s", [0])
    assert n == 1000 and s == pytest.approx(float(x.abs().sum()))
    a, b = torch.randn(4, 300, generator=gen, dtype=torch.float64), torch.randn(300, 5, generator=gen,
                                                                                   dtype=torch.float64)
    [(n, s)] = rounding.element_terms(_matmul, {"a": a, "b": b}, {}, "c", [7])  # c[1, 2]
    assert n == 300 and s == pytest.approx(float((a[1] * b[:, 2]).abs().sum()))


def test_a_reference_outside_autograd_is_said_not_differentiable():
    def numpy_reference(inputs, p):
        return {"s": torch.from_numpy(inputs["x"].detach().numpy().sum(keepdims=True))}

    with pytest.raises(rounding.NotDifferentiable):
        rounding.element_terms(numpy_reference, {"x": torch.ones(3, dtype=torch.float64)}, {}, "s", [0])


def _judge(out: torch.Tensor, x: torch.Tensor, tol: Tolerance = FP32) -> rounding.Rounding | None:
    """The model for a kernel's sum `out` of x (in x's dtype, as a case's inputs are)."""
    return rounding.judge_output("s", out, _sum({"x": x.double()}, {})["s"], tol, None, _sum, {"x": x}, {})


def test_a_reordered_fp32_sum_is_within_rounding():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1 << 20, generator=gen, dtype=torch.float32)
    perm = torch.randperm(x.numel(), generator=gen)
    acc = torch.zeros((), dtype=torch.float32)
    for block in x[perm].split(4096):  # block partials added one by one, as atomics would
        acc += block.sum()
    # a tight tolerance, so the order's rounding is a mismatch the model must explain
    verdict = _judge(acc.reshape(1), x, Tolerance(rtol=1e-9, atol=0.0, reason="control"))
    assert verdict is not None and verdict.within, verdict
    assert verdict.decisive.terms == 1 << 20 and "within fp32 rounding for a 1,048,576-term sum" in verdict.sentence()


def test_a_dropped_term_and_fp16_accumulation_are_beyond_rounding():
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(4096, generator=gen, dtype=torch.float32)
    dropped = _judge(x[:-1].sum().reshape(1), x)  # a loop bound one element short
    assert dropped is not None and not dropped.within and "beyond fp32 rounding" in dropped.sentence()
    acc = torch.zeros((), dtype=torch.float16)
    for v in x.half():  # fp16 accumulation, element by element
        acc = acc + v
    fp16 = _judge(acc.reshape(1), x.half())
    assert fp16 is not None and not fp16.within
    assert fp16.decisive.err > 3 * fp16.decisive.probabilistic, fp16.sentence()


def test_nothing_to_say_without_a_mismatch_or_with_a_nan():
    x = torch.randn(100, dtype=torch.float64)
    assert _judge(x.sum().reshape(1), x) is None
    assert _judge(torch.tensor([math.nan], dtype=torch.float64), x) is None  # a NaN is never rounding


@pytest.fixture(scope="module")
def interpret_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rounding") / "interpret"
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites", "-q", "-p", "no:cacheprovider", "-n", "0",
                           "--backend=interpret", "--kernels=tests.planted_rounding", f"--results-dir={out}"],
                          cwd=ROOT, env={**os.environ, "TRITON_INTERPRET": "1"}, capture_output=True, text=True,
                          timeout=900)
    assert (out / "results.jsonl").exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _records(out: Path) -> dict[str, dict]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {f"{r['kernel']}[{r['case']}]": r for r in map(json.loads, lines)}


def test_correct_long_sums_and_dots_pass_at_the_default_tolerance(interpret_run):
    records = _records(interpret_run)
    for name in ("rounding_atomic_sum", "rounding_row_sum", "rounding_scan", "rounding_dot"):
        for key, r in records.items():
            if key.startswith(name + "["):
                assert r["status"] == "passed", (key, r["reason"])
    judged = records["rounding_dot[K=4096,dtype=fp32]"]
    assert judged["rounding"]["judged"] and judged["rounding"]["within"]  # outside rtol 1.3e-6, within rounding
    assert "## Passed within rounding" in (interpret_run / "REPORT.md").read_text()


def test_precision_bugs_stay_the_authors(interpret_run):
    records = _records(interpret_run)
    for key in ("rounding_dot_fp16_acc[K=4096,dtype=fp16]", "rounding_dot_drops_last[K=4096,dtype=fp32]"):
        r = records[key]
        assert r["status"] == "failed" and r["owner"]["who"] == "author", (key, r.get("owner"))
        assert "beyond fp32 rounding for a 4,096-term sum" in r["reason"]
        assert (interpret_run / r["repro"] / "AUTHOR.md").exists()


def test_a_tolerance_tighter_than_rounding_owns_the_failure(interpret_run):
    r = _records(interpret_run)["rounding_dot_tight[K=4096,dtype=fp32]"]
    assert r["status"] == "failed" and r["owner"]["who"] == "tolerance", r.get("owner")
    drafts = sorted(p.name for p in (interpret_run / r["repro"]).glob("*.md"))
    assert drafts == ["TIER.md"]  # a note: no AUTHOR.md, no vendor ISSUE.md
    assert "tolerance tighter than a correct kernel's rounding" in (interpret_run / r["repro"] / "TIER.md").read_text()
