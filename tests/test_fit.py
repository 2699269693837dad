"""Controls for the fit advisor (parity.fit) and its report sections (parity.report.fit_md).

The search rules run everywhere with a fake tier; the real-compile control (a planted kernel whose only
fitting tile is a specific smaller one, tests/fit_controls.py) runs in a fresh process with the
interpreter off and skips without upstream triton's nvidia backend.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from parity.fit import candidates, hook, probe, search
from parity.report import fit_md

CONTROLS = Path(__file__).with_name("fit_controls.py")


# --- candidates ---------------------------------------------------------------------------------

def test_block_keys_are_tiles_never_problem_sizes():
    config = {"BLOCK_SIZE": 32768, "BT": 64, "BV": 64, "LARGE_BLOCK_T": 1216, "HEAD_DIM": 128, "D": 64, "K": 128,
              "BLOCK_M": 3, "IS_CAUSAL": True, "XBLOCK": 1024}
    # fla's BT is the chunk size all kernels of the algorithm share: never a tile to halve
    assert candidates.block_keys(config) == ["BLOCK_SIZE", "BV", "LARGE_BLOCK_T", "XBLOCK"]
    assert candidates.halvings(128) == [128, 64, 32, 16]
    assert candidates.halvings(1216) == [1216, 608, 304]  # 152 is no multiple of 16
    assert candidates.halvings(16) == [16]


def test_autotune_configs_come_first_then_derived_largest_tile_first():
    own = [{"BLOCK_M": 64, "BLOCK_N": 64}, {"BLOCK_M": 128, "BLOCK_N": 128}]
    failing = {"BLOCK_M": 128, "BLOCK_N": 128, "num_stages": 3}
    found = candidates.ordered(own, failing, {"num_stages": [2, 1]})
    assert found[:2] == [{"BLOCK_M": 128, "BLOCK_N": 128}, {"BLOCK_M": 64, "BLOCK_N": 64}]
    derived = found[2:]
    assert failing not in derived
    assert derived[0] == {"BLOCK_M": 128, "BLOCK_N": 128, "num_stages": 2}  # same tile, one stage fewer
    tiles = [c["BLOCK_M"] * c["BLOCK_N"] for c in derived]
    assert tiles == sorted(tiles, reverse=True)


GATHER_LIKE = """
def k(src_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, S0: tl.constexpr, OUT_R: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * S0 + tl.arange(0, C)[None, :]
    cols = tl.arange(0, C)[None, :]
    tl.store(out_ptr + tl.arange(0, OUT_R)[:, None] * S0 + cols, tl.load(src_ptr + offs))
"""


def test_row_extents_are_the_leading_aranges_and_split_together():
    constants = {"R": 128, "C": 64, "S0": 64, "OUT_R": 128}
    assert candidates.row_extents(GATHER_LIKE, constants) == ["OUT_R", "R"]  # C is a column extent
    assert candidates.row_extents("def k(: pass", constants) == []
    assert candidates.row_splits({"R": 128, "OUT_R": 96}, ["OUT_R", "R"]) == [
        {"OUT_R": 48, "R": 64}, {"OUT_R": 24, "R": 32}, {"OUT_R": 12, "R": 16}, {"OUT_R": 6, "R": 8}]


def test_row_advice_names_the_block_that_compiled_or_says_none_did():
    rows = ["R"]
    fits = [({"R": 64}, {"ok": True, "used": 1179648, "of": 1572864}), ({"R": 32}, {"ok": True, "used": None})]
    text = search.row_advice({"R": 128}, rows, fits, "bits")
    assert text == ("tile the rows: the launcher must pass a row block and a grid over it (a compile at R=64 fits, "
                    "1,179,648 of 1,572,864 bits; it passed R=128), where its rows are independent")
    none = search.row_advice({"R": 128}, rows, [({"R": 64}, {"ok": False}), ({"R": 32}, {"ok": None})], "bits")
    assert none == "no tile constexpr to shrink, and row blocks down to 32 do not fit either (it passed R=128)"


def test_the_ub_plan_is_the_end_of_its_last_buffer():
    plan = {"Record": [{"scope": "ub", "memory_info_array": [
        {"offset": [0], "extent": 8192}, {"offset": [1024, 2048], "extent": 8192},  # multi-buffered: two copies
        {"offset": [2560], "extent": 4096}]},
        {"scope": "cbuf", "memory_info_array": [{"offset": [0], "extent": 1 << 30}]}]}
    assert probe.planned_ub_bits([plan]) == 2560 * 8 + 4096  # bytes to bits, the cube's buffers not counted
    odd = {"Record": [{"scope": "ub", "memory_info_array": [{"offset": [327680], "extent": 32}]}]}
    assert probe.planned_ub_bits([odd]) == 2_621_696  # Liger's V=32000 overflow: 2,621,472 to 32-byte blocks
    assert probe.planned_ub_bits([]) is None


# --- the search: a fake tier whose "compile" fits BLOCK <= 64 -----------------------------------

def _probe(config):
    if config.get("BLOCK") == 512:
        os._exit(3)  # a compiler that dies: never a fit
    return {"ok": config["BLOCK"] <= 64, "used": config["BLOCK"] * 1000, "of": 64000, "error_kind": None}


def test_only_successful_compiles_are_fitting_claims_and_the_search_stops_once_enough_fit():
    configs = [{"BLOCK": b} for b in (512, 256, 128, 64, 32, 16, 8, 4)]
    done = search.run_search(configs, _probe, enough=2)
    outcomes = {c["BLOCK"]: o for c, o in done}
    assert outcomes[512]["ok"] is None and outcomes[512]["error_kind"] == "crash"
    assert [b for b, o in outcomes.items() if o["ok"]] == [64, 32, 16]  # candidates go in pairs
    assert 8 not in outcomes  # stopped: enough fit
    record = search.fit_record(done, "Ascend910B3", "bits", 64000, 512000, None, 0.5)
    assert [f["config"] for f in record["fitting"]] == [{"BLOCK": 64}, {"BLOCK": 32}, {"BLOCK": 16}]
    assert record["smallest_need"] is None and record["searched"] == len(done)


def test_past_its_budget_the_search_compiles_nothing_but_keeps_what_the_case_compiled():
    def never(config):
        raise AssertionError("compiled past the budget")

    known = {repr({"BLOCK": 64}): {"ok": True, "used": 64000, "of": 64000, "error_kind": None}}
    done = search.run_search([{"BLOCK": 128}, {"BLOCK": 64}, {"BLOCK": 32}], never, known=known, budget_s=0)
    assert [(c["BLOCK"], o["ok"]) for c, o in done] == [(64, True)]


def test_none_fits_gives_the_smallest_need():
    done = search.run_search([{"BLOCK": 256}, {"BLOCK": 128}], _probe)
    record = search.fit_record(done, "Ascend910B3", "bits", 64000, 300000, None, 0.1)
    assert record["fitting"] == [] and record["smallest_need"] == 128000
    assert fit_md.fit_answer(record) == ("none of 2 searched fits Ascend910B3; the smallest need found is "
                                         "128,000 bits")


def test_hook_searches_once_per_kernel_and_names_the_launchers_cap(monkeypatch, tmp_path):
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    fn = SimpleNamespace(arg_names=["x", "n", "BLOCK_SIZE", "HEAD_DIM"], src="def k(): pass", __name__="k")
    src = SimpleNamespace(fn=fn, constants={"BLOCK_SIZE": 32768, "HEAD_DIM": 128}, signature={"x": "*fp32"})
    calls = []

    def probe(src_, target, options, config):
        calls.append(config)
        return {"ok": config["BLOCK_SIZE"] <= 8192, "used": config["BLOCK_SIZE"] * 64, "of": 1572864,
                "error_kind": None if config["BLOCK_SIZE"] <= 8192 else "ub_overflow"}

    tier = hook.FitTier("ascend-compile", "Ascend910B3", "bits", 1572864, lambda options: {}, probe)
    def failing():
        return {"kernel": "k", "variant": {}, "config": {}, "ok": False, "error_kind": "ub_overflow",
                "ub_bits": 2621696}

    compiles = [failing(), failing()]
    hook.attach(compiles, [(src, None, {}), (src, None, {})], [], tier)
    fit = compiles[0]["fit"]
    assert compiles[1]["fit"] is fit and all("HEAD_DIM" not in c for c in calls)
    assert [f["config"]["BLOCK_SIZE"] for f in fit["fitting"]] == [8192, 4096, 2048]
    assert fit["cap"] == "BLOCK_SIZE <= 8192 (it passed 32768)"
    # the cache answers a second search without compiling
    calls.clear()
    again = [failing()]
    hook.attach(again, [(src, None, {})], [], tier)
    assert calls == [] and again[0]["fit"]["fitting"] == fit["fitting"]
    monkeypatch.setenv("PARITY_NO_FIT", "1")
    off = [failing()]
    hook.attach(off, [(src, None, {})], [], tier)
    assert "fit" not in off[0]


def test_a_case_compile_counts_only_for_the_autotune_config_it_compiled(monkeypatch, tmp_path):
    """Configs that differ only in stages are distinct: the case's failing stages=7 compile is no proof that
    stages=3 fails, nor its fitting stages=3 compile that stages=7 fits."""
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    configs = [SimpleNamespace(kwargs={"BLOCK": 64}, num_warps=4, num_stages=s, all_kwargs=lambda: {}) for s in (3, 7)]
    kernel = SimpleNamespace(keys=["n"], configs=configs, fn=SimpleNamespace(fn=None))  # an Autotuner over a jit
    monkeypatch.setattr("parity.compile.counter.kernel_name", lambda k: "k")
    fn = SimpleNamespace(arg_names=["x", "BLOCK"], src="def k(): pass", __name__="k")
    src = SimpleNamespace(fn=fn, constants={"BLOCK": 64}, signature={"x": "*fp16"})
    probed = []

    def probe(src_, target, options, config):
        probed.append(config)
        return {"ok": False, "used": None, "of": None, "error_kind": "out_of_resources"}

    tier = hook.FitTier("cuda-compile", "sm_90", "bytes", 232448, lambda options: {}, probe)
    compiles = [{"kernel": "k", "variant": {}, "config": {"BLOCK": 64, "num_warps": 4, "num_stages": s}, "ok": ok,
                 "error_kind": None if ok else "out_of_resources", "shared_bytes": b}
                for s, ok, b in ((3, True, 100000), (7, False, 300000))]
    hook.attach(compiles, [None, (src, None, {"num_stages": 7})], [kernel], tier)
    fitting = [f["config"] for f in compiles[1]["fit"]["fitting"]]
    assert fitting == [{"BLOCK": 64, "num_warps": 4, "num_stages": 3}]
    assert {"BLOCK": 64, "num_warps": 4, "num_stages": 3} not in probed  # the case compiled it already


# --- the report ---------------------------------------------------------------------------------

def _record(arch, config, ok, ub_bits=None, fit=None):
    comp = {"kernel": "mm", "config": config, "ok": ok, "error_kind": None if ok else "ub_overflow",
            "ub_bits": ub_bits}
    return {"backend": "ascend-compile", "kernel": "gems_mm", "case": "M=1;cfg", "compile": comp,
            "status": "passed" if ok else "failed", **({"fit": fit} if fit else {}), "arch": arch}


def test_autotune_table_shows_a_config_that_fits_one_arch_but_not_another():
    records = [_record("Ascend910B3", {"BLOCK_M": 128, "num_warps": 4}, True),
               _record("Ascend910B4", {"BLOCK_M": 128, "num_warps": 4}, False, 2000000),
               _record("Ascend910B3", {"BLOCK_M": 64, "num_warps": 4}, True),
               _record("Ascend910B4", {"BLOCK_M": 64, "num_warps": 4}, True)]
    (title, body), = fit_md.autotune_fit_tables(records, {})
    assert title == "Autotune configs that fit: gems_mm"
    assert body.startswith("1 of 2 autotune configs fit on every arch listed.")
    assert "ub\\_overflow in 1/1 compiles (needs 2,000,000 bits)" in body


def test_report_and_issue_show_what_fits_and_the_cap():
    fit = {"searched": 4, "fitting": [{"config": {"BLOCK_SIZE": 16384}, "used": None, "of": 1572864}],
           "arch": "Ascend910B3", "unit": "bits", "smallest_need": None, "cap": "BLOCK_SIZE <= 16384 (it passed 32768)",
           "search_s": 1.9}
    record = _record("Ascend910B3", {}, False, 2621696, fit)
    (title, body), = fit_md.fit_sections([record, dict(record)], {})
    assert title == "Configs that fit (the fit advisor)" and body.count("gems\\_mm") == 1
    assert "1 of 4 searched fit Ascend910B3" in body and "BLOCK\\_SIZE \\<= 16384" in body
    text = "\n".join(fit_md.issue_paragraph(record))
    assert "`BLOCK_SIZE=16384`" in text and "cap it in the launcher: BLOCK_SIZE <= 16384" in text
    assert fit_md.issue_paragraph({"fit": None}) == []
    # a fit without its figure (a cube-only kernel, or no --enable-memory-display) says so
    assert fit_md.need_text(fit, None, 1572864) == "fits; bishengir gave no UB figure for it"
    rows = {**fit, "fitting": [], "smallest_need": 2359296, "cap": "tile the rows: the launcher must pass a row block"}
    assert fit_md.issue_paragraph({"fit": rows})[0] == (
        "No config parity tried fits: none of 4 searched fits Ascend910B3; the smallest need found is 2,359,296 bits. "
        "What to change: tile the rows: the launcher must pass a row block.")


def test_the_porting_verdict_carries_the_answer_and_what_to_change():
    from parity.report import findings, verdict
    from parity.triage.owner import make_owner

    fit = {"searched": 1, "fitting": [], "arch": "Ascend910B3", "unit": "bits", "smallest_need": 2359296,
           "cap": "tile the rows: the launcher must pass a row block and a grid over it", "search_s": 1.0}
    record = {**_record("Ascend910B3", {}, False, 2359296, fit), "suite": "compile",
              "owner": make_owner("library", "L", "a config the target cannot hold")}
    [finding] = findings.group([record], "ascend-compile")
    assert finding.fit == fit
    what = verdict._finding_row(1, finding, 160)[4]
    assert ("fit advisor: none of 1 searched fits Ascend910B3; the smallest need found is 2,359,296 bits; "
            "tile the rows") in what


# --- the real compile -------------------------------------------------------------------------

def test_fit_controls_pass_on_real_compiles():
    pytest.importorskip("triton.backends.nvidia.compiler")
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           str(CONTROLS)], env=env, cwd=CONTROLS.parent.parent, capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, f"fit controls failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
