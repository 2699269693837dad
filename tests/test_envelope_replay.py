"""parity envelope --replay's pure parts: a recording's axes, each member's fit, the grown launch, and the rows' words;
each inference with a control that shows it refuses what the recording does not say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import parity.envelope.axes as axes
import parity.envelope.rendering as rendering
import parity.envelope.replay_axes as ra
import parity.envelope.replayed as replayed
from parity.record.bundle import Bundle


def launch(t: int, grid: list[int], b: int = 1, h: int = 32, bt: int = 64, extra: dict[str, int] | None = None,
           ) -> dict[str, Any]:
    """One kept launch of `k(x, y, T, BT)` with x and y of shape (B, H, T), as the recorder writes it."""
    view = {"buffer": "b0", "dtype": "float32", "offset": 0, "shape": [b, h, t], "stride": [h * t, t, 1]}
    return {"id": f"1-{t}-{b}", "grid": grid, "kernel": {"params": [["x", False], ["y", False], ["T", False],
                                                                    ["BT", True]]},
            "args": [{"tensor": "t0"}, {"tensor": "t1"}, {"literal": str(t)}],
            "kwargs": {"BT": {"literal": str(bt)}, **{k: {"literal": str(v)} for k, v in (extra or {}).items()}},
            "views": {"t0": view, "t1": {**view, "buffer": "b1"}}, "buffers": {"b0": {}, "b1": {}}, "pointers": {}}


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def test_the_dimensions_that_vary_together_are_one_axis_named_by_the_argument():
    found = ra.infer([launch(t, [cdiv(t, 64), 32]) for t in (100, 300, 1000)])
    (axis,) = found.axes
    assert (axis.name, axis.low, axis.base) == ("T", 1000, 2)  # the integer argument, from the largest launch
    assert axis.described() == {"x.2": "T", "x.stride.0": "32·T", "x.stride.1": "T", "y.2": "T",
                                "y.stride.0": "32·T", "y.stride.1": "T", "T": "T", "grid.0": "cdiv(T, 64)"}
    assert axis.grid_unknown is None and axis.blocked is None
    values, why = axis.values_at(131009)
    assert why is None and values["grid.0"] == 2048 and values["x.stride.0"] == 32 * 131009


def test_two_independent_axes_each_keep_the_other_as_recorded():
    found = ra.infer([launch(t, [cdiv(t, 64), 32 * b], b=b) for t, b in ((100, 1), (1000, 1), (1000, 4))])
    by_name = {a.name: a for a in found.axes}
    assert set(by_name) == {"T", "x.0"}
    assert by_name["T"].fits["grid.0"][0].text("T") == "cdiv(T, 64)" and "grid.1" not in by_name["T"].fits
    assert by_name["x.0"].fits["grid.1"][0].text("x.0") == "32·x.0"
    assert not any(a.grid_unknown or a.blocked for a in found.axes)


def test_a_kernel_whose_launches_never_vary_gets_no_axis_and_is_told_to_name_one():
    found = ra.infer([launch(512, [8, 32]), launch(512, [8, 32])])
    assert found.axes == [] and "no axis varies between its launches; name one with --grow" in str(found.none_why)
    assert "one launch recorded" in str(ra.infer([launch(512, [8, 32])]).none_why)


def test_a_grid_that_follows_no_axis_is_not_checked_and_stays_as_recorded():
    found = ra.infer([launch(t, [g, 32]) for t, g in ((100, 7), (300, 3), (1000, 5))])  # planted: no function of T
    (axis,) = found.axes
    assert "grid.0" not in axis.fits and "grid.0" in str(axis.grid_unknown) and axis.blocked is None
    assert replayed.CHECKED_NO_GRID == "on-chip memory, int32 offsets, launcher"


def test_a_member_no_fit_explains_blocks_the_axis():
    # planted: an argument that grows with T but as T², neither linear nor a ceiling
    launches = [launch(t, [cdiv(t, 64), 32], extra={"TT": t * t}) for t in (100, 300, 1000)]
    (axis,) = ra.infer(launches).axes
    assert "TT (10,000, 90,000, 1,000,000) vary between launches as no single axis explains" in str(axis.blocked)
    (control,) = ra.infer([launch(t, [cdiv(t, 64), 32], extra={"T2": 2 * t}) for t in (100, 300, 1000)]).axes
    assert control.blocked is None and control.described()["T2"] == "2·T"


def test_a_grid_the_recording_cannot_pin_down_is_not_checked_where_the_fits_part():
    # T = 100 and 120 both give cdiv(T, 64) = 2: constant, or a ceiling whose next step the recording never reached
    (axis,) = ra.infer([launch(t, [2, 32]) for t in (100, 120)]).axes
    assert axis.values_at(120)[1] is None  # at the recorded size every fit agrees
    _, why = axis.values_at(4096)
    assert why and "grid.0 = 2 and grid.0 = cdiv(T, 64)" in why and "record a launch of another size" in why
    (control,) = ra.infer([launch(t, [2, 32]) for t in (100, 1000)]).axes  # the control: 100 to 1,000 apart
    assert "grid.0" not in control.fits and control.values_at(1 << 20)[1] is None  # a constant grid (persistent)


def test_grow_names_members_and_a_declared_axis_says_the_grid_is_unknown():
    assert ra.parse_grow("x.2+T=..1M") == [ra.GrowTerm(("x.2", "T"), 0, 1 << 20)]
    for bad in ("x.2", "x.y=..1M", "x.2=64..1"):
        with pytest.raises(axes.AxisError):
            ra.parse_grow(bad)
    axis = ra.declared([launch(512, [8, 32])], ra.parse_grow("x.2+T=..1M")[0])
    assert axis.blocked is None and "no two recorded launches differ" in str(axis.grid_unknown)
    values, _ = axis.values_at(4096)
    assert values == {"x.2": 4096, "T": 4096, "x.stride.0": 32 * 4096, "x.stride.1": 4096}  # x's outer strides
    assert ra.declared([launch(512, [8, 32])], ra.parse_grow("x.7=..1M")[0]).blocked


def test_the_grown_launch_and_its_figures():
    base = launch(1000, [16, 32])
    grown = ra.grown_entry(base, {"T": 2048, "x.2": 2048, "x.stride.0": 65536, "x.stride.1": 2048, "grid.0": 32,
                                  "y.2": 2048})  # y's strides kept: rows overlap, so its span is no element count
    assert grown["args"][2] == {"literal": "2048"} and grown["grid"] == [32, 32]
    assert grown["views"]["t0"]["shape"] == [1, 32, 2048] and base["views"]["t0"]["shape"] == [1, 32, 1000]
    assert ra.members(grown)["x.stride.0"] == 65536
    assert replayed.spans(grown) == {"x": 65536, "y's span (last offset + 1)": 31 * 1000 + 2048}
    assert replayed.buffer_bytes(grown) == {"b0": 65536 * 4, "b1": (31 * 1000 + 2048) * 4}


def test_a_replayed_row_names_its_members_and_what_it_did_not_check():
    row = {"axis": {"name": "T", "low": 1000, "high": 1 << 20}, "params": {"launch": "1-3"},
           "members": {"T": "T", "grid.0": "cdiv(T, 64)"}, "grid_unknown": None, "notes": []}
    assert rendering.members(row) == " Axis T (recorded up to 1,000, from launch 1-3): grid.0 = cdiv(T, 64)."
    row.update(grid_unknown="planted", notes=["two shapes seen but none kept"])
    assert rendering.members(row).endswith(" The grid: not checked: planted. Two shapes seen but none kept.")
    assert rendering.members({"kernel": "k", "axis": {"name": "T"}}) == ""  # a spec's row: nothing added


def test_the_table_and_sentence_leave_the_grid_out_where_the_recording_does_not_tell_it():
    row = {"kernel": "k", "target": "ascend", "axis": {"name": "x.0", "low": 1000, "high": 1 << 20},
           "params": {"launch": "1-8"}, "last_ok": 1 << 20, "first_bad": None, "crossings": [],
           "ok_probe": {"offsets": "i32"}, "storm": {"sizes": [1008, 1024, 1040], "compiles": 1, "at_one": 1},
           "checked": replayed.CHECKED_NO_GRID, "grid_unknown": "planted"}
    assert "| none (grid not checked) |" in rendering.table([row])
    assert "no limit crossed (on-chip memory, int32 offsets, launcher)." in rendering.sentence(row)
    spec_row = {**row, "checked": None, "grid_unknown": None}  # the control: a spec's row names the grid
    assert "| none |" in rendering.table([spec_row])
    assert "(grid, on-chip memory, int32 offsets, launcher)" in rendering.sentence(spec_row)
    assert "not checked (planted)" in rendering.sentence({**row, "storm": {"compiles": None, "why": "planted"}})


def test_what_the_recording_saw_but_did_not_keep_is_said():
    counts = [{"keys": {"k1": {"kernel_id": "a", "seen": 5, "kept": 2}, "k2": {"kernel_id": "a", "seen": 3, "kept": 0},
                        "k3": {"kernel_id": "b", "seen": 1, "kept": 0}}}]
    unrecorded = [{"kernel": {"id": "a"}, "reason": "the launch raised ValueError: planted"}]
    bundle = Bundle(Path("."), {}, [], unrecorded=unrecorded, counts=counts)
    notes = replayed.unkept(bundle, "a")
    assert notes[0].startswith("1 launch shape(s) seen but none kept") and "ValueError: planted" in notes[1]
    assert replayed.unkept(Bundle(Path("."), {}, [], counts=[counts[0] | {"keys": {}}]), "a") == []  # the control
    with pytest.raises(axes.AxisError):
        ra.parse_grow("grid.0=..1M")  # the grid follows the members, it is never grown by name


def test_a_block_that_follows_the_size_grows_with_it_and_a_tuned_one_is_kept_and_said():
    # BLOCK = next_power_of_2(T): a constexpr in T's group, grown as the launcher would (the UB that overflows)
    (axis,) = ra.infer([launch(t, [1, 32], bt=1 << (t - 1).bit_length()) for t in (100, 300, 1000)]).axes
    assert axis.name == "T" and axis.described()["BT"] == "next_power_of_2(T)"  # T names it, never the constexpr
    assert axis.values_at(16385)[0]["BT"] == 32768
    # a tuner's pick that ranks the launches unlike T (64 up to T = 300, then 128): the largest launch's, and said
    found = ra.infer([launch(t, [cdiv(t, 64), 32], bt=64 if t <= 300 else 128) for t in (100, 300, 1000)])
    (axis,) = found.axes
    assert "BT" not in axis.fits and axis.blocked is None
    assert found.notes == ["BT varies between launches (64, 64, 128) and ranks them unlike any size: the base "
                           "launch's value is kept"]


def test_grow_sets_an_inferred_axis_range_declares_one_elsewhere_and_leaves_other_kernels_alone():
    varying = [launch(t, [cdiv(t, 64), 32]) for t in (100, 300, 1000)]
    (axis,) = replayed.axes_of(varying, ra.parse_grow("x.2=..4M")).axes  # x.2 is a member of the inferred T
    assert (axis.name, axis.low, axis.high) == ("T", 1000, 4 << 20) and axis.grid_unknown is None
    (named,) = replayed.axes_of([launch(512, [8, 32])], ra.parse_grow("x.2+T=..1M")).axes
    assert named.name == "x.2" and named.grid_unknown
    (kept,) = replayed.axes_of(varying, ra.parse_grow("q.0=..1M")).axes  # no member q.0: its own axes
    assert (kept.name, kept.high) == ("T", 1 << 20)


def test_a_storm_names_the_constexprs_that_follow_the_axis_and_a_skipped_row_ends_its_sentence():
    storm = {"sizes": [64, 80, 96], "compiles": 3, "at_one": 1, "advice": "M follows in_ptr.0 (planted)"}
    row = {"kernel": "k", "target": "ascend", "axis": {"name": "in_ptr.0", "low": 64, "high": 1 << 20},
           "params": {}, "last_ok": 1 << 20, "first_bad": None, "crossings": [], "ok_probe": {"offsets": "i64"},
           "storm": storm}
    assert "a storm at production sizes: M follows in_ptr.0 (planted)." in rendering.sentence(row)
    spec_row = {**row, "storm": {**storm, "advice": None}}  # the control: a spec's axis is its own argument
    assert "pass in_ptr.0 as a plain argument (do_not_specialize)" in rendering.sentence(spec_row)
    skipped = {"kernel": "k", "target": "cuda", "skipped": "no axis varies", "notes": ["N varies"]}
    said = rendering.sentence(skipped) + rendering.members(skipped)
    assert said == "k on cuda: not checked: no axis varies. N varies."
