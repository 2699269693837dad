"""bench/npu_agreement.py: the join of published real-NPU verdicts with parity's, on small synthetic data.

Negative controls: a planted false alarm (the NPU passed, parity blamed the author) is counted as exactly one and,
on the same release and chip generation, classed a parity defect; a source that agrees everywhere has none.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench_module import BENCH

# registered before it runs: its dataclasses look their module up in sys.modules (tests/bench_module.load does not)
_spec = importlib.util.spec_from_file_location("npu_agreement", BENCH / "npu_agreement.py")
assert _spec is not None and _spec.loader is not None
na = importlib.util.module_from_spec(_spec)
sys.modules["npu_agreement"] = na
_spec.loader.exec_module(na)

SAME = na.Stack(triton_ascend="3.2.0", generation="A2")


def rec(status: str, who: str | None = None, reason: str = "", message: str = "") -> dict[str, Any]:
    r: dict[str, Any] = {"status": status, "reason": reason, "compile": {"message": message}}
    if who:
        r["owner"] = {"who": who, "evidence": ""}
    return r


def source(*entries: Any, stack: Any = SAME) -> Any:
    return na.Source(name="synthetic", where="x@y", stack=stack, test_file="test_core.py", entries=tuple(entries))


def verdicts(**records: dict[str, Any]) -> dict[str, Any]:
    """One launch per test function, the same record on both Ascend tiers."""
    launches = {t: {(f"k_{t}", 0)} for t in records}
    per_tier = {tier: {(f"k_{t}", 0): r for t, r in records.items()} for tier in ("compile", "lowered")}
    return na.function_verdicts(launches, per_tier)


def test_function_verdicts_ports_fails_and_none() -> None:
    v = verdicts(a=rec("passed"), b=rec("failed", "author", "wrong"), c=rec("xfailed", "tier", "tier limit"),
                 d=rec("skipped"), e=rec("failed", "triton-ascend", message="ub overflow, requires 9 bits"))
    assert v["a"].verdict == "ports"
    assert (v["b"].verdict, v["b"].owners) == ("fails", ("author",))
    assert v["c"].verdict == "none" and "(tier)" in v["c"].why  # the tier could not judge: no prediction
    assert v["d"].verdict == "none"
    assert v["e"].owners == ("triton-ascend",) and "ub overflow" in v["e"].messages[0]


def test_a_launch_missing_from_one_tier_is_no_prediction() -> None:
    launches = {"a": {("k", 0), ("k", 1)}}
    tiers = {"compile": {("k", 0): rec("passed"), ("k", 1): rec("passed")}, "lowered": {("k", 0): rec("passed")}}
    v = na.function_verdicts(launches, tiers)["a"]
    assert v.verdict == "none" and "no record" in v.why


def test_the_four_counts_and_not_joined() -> None:
    parity = verdicts(port=rec("passed"), same=rec("failed", "author", message="ub overflow, requires 2 bits"),
                      alarm=rec("failed", "author", "mismatch"), miss=rec("passed"), other=rec("failed", "author", "x"),
                      skipped=rec("skipped"))
    src = source(na.NpuEntry("port", "passes"),
                 na.NpuEntry("same", "fails", "expects ub overflow", "compile_error", match="ub overflow"),
                 na.NpuEntry("alarm", "passes"), na.NpuEntry("miss", "fails", "crash"),
                 na.NpuEntry("other", "fails", "expects it", "compile_error", match="unexpected type"),
                 na.NpuEntry("skipped", "passes"), na.NpuEntry("absent", "passes"),
                 na.NpuEntry("flaky", "not_run", "randomly failed"))
    a = na.join(src, parity, SAME)
    c = a.counts()
    assert (c["both port"], c["both fail, same reason"], c["false alarm"], c["miss"]) == (1, 1, 1, 1)
    assert c["both fail, other reason"] == 1 and c["not joined"] == 3
    assert {r.test for r in a.disagreements()} == {"alarm", "miss", "other"}
    out = na.render(a)
    assert "| 1 | 1 | 1 | 1 | 1 | 3 |" in out and "agree: 2 of 5" in out


def test_planted_false_alarm_is_counted_once_and_is_a_parity_defect() -> None:
    """Negative control: the NPU passed a correct kernel, parity blamed the author on the same stack."""
    parity = verdicts(ok=rec("passed"), planted=rec("failed", "author", "mismatch"))
    clean = na.join(source(na.NpuEntry("ok", "passes")), parity, SAME)
    assert clean.counts()["false alarm"] == 0 and not clean.disagreements()
    a = na.join(source(na.NpuEntry("ok", "passes"), na.NpuEntry("planted", "passes")), parity, SAME)
    assert a.counts()["false alarm"] == 1
    (row,) = a.disagreements()
    assert (row.test, row.cls) == ("planted", "parity defect")


@pytest.mark.parametrize(("entry", "owner", "src_stack", "cls"), [
    (na.NpuEntry("t", "fails", "NPU torch.arange int8 unsupported", "harness"), None, SAME, "harness"),
    (na.NpuEntry("t", "passes"), "tolerance", SAME, "tolerance"),
    (na.NpuEntry("t", "passes"), "author", na.Stack("3.2.0", "A5"), "hardware"),
    (na.NpuEntry("t", "passes"), "author", na.Stack("3.2.0", "A2/A3"), "parity defect"),  # A2 is among A2/A3
    (na.NpuEntry("t", "passes"), "triton-ascend", na.Stack("3.6.0.dev0", None), "version"),
    (na.NpuEntry("t", "passes"), "author", na.Stack("3.2.1", "A2"), "parity defect"),  # same minor release
])
def test_classes(entry: Any, owner: str | None, src_stack: Any, cls: str) -> None:
    r = rec("failed", owner, "mismatch") if owner else rec("passed")
    a = na.join(source(entry, stack=src_stack), verdicts(t=r), SAME)
    (row,) = a.disagreements()
    assert row.cls == cls, row.why


def test_an_out_of_bounds_access_the_npu_passed_is_hidden_on_the_device_not_a_parity_defect() -> None:
    """FlagGems 5.0.2's vdot: parity's red zone caught a read past a buffer the host made too small; the NPU passed."""
    oob = rec("failed", "author", "out-of-bounds read by reduce_kernel_complex: 2 value(s) from parity's red zone")
    (row,) = na.join(source(na.NpuEntry("t", "passes")), verdicts(t=oob), SAME).disagreements()
    assert row.cls == "hidden on the device" and "512 bytes" in row.why
    # controls: a plain mismatch stays a parity defect, and an out-of-bounds finding the NPU also failed is no alarm
    (plain,) = na.join(source(na.NpuEntry("t", "passes")), verdicts(t=rec("failed", "author", "mismatch")),
                       SAME).disagreements()
    assert plain.cls == "parity defect"
    both = na.join(source(na.NpuEntry("t", "fails", "wrong values", "wrong")), verdicts(t=oob), SAME)
    assert both.counts()["false alarm"] == 0


def test_version_class_says_it_is_unproven() -> None:
    a = na.join(source(na.NpuEntry("t", "passes"), stack=na.Stack("3.6.0.dev0", None)),
                verdicts(t=rec("failed", "triton-ascend", "x")), SAME)
    assert "unproven" in a.disagreements()[0].why


def test_generation_of_arch_names() -> None:
    assert na.generation("Ascend910B3") == "A2"
    assert na.generation("Ascend910_9391") == "A3"
    assert na.generation("Ascend950PR_9599") == "A5"
    assert na.generation(None) is None


def test_bad_verdict_is_refused_with_the_entry_named() -> None:
    doc = {"source": {"name": "s"}, "entries": [{"test": "t", "verdict": "maybe"}]}
    with pytest.raises(ValueError, match=r"passes, fails or not_run.*'t'"):
        na.parse_source(doc)


def test_published_data_files_name_source_commit_stack_and_reading() -> None:
    files = sorted(na.DATA.glob("*.json"))
    assert files, "data/npu-published/ holds one file per published source"
    for path in files:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        head = doc["source"]
        if head.get("kind") == "vendor_ports":  # which ops each library ports by hand: no verdict, one repo per library
            assert head.get("repos") and head.get("how_read"), f"{path.name}: source.repos/how_read missing"
            assert all(e["verdict"] == "not_run" for e in doc["entries"]), f"{path.name}: a port list holds no verdict"
            continue
        for key in ("name", "repo", "commit", "paths", "how_read"):
            assert head.get(key), f"{path.name}: source.{key} missing"
        assert len(head["commit"]) == 40
        assert "triton_ascend" in doc["stack"] and "cann" in doc["stack"] and "chip" in doc["stack"]
        src = na.parse_source(doc)
        assert len({e.test for e in src.entries}) == len(src.entries), f"{path.name}: a test listed twice"
