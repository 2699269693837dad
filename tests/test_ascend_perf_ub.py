"""UB use: which larger configs are tried, and a claim becomes advice only once it computes (no toolchain needed)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from parity.backends.ascend import perf_ub
from parity.perf import proof as perf_proof


def test_larger_candidates_are_the_autotune_lists_and_the_blocks_doubled_smallest_first():
    own = [{"BLOCK": 32}, {"BLOCK": 256, "num_warps": 4}, {"BLOCK": 1024}]
    found = perf_ub.larger_candidates({"BLOCK": 64}, own)
    assert found == [{"BLOCK": 128}, {"BLOCK": 256, "num_warps": 4}, {"BLOCK": 512}, {"BLOCK": 1024},
                     {"BLOCK": 2048}, {"BLOCK": 4096}]  # the list's 256 and 1024 once, as listed
    two_d = perf_ub.larger_candidates({"BLOCK_M": 16, "BLOCK_N": 32}, [], grow=["BLOCK_M"])
    assert two_d[0] == {"BLOCK_M": 32, "BLOCK_N": 32} and two_d[-1] == {"BLOCK_M": 1024, "BLOCK_N": 32}


def test_a_block_that_covers_the_extent_it_is_masked_by_does_not_grow():
    source = "def k(x, n_rows, N, BN: tl.constexpr):\n    o = tl.arange(0, BN)\n    tl.load(x + o, mask=o < N)\n"
    assert perf_ub.extents(source) == {"N"}
    assert perf_ub.growable({"BN": 1024}, source, {"N": 1024, "n_rows": 4096}) == {}  # softmax's whole row
    assert perf_ub.growable({"BN": 1024}, source, {"N": 65536}) == {"BN": 1024}  # a tile of a long row
    block_ptr = "def k(x, T, K: tl.constexpr, BK: tl.constexpr):\n    p = tl.make_block_ptr(x, (T, K), (K, 1), " \
                "(0, 0), (64, BK), (1, 0))\n"
    assert perf_ub.extents(block_ptr) == {"T", "K"}
    assert perf_ub.growable({"BK": 64}, block_ptr, {"T": 4096, "K": 64, "BK": 64}) == {}  # BK = K: the whole row


def _record(computes: Any) -> dict[str, Any]:
    claim = {"config": {"BLOCK": 64}, "used": 2048, "of": 1572864, "larger": {"BLOCK": 4096},
             "larger_used": 131072}
    return {"kernel": "spec", "compile": {"kernel": "k"},
            "ascend_perf": {"findings": [], "not_checked": {"ub.larger_fits": "not yet run"}, "ub_claim": claim}}


@pytest.mark.parametrize("computes", [True, False, None])
def test_a_claim_is_advice_only_once_it_computes_the_fp64_answer(computes, monkeypatch):
    def fake_prove(fit, kernel, spec, params, case_id, seed, backend):
        assert kernel == "k" and fit["fitting"] == [{"config": {"BLOCK": 4096}}]
        entry = {"config": {"BLOCK": 4096}, "computes": computes, "detail": "output 'y': 100 % wrong"}
        fit["proof"] = {"tier": "ascend-lowered", "case": case_id, "configs": [] if computes is None else [entry],
                        "why_not": "no tier that computes is installed here" if computes is None else None}

    monkeypatch.setattr(perf_proof, "prove_fit", fake_prove)
    record = _record(computes)
    perf_proof.attach([record, {"kernel": "other"}], None, SimpleNamespace(params={"N": 8}, id="N=8"), 0, None)
    advice = record["ascend_perf"]
    assert advice["ub_claim"]["proof"]["tier"] == "ascend-lowered"
    if computes:  # the planted small tile: proven, so said
        [found] = advice["findings"]
        assert found["rule"] == "ub.larger_fits" and found["evidence"].startswith("larger tiles fit: BLOCK=64")
        assert "BLOCK=4096" in found["evidence"] and "ascend-lowered at N=8" in found["evidence"]
        assert "ub.larger_fits" not in advice["not_checked"]
    else:  # compiled but wrong, or never run: no advice, and why
        assert advice["findings"] == []
        why = advice["not_checked"]["ub.larger_fits"]
        assert ("computes WRONG" in why) if computes is False else ("not proven" in why and "installed" in why)


CAPACITY = 1_572_864  # Ascend910B3's UB in bits


def _tier(plan_bits_per_element: int, fits_up_to: int) -> Any:
    """A FitTier whose probe plans `bits per element x BLOCK` and fits up to a BLOCK."""
    def probe(src, target, options, config):
        block = config["BLOCK"]
        return {"ok": block <= fits_up_to, "used": plan_bits_per_element * block, "of": CAPACITY, "error_kind": None}
    return SimpleNamespace(name="ascend-compile", arch="Ascend910B3", unit="bits", capacity=CAPACITY,
                           probe=probe, deadline=None)


def _attempt(block: int, n: int = 1 << 22) -> Any:
    text = "def k(x, n, BLOCK):\n    o = tl.arange(0, BLOCK)\n    tl.load(x + o, mask=o < n)\n"
    src = SimpleNamespace(fn=SimpleNamespace(arg_names=["x", "n", "BLOCK"], src=text),
                          constants={"BLOCK": block}, signature={"x": "*fp32"})
    return SimpleNamespace(source=(src, None, {}), launch_args={"tensors": {}, "scalars": {"n": n}})


@pytest.mark.parametrize(("block", "n", "fits_up_to", "claim"), [
    (64, 1 << 22, 1 << 20, {"BLOCK": 4096}),  # the planted small tile: 2,048 bits; 64 times larger still 8 %
    (1024, 1 << 22, 1 << 20, {"BLOCK": 16384}),  # smallest first: the first to plan a quarter (524,288 bits)
    (1024, 1 << 22, 8192, {"BLOCK": 8192}),  # else the largest that fits
    (16384, 1 << 22, 1 << 20, None),  # its twin: 524,288 bits, over a quarter of the buffer
    (64, 1 << 22, 64, None),  # a small plan where nothing larger fits: the kernel's limit, nothing to say
    (64, 64, 1 << 20, None),  # the block already covers the n it is masked by: growing it adds masked lanes
])
def test_only_a_small_plan_with_a_larger_fitting_config_is_claimed(block, n, fits_up_to, claim, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    answer = perf_ub.judge({"kernel": "k"}, _attempt(block, n), [], _tier(32, fits_up_to))
    assert (answer.get("claim") or {}).get("larger") == claim, answer
    assert "not_checked" not in answer


# --- a larger tile is advised only where its grid keeps the cores busy (rule 1's own test) ---------------------

VECTOR_OP = ("def k(x, y, out, n, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n"
             "    o = pid * BLOCK + tl.arange(0, BLOCK)\n"
             "    tl.store(out + o, tl.load(x + o, mask=o < n) + tl.load(y + o, mask=o < n), mask=o < n)\n")


def _vector_op(block: int, n: int) -> tuple[Any, Any]:
    """(attempt, evidence) of the plain vector op on Ascend910B1 (48 vector cores), grid cdiv(n, BLOCK)."""
    from parity.backends.ascend.arch import ASCEND_ARCHS
    from parity.backends.ascend.perf_rules import Evidence, SourceText, TensorArg

    grid = (-(-n // block),)
    src = SimpleNamespace(fn=SimpleNamespace(arg_names=["x", "y", "out", "n", "BLOCK"], src=VECTOR_OP),
                          constants={"BLOCK": block}, signature={"x": "*fp32"})
    attempt = SimpleNamespace(source=(src, None, {}), launch_args={"tensors": {}, "scalars": {"n": n}}, grid=grid)
    tensors = {k: TensorArg("float32", 4, (n,), (1,)) for k in ("x", "y", "out")}
    ev = Evidence("k", ASCEND_ARCHS["Ascend910B1"], grid, "aiv", (SourceText("k", VECTOR_OP),), {"BLOCK": block},
                  {"n": n}, tensors)
    return attempt, ev


@pytest.mark.parametrize(("block", "n", "claim", "withheld"), [
    (1024, 393_216, {"BLOCK": 8192}, "BLOCK=16384 is not advised"),  # 48 programs: the largest that keeps 48 busy
    (8192, 393_216, None, "BLOCK=16384 is not advised"),  # 48 programs already: any larger tile idles cores
    (1024, 65_536, None, "cannot show"),  # a launch the cores rule calls too small to judge: nothing claimed
    (1024, 1 << 24, {"BLOCK": 16384}, None),  # control: 1,024 programs on 48 cores, 22 waves, 97 % used
])
def test_a_larger_tile_is_advised_only_where_its_grid_keeps_the_cores_busy(block, n, claim, withheld, tmp_path,
                                                                          monkeypatch):
    from parity.backends.ascend.perf_cores import grid_findings

    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    attempt, ev = _vector_op(block, n)
    answer = perf_ub.judge({"kernel": "k"}, attempt, [], _tier(32, 1 << 20), ev)
    found = (answer.get("claim") or {}).get("larger")
    assert found == claim, answer
    why = answer.get("withheld") or (answer.get("claim") or {}).get("held_back")
    assert (withheld in why) if withheld else why is None, answer
    if withheld and "BLOCK=16384" in withheld:
        assert "(24,)" in why and "cores.idle" in why  # the grid it would have, and the rule that flags it
    if claim:  # what is advised, the cores rule leaves alone
        implied = perf_ub.implied_grid(ev.grid, VECTOR_OP, {"BLOCK": block}, claim)
        assert implied == (-(-n // claim["BLOCK"]),)
        assert grid_findings(dataclasses.replace(ev, grid=implied)) == []
    # the negative control: without the launch's evidence (the check this guards removed) the bug comes back
    if (block, n) == (1024, 393_216):
        blind = perf_ub.judge({"kernel": "k"}, attempt, [], _tier(32, 1 << 20))
        assert blind["claim"]["larger"] == {"BLOCK": 16384}


def test_the_withheld_advice_reaches_the_record_as_checked_with_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    attempt, ev = _vector_op(8192, 393_216)
    compile_ = {"kernel": "k", "ok": True, "ascend_perf": {"findings": [], "not_checked": {"ub.larger_fits": "x"}}}
    perf_ub.attach([compile_], [attempt], [], _tier(32, 1 << 20), {id(attempt): ev})
    advice = compile_["ascend_perf"]
    assert "ub_claim" not in advice and "ub.larger_fits" not in advice["not_checked"]
    assert advice["ub_withheld"].startswith("BLOCK=16384 is not advised: its grid (24,) would be flagged")


def test_a_grid_no_program_id_tiles_by_the_block_is_kept():
    persistent = "def k(x, n, BLOCK: tl.constexpr):\n    for t in range(tl.program_id(0), n, tl.num_programs(0)):\n" \
                 "        o = t * BLOCK + tl.arange(0, BLOCK)\n"
    assert perf_ub.implied_grid((48,), persistent, {"BLOCK": 1024}, {"BLOCK": 8192}) == (48,)
    assert perf_ub.implied_grid((384, 4), VECTOR_OP, {"BLOCK": 1024}, {"BLOCK": 16384}) == (24, 4)
    assert perf_ub.implied_grid((7,), VECTOR_OP, {"BLOCK": 1024}, {"BLOCK": 2048}) == (4,)  # cdiv, not floor


def test_tiles_sized_by_other_names_are_named_where_the_rule_does_not_grow_them(tmp_path, monkeypatch):
    from parity.backends.ascend.arch import ASCEND_ARCHS
    from parity.backends.ascend.perf_rules import Evidence, SourceText

    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    text = "def k(x, R, C, BR: tl.constexpr, BC: tl.constexpr):\n    p = tl.make_block_ptr(x, (R, C), (C, 1), " \
           "(0, 0), (BR, BC), (1, 0))\n"
    src = SimpleNamespace(fn=SimpleNamespace(arg_names=["x", "R", "C", "BR", "BC"], src=text),
                          constants={"BR": 64, "BC": 64}, signature={"x": "*fp32"})
    attempt = SimpleNamespace(source=(src, None, {}), launch_args={}, grid=(48,))
    ev = Evidence("k", ASCEND_ARCHS["Ascend910B1"], (48,), "aiv", (SourceText("k", text),), {"BR": 64, "BC": 64})
    why = perf_ub.judge({"kernel": "k"}, attempt, [], _tier(32, 1 << 20), ev)["not_checked"]
    assert why.startswith("BC, BR size tiles but are not enlarged")
    assert perf_ub.judge({"kernel": "k"}, attempt, [], _tier(32, 1 << 20))["not_checked"].startswith("no block")


def test_a_larger_tile_of_a_reordered_sum_says_which_rounding_test_held(monkeypatch):
    sentence = ("within the rounding of the launched BLOCK=64: output 'y': max_abs_err 0.0005 is 1.25x the launched "
                "BLOCK=64's 0.0004 on the same inputs (at most 16x), though outside the spec's elementwise tolerance")

    def fake_prove(fit, kernel, spec, params, case_id, seed, backend):
        fit["proof"] = {"tier": "ascend-lowered", "case": case_id, "why_not": None, "configs": [
            {"config": {"BLOCK": 4096}, "computes": True, "criterion": "original", "detail": sentence}]}

    monkeypatch.setattr(perf_proof, "prove_fit", fake_prove)
    record = _record(True)
    perf_proof.attach([record], None, SimpleNamespace(params={"N": 8}, id="N=8"), 0, None)
    [found] = record["ascend_perf"]["findings"]
    assert f"computes the fp64 answer on ascend-lowered at N=8 ({sentence})" in found["evidence"]
