"""parity envelope's pure parts: axes, the search, the limits and the sentences, each with a control."""

from __future__ import annotations

from typing import Any

import pytest

import parity.compile.offsets as offsets
import parity.envelope.axes as axes
import parity.envelope.growth as growth
import parity.envelope.limits as limits
from parity.envelope.limits import Observation


def test_grow_parses_sizes_and_refuses_what_it_cannot_read():
    assert axes.parse_grow("T=1..1M,B=1..64") == [axes.Axis("T", 1, 1 << 20), axes.Axis("B", 1, 64)]
    assert axes.parse_grow("T=..64K") == [axes.Axis("T", 0, 65536)]
    for bad in ("T", "T=1..x", "T=64..1"):
        with pytest.raises(axes.AxisError):
            axes.parse_grow(bad)


def test_axes_start_from_the_largest_case_and_default_to_1m():
    params = axes.base_params([{"T": 100, "B": 2}, {"T": 4097, "B": 1}, {"T": 5, "B": 9}], ["T"])
    assert params == {"T": 4097, "B": 1}
    assert axes.axes_for(("T",), [], params) == [axes.Axis("T", 4097, 1 << 20)]
    assert axes.axes_for(("T",), axes.parse_grow("B=1..64"), params) == [axes.Axis("B", 1, 64)]


def crossing_at(first_bad: int) -> tuple[list[int], growth.Found[int]]:
    calls: list[int] = []

    def check(size: int) -> tuple[bool, int]:
        calls.append(size)
        return size >= first_bad, size

    return calls, growth.search(check, 1000, 1 << 20)


@pytest.mark.parametrize("first_bad", [1001, 131009, 524281, 1 << 20])
def test_search_finds_the_exact_first_crossing_and_the_size_below(first_bad):
    calls, found = crossing_at(first_bad)
    assert (found.last_ok, found.first_bad) == (first_bad - 1, first_bad)
    assert first_bad in calls and first_bad - 1 in calls  # both proven by a check of their own


def test_search_says_safe_to_the_maximum_and_crossed_at_the_start():
    _, safe = crossing_at(10**9)
    assert (safe.last_ok, safe.first_bad) == (1 << 20, None)
    _, early = crossing_at(1)
    assert (early.last_ok, early.first_bad) == (None, 1000)


def ascend_grid(t: int) -> tuple[bool, Observation]:
    obs = Observation("ascend", {"T": t}, grids=[["k", [-(-t // 64), 32, 1]]])
    return bool(limits.crossings(obs)), obs


def test_a_linear_figure_guesses_the_crossing_in_a_few_checks():
    calls: list[int] = []

    def check(t: int) -> tuple[bool, Observation]:
        calls.append(t)
        return ascend_grid(t)

    found = growth.search(check, 1000, 1 << 20, limits.guess)
    assert (found.last_ok, found.first_bad) == (131008, 131009)
    assert len(calls) <= 24, calls  # five steps up, then the guess and bisection


def test_grid_limits_of_each_target_and_their_controls():
    assert limits.grid_crossing(Observation("ascend", {}, grids=[["k", [2048, 32, 1]]])) is not None
    assert limits.grid_crossing(Observation("ascend", {}, grids=[["k", [2047, 32, 1]]])) is None
    assert limits.grid_crossing(Observation("cuda", {}, grids=[["k", [2048, 32, 1]]])) is None
    assert limits.grid_crossing(Observation("cuda", {}, grids=[["k", [1, 65536, 1]]])) is not None
    assert limits.grid_crossing(Observation("cuda", {}, grids=[["k", [2**31 - 1, 1, 1]]])) is None


def test_int32_offsets_need_an_i32_ttir_and_an_offset_past_2_31():
    over = {"x": 2**31 + 1}
    assert limits.int32_crossing(Observation("cuda", {}, numels=over, offsets="i32")) is not None
    assert limits.int32_crossing(Observation("cuda", {}, numels={"x": 2**31}, offsets="i32")) is None
    assert limits.int32_crossing(Observation("cuda", {}, numels=over, offsets="i64")) is None
    assert limits.int32_crossing(Observation("cuda", {}, numels=over, offsets="mixed")) is None


def test_offset_width_reads_tt_addptr():
    i32 = "%5 = tt.addptr %4, %3 : tensor<64x!tt.ptr<f32>>, tensor<64xi32> loc(#loc)\n"
    i64 = "%9 = tt.addptr %arg0, %8 : !tt.ptr<f16>, i64\n"
    assert offsets.offset_width(i32) == "i32"
    assert offsets.offset_width(i64) == "i64"
    assert offsets.offset_width(i32 + i64) == "mixed"
    assert offsets.offset_width("tt.return") is None


def test_a_launcher_that_reads_values_is_not_checked_and_one_that_does_not_runs():
    import torch

    import parity.envelope.meta as meta

    def inputs(p, gen):
        return {"x": torch.randn((p["T"], 4), generator=gen)}

    made = meta.meta_inputs(inputs, {"T": 1 << 40}, "cuda")  # 4 * 2^40 floats: nothing allocated
    assert made["x"].is_meta and made["x"].device.type == "cuda" and made["x"].shape == (1 << 40, 4)
    shapes = meta.meta_launch(lambda ins, p: {"y": torch.empty_like(ins["x"])}, "cuda")(made, {})
    assert shapes["y"].is_meta and meta.numels(shapes) == {"y": 4 << 40}
    reads = meta.meta_launch(lambda ins, p: {"n": int(ins["x"][0, 0].item())}, "cuda")
    with pytest.raises(meta.NeedsData, match=meta.NEEDS_DATA):
        reads(made, {})


def test_sentences_say_the_crossing_its_proof_and_a_safe_kernel():
    import parity.envelope.rendering as rendering

    bad = limits.crossings(Observation("ascend", {}, grids=[["k", [2048, 32, 1]]],
                                       launch_errors=[["k", "grid should be less than 65536!"]]))
    row = {"kernel": "k", "target": "ascend", "target_name": "Ascend", "axis": {"name": "T", "low": 1000, "high": MAX},
           "params": {"B": 1, "H": 32, "T": 1000}, "last_ok": 131008, "first_bad": 131009,
           "crossings": [c.__dict__ for c in bad], "bad_probe": {}, "ok_probe": {"offsets": "i32"},
           "storm": {"sizes": [1008, 1024, 1040], "compiles": 1}}
    text = rendering.sentence(row)
    assert "k ports on Ascend up to T = 131,008 (B=1, H=32); at T >= 131,009" in text
    assert "65,536 programs passes 65,535" in text and "grid should be less than 65536!" in text
    safe = {**row, "last_ok": MAX, "first_bad": None, "crossings": []}
    assert "the production maximum: no limit crossed" in rendering.sentence(safe)
    assert "| k | Ascend | T | 131,008 | 131,009 | grid | 1 |" in rendering.table([row])


MAX = 1 << 20


def test_a_figure_that_grows_in_steps_is_found_by_galloping_down_from_the_guess():
    calls: list[int] = []

    def check(t: int) -> tuple[bool, Observation]:  # the GDN chunk grid: (cdiv(T, 16), 2) passes 65,535 at 524,273
        calls.append(t)
        obs = Observation("ascend", {"T": t}, grids=[["k", [-(-t // 16), 2, 1]]])
        return bool(limits.crossings(obs)), obs

    found = growth.search(check, 1000, 1 << 20, limits.guess)
    assert (found.last_ok, found.first_bad) == (524272, 524273)
    assert {524272, 524273} <= set(calls) and len(calls) <= 16, calls  # bisection alone took 25


def test_storm_sizes_stay_inside_the_axis_and_too_few_are_not_checked():
    from parity.envelope import storm, tier

    assert storm.sizes(1000, 1 << 20) == [1008, 1024, 1040]
    assert storm.sizes(1, 40) == [16, 32]  # 48 would pass the maximum
    assert storm.sizes(1048579, 1 << 20) == [1048592, 1048608, 1048624]  # the spec's own case is past it
    asked: list[object] = []

    class Counting:
        def compiles_over(self, *args: object) -> int:
            asked.append(args)
            return 1

    row = tier.storm(Counting(), None, {}, axes.Axis("Hq", 20, 32))  # type: ignore[arg-type]
    assert row["compiles"] is None and "holds no two sizes 16 apart" in row["why"] and not asked
    assert tier.storm(Counting(), None, {}, axes.Axis("T", 1000, 1 << 20))["compiles"] == 1  # the control  # type: ignore[arg-type]
    failed = tier.storm(Counting(), None, {}, axes.Axis("T", 1000, 1 << 20), start_passed=False)  # type: ignore[arg-type]
    assert failed["compiles"] is None and "the axis start, did not pass" in failed["why"] and len(asked) == 2


@pytest.mark.parametrize("failed", [False, True])
def test_a_launch_that_failed_makes_the_compile_count_not_checked(tmp_path, failed):
    from types import SimpleNamespace

    import parity.envelope.memo as memo
    from parity.envelope.probe import Prober
    from parity.spec.registry import build

    compile_ = {"kernel": "k", "ok": True, "launch_error": None}
    too_big = {"kernel": "k", "ok": False, "error_kind": "ub_overflow", "launch_error": None}  # an autotune config
    records = [compile_, too_big, {"kernel": "k", "ok": False, "launch_error": "RuntimeError: no grid"}]
    prober = Prober.__new__(Prober)
    prober.backend = SimpleNamespace(compile_case=lambda *a: records if failed else records[:2])  # type: ignore[assignment]
    prober.device_type, prober.tier, prober.target = "cuda", "cuda-compile", "cuda"
    prober.memo = memo.Memo(tmp_path, read=False)
    spec = build(["tests.planted_envelope:env_safe"], include_shared=False)[1][0]
    assert prober._compiles_over(spec, {"T": 1000}, "T", [1008, 1024]) == (None if failed else 2)


def _start_spec(known: tuple[Any, ...] = ()) -> Any:
    from dataclasses import replace

    from parity.cases import by_level
    from parity.spec import Case, KnownDivergence
    from parity.spec.registry import build

    cases = [Case({"T": 1000, "seqlens": (400, 600), "use_g": 0}), Case({"T": 1000, "use_g": 0}),
             Case({"T": 900, "use_g": 1}), Case({"T": 100, "use_g": 1})]
    if known:
        known = tuple(KnownDivergence(backend="ascend", applies=lambda p: not p["use_g"], reason="planted", link=k)
                      for k in known)
    spec = build(["tests.planted_envelope:env_safe"], include_shared=False)[1][0]
    return replace(spec, cases=by_level(cases), known_divergences=known)


class _Observer:
    tier, target = "ascend-compile", "ascend"

    def __init__(self, unreadable: str = "") -> None:
        self.unreadable, self.seen = unreadable, []

    def observe(self, spec: Any, params: Any) -> Observation:
        self.seen.append(dict(params))
        return Observation("ascend", dict(params), not_checked="reads values" if self.unreadable in params else None)


def test_the_start_passes_over_a_known_divergence_and_a_case_meta_tensors_cannot_check():
    from parity.envelope import start

    plain = start.choose(_Observer(), _start_spec(), [], ["T"])  # the control: the largest case, the varlen one
    assert plain.params["seqlens"] == (400, 600) and plain.notes == []
    unread = start.choose(_Observer("seqlens"), _start_spec(), [], ["T"])
    assert "seqlens" not in unread.params and unread.params["T"] == 1000
    assert "was not checked on meta tensors: reads values" in unread.notes[0]
    known = start.choose(_Observer(), _start_spec(known=("https://example.org/1",)), [], ["T"])
    assert known.params == {"T": 900, "use_g": 1} and "2 case(s) with a known divergence on ascend" in known.notes[0]


def test_a_grid_refused_by_the_compile_tiers_own_check_is_not_quoted_as_the_launcher():
    from parity.backends.ascend.diagnostics import grid_finding

    ours = grid_finding([65536, 1, 1])
    assert ours is not None
    tier = limits.grid_crossing(Observation("ascend", {}, grids=[["k", [65536, 1, 1]]], launch_errors=[["k", ours]]))
    assert tier is not None and tier.evidence.startswith("ascend-compile's launch check refused it")
    assert "grid should be less than 65536!" in tier.evidence and "the launcher says" not in tier.evidence
    real = "RuntimeError: grid should be less than 65536! You can try ..."  # the control: the launcher's own words
    said = limits.grid_crossing(Observation("ascend", {}, grids=[["k", [65536, 1, 1]]], launch_errors=[["k", real]]))
    assert said is not None and said.evidence.startswith("the launcher says 'RuntimeError: grid should be less")
