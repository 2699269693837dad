"""Advice is proven by computing (parity.fit.proof, parity.run.fit_proof): a fitting config is called a fix only
where it computes the fp64 answer.

The planted pair (tests/planted_rowsum.py): a row sum whose block is the whole row, where a smaller block
fits Ascend's UB and sums only part of the row (the advice must name the kernel change), and its clean twin
that loops over the row (the same smaller block is proven right). The runs go through the interpreter of
this environment's triton in a fresh process, as cuda-compile's proofs do.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from parity.fit import proof
from parity.report import fit_md
from parity.repro.author import render_author
from parity.run import fit_proof as prove
from tests import planted_rowsum

TILED = """
def k(x, out, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    o = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < N), mask=o < N)
"""
CASE = {"M": 4, "N": planted_rowsum.ROW, "dtype": "fp32"}
CASE_ID = "M=4,N=65536,dtype=fp32"


def _fit(cap: str | None = "BLOCK <= 16384 (it passed 65536)") -> dict:
    return {"searched": 4, "fitting": [{"config": {"BLOCK": 16384}, "used": 1048576, "of": 1572864}],
            "arch": "Ascend910B3", "unit": "bits", "smallest_need": None, "cap": cap, "search_s": 1.0}


def source_text(kernel) -> str:
    from parity.fit.proof import source_text as source_of

    return source_of(kernel)


def test_the_source_says_which_axes_a_block_tiles_and_whether_a_loop_steps_by_it():
    assert proof.grid_axes(TILED, "BLOCK") == {0}
    assert proof.grid_axes("def k(x, B: tl.constexpr):\n    o = tl.program_id(axis=1) * B\n", "B") == {1}
    assert proof.grid_axes(source_text(planted_rowsum.row_sum_whole_row_kernel), "BLOCK") == set()
    assert not proof.loops_over(source_text(planted_rowsum.row_sum_whole_row_kernel), "BLOCK")
    assert proof.loops_over(source_text(planted_rowsum.row_sum_looped_kernel), "BLOCK")


def test_a_wrong_answer_names_the_loop_the_kernel_needs_only_where_it_has_none():
    wrong = {"config": {"BLOCK": 16384}, "was": {"BLOCK": 65536}, "computes": False}
    whole = proof.kernel_change(source_text(planted_rowsum.row_sum_whole_row_kernel), wrong)
    assert whole.startswith("the kernel assumes one block covers the row") and "add a loop over the row" in whole
    # the twin loops over the row: a wrong answer there is not the missing loop
    looped = proof.kernel_change(source_text(planted_rowsum.row_sum_looped_kernel), wrong)
    assert "assumes one block" not in looped and "no fix" in looped
    assert "assumes one block" not in proof.kernel_change("", wrong)  # no source: no claim about it


def test_the_change_is_as_strong_as_its_proof():
    right = {**_fit(), "proof": {"tier": "ascend-lowered", "case": CASE_ID, "why_not": None, "kernel_change": None,
                                 "configs": [{"config": {"BLOCK": 16384}, "computes": True, "detail": "ok"}]}}
    assert proof.change(right).startswith("BLOCK <= 16384 (it passed 65536); proven: each computes the fp64 answer")
    assert proof.is_fix(right)
    wrong = {**_fit(), "proof": {**right["proof"], "kernel_change": "the kernel assumes one block covers the row: x",
                                 "configs": [{"config": {"BLOCK": 16384}, "computes": False, "detail": "d"}]}}
    assert proof.change(wrong) == "the kernel assumes one block covers the row: x" and not proof.is_fix(wrong)
    unproven = {**_fit(), "proof": {**right["proof"], "configs": [], "why_not": "ascend-lowered: no answer"}}
    assert "not proven to compute" in proof.change(unproven) and not proof.is_fix(unproven)
    assert "not proven to compute" in proof.change(_fit())  # a record from before proofs: compiled only
    partly = {**_fit(), "proof": {**right["proof"], "configs": [
        {"config": {"BLOCK": 16384}, "computes": True, "detail": "ok"},
        {"config": {"BLOCK": 8192}, "computes": None, "detail": "skipped: an op the lowering lacks"}]}}
    assert not proof.is_fix(partly) and "not proven to compute: 1 of 2 compute" in proof.change(partly)
    # the report's words follow: the finding's line, the library's draft, AUTHOR.md
    assert "computes WRONG on ascend-lowered" in fit_md.fit_line(wrong)
    assert "A smaller config alone is no fix" in " ".join(fit_md.issue_paragraph({"fit": wrong}))
    record = {"kernel": "row_sum_whole_row", "case": CASE_ID, "status": "failed", "reason": "ub overflow",
              "fit": wrong}
    author = render_author(record, "ascend-compile", "a config the target cannot hold", "python repro.py")
    assert "## What fits, and what to change" in author
    assert "Change: the kernel assumes one block covers the row: x." in author


class _Tier:
    """A compile tier whose proofs run on this environment's interpreter (as cuda-compile's do)."""

    name = "cuda-compile"
    proves_on = ("interpret",)


@pytest.mark.parametrize("spec, computes", [(planted_rowsum.SPECS[0], False), (planted_rowsum.SPECS[1], True)],
                         ids=["whole-row", "looped-twin"])
def test_a_fitting_block_is_run_against_fp64_before_it_is_called_a_fix(spec, computes, tmp_path, monkeypatch):
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))  # a cold proof cache: the child runs
    monkeypatch.setattr(prove, "_PROVEN", {})
    fit = _fit()
    record, compile_ = {"fit": fit}, {"kernel": spec.kernel.fn.__name__}
    prove.attach([record], [compile_], spec, SimpleNamespace(params=CASE, id=CASE_ID), 0, _Tier())
    found = fit["proof"]
    assert found["tier"] == "interpret" and found["why_not"] is None, found
    [entry] = found["configs"]
    assert entry["config"] == {"BLOCK": 16384} and entry["was"] == {"BLOCK": 65536}
    assert entry["computes"] is computes, entry
    if computes:  # the clean twin: the cap is proven, and called a fix
        assert proof.is_fix(fit) and "proven: each computes the fp64 answer on interpret" in proof.change(fit)
    else:  # the planted bug: the advice is the loop the kernel lacks, never the cap
        assert not proof.is_fix(fit)
        assert proof.change(fit).startswith("the kernel assumes one block covers the row")
        assert "BLOCK <=" not in proof.change(fit)
    json.dumps(fit)  # the record stays JSON
    # another case of the kernel with the same answer reuses the proof, which names the case it ran
    again = _fit()
    prove.attach([{"fit": again}], [compile_], spec, SimpleNamespace(params=CASE, id="other"), 0, _Tier())
    assert again["proof"]["case"] == CASE_ID and again["proof"]["configs"] == found["configs"]
    # and a later run reads the cached answer instead of running the tier again
    monkeypatch.setattr(prove, "_PROVEN", {})
    monkeypatch.setattr(prove, "run_proof", lambda *a, **k: pytest.fail("the cached proof was run again"))
    cached = _fit()
    prove.attach([{"fit": cached}], [compile_], spec, SimpleNamespace(params=CASE, id=CASE_ID), 0, _Tier())
    assert [e["computes"] for e in cached["proof"]["configs"]] == [computes]


def test_a_proof_that_cannot_run_says_why_and_claims_nothing(monkeypatch):
    fit = _fit()
    monkeypatch.setenv("PARITY_NO_PROOF", "1")
    prove.attach([{"fit": fit}], [{"kernel": "row_sum_whole_row_kernel"}], planted_rowsum.SPECS[0],
                 SimpleNamespace(params=CASE, id=CASE_ID), 0, _Tier())
    assert fit["proof"]["why_not"] == "PARITY_NO_PROOF is set" and not proof.is_fix(fit)
    monkeypatch.delenv("PARITY_NO_PROOF")
    nothing = SimpleNamespace(name="x-compile", proves_on=())
    fit = _fit()
    prove.attach([{"fit": fit}], [{"kernel": "k"}], planted_rowsum.SPECS[0],
                 SimpleNamespace(params=CASE, id=CASE_ID), 0, nothing)
    assert "no tier that computes" in fit["proof"]["why_not"] and "not proven" in proof.change(fit)


def test_a_compile_only_probe_has_nothing_to_compare_so_nothing_is_proven():
    from tests.planted_fit import PLANTED_FIT

    fit = _fit("BM <= 128 (it passed 256)")
    prove.attach([{"fit": fit}], [{"kernel": "planted_fit_kernel"}], PLANTED_FIT,
                 SimpleNamespace(params={"BM": 256, "K": 1024}, id="BM=256,K=1024"), 0, _Tier())
    assert "compile-only probe" in fit["proof"]["why_not"] and not proof.is_fix(fit)
    assert "not proven to compute" in proof.change(fit)


def test_a_config_of_compile_options_only_runs_as_launched():
    # fewer stages change no arithmetic on a CPU tier: the launch itself is what runs (the whole row fits here)
    spec = planted_rowsum.SPECS[0]
    answer = prove.run_proof("interpret", spec, CASE, 0, spec.kernel.fn.__name__, [{"num_stages": 1}])
    [entry] = answer["configs"]
    assert entry["config"] == {} and entry["computes"] is True and "run as launched" in entry["detail"], answer


# --- a reordered sum is judged by its rounding, never by a bare elementwise tolerance ---------------------------

def test_within_rounding_names_the_test_that_held_and_by_how_much():
    ok = {"out": {"max_abs_err": 1e-4, "passed": True}}
    assert proof.within_rounding(ok, None) == (True, "tolerance", "within the spec's tolerance")
    # the user's row sum of 2026-12-06: 5e-4 on 366 is outside the tolerance, 1.25x the launched config's error
    reordered = {"out": {"max_abs_err": 5e-4, "passed": False}}
    launched = {"out": {"max_abs_err": 4e-4, "passed": True}}
    computes, criterion, sentence = proof.within_rounding(reordered, launched, was="the launched BLOCK=1024")
    assert (computes, criterion) == (True, "original")
    assert sentence.startswith("within the rounding of the launched BLOCK=1024: output 'out': max_abs_err 0.0005 "
                               "is 1.25x the launched BLOCK=1024's 0.0004")
    # a dropped tail: off by the size of the terms, not by rounding
    dropped = {"out": {"max_abs_err": 180.0, "passed": False}}
    computes, _, sentence = proof.within_rounding(dropped, launched)
    assert computes is False and "4.5e+05x" in sentence and "over the 16x" in sentence
    # nothing right to compare with: not judged either way
    assert proof.within_rounding(reordered, {"out": {"max_abs_err": 1.0, "passed": False}})[0] is None
    assert proof.within_rounding(reordered, {"out": {"max_abs_err": 0.0, "passed": True}})[0] is None
    assert proof.within_rounding(reordered, None)[0] is None
    # the accumulation bound's seam (parity.run.rounding): where it holds, it is the criterion named
    held = proof.within_rounding(dropped, launched, bound=lambda failing: (True, "λ√n·u·Σ|terms| 2e2"))
    assert held[:2] == (True, "bound") and "accumulation bound" in held[2]
    # where the model was taken and says beyond, no ratio to the launched config rescues the config
    beyond = proof.within_rounding(dropped, launched, bound=lambda failing: (False, "12x the bound"))
    assert beyond[:2] == (False, "bound") and beyond[2].startswith("beyond the accumulation bound")


def test_a_reordered_long_sum_computes_and_a_dropped_tail_is_still_wrong(tmp_path, monkeypatch):
    from tests import planted_reorder

    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    spec = planted_reorder.SPECS[0]
    [entry] = prove.run_proof("interpret", spec, CASE, 0, spec.kernel.fn.__name__, [{"BLOCK": 64}])["configs"]
    # outside the spec's tolerance (1.5e-4), inside the accumulation bound (parity.run.rounding)
    assert entry["status"] == "failed" and entry["computes"] is True and entry["criterion"] == "bound", entry
    assert entry["detail"].startswith("within the accumulation bound: output 'out': within fp32 rounding")
    fit = {**_fit(), "proof": {"tier": "interpret", "case": CASE_ID, "why_not": None, "kernel_change": None,
                               "configs": [entry]}}
    assert "BLOCK=64: within the accumulation bound" in proof.verdict_words(fit["proof"])
    # the negative control: the whole-row kernel's smaller block drops the tail, judged by the same test
    wrong = planted_rowsum.SPECS[0]
    [entry] = prove.run_proof("interpret", wrong, CASE, 0, wrong.kernel.fn.__name__, [{"BLOCK": 16384}])["configs"]
    # the model was taken and is decisive: beyond fp32 rounding, whatever the launched config's error
    assert entry["computes"] is False and entry["criterion"] == "bound", entry
    assert entry["detail"].startswith("beyond the accumulation bound: output 'out': beyond fp32 rounding")
