"""The published silent NPU bugs as data (parity.known_npu): each detector finds its planted pattern and passes a
planted twin without it; a pass with the pattern says which bug its tier cannot see, a kernel without gets no note;
a bug the lowering does not reproduce is never claimed as its canary's known divergence."""

from __future__ import annotations

import dataclasses
import inspect
from types import SimpleNamespace
from typing import Any

import pytest

import parity.known_npu as kn
import parity.npu_patterns as pat
from parity.driver import pipeline
from parity.report import npu_unseen_md, verdict
from parity.report.divergence import Column
from parity.results import Record, Status, empty_record

# per bug: (a kernel with the pattern, its twin without it)
PLANTED = {
    "triton-ascend#2291": (
        "@triton.jit\ndef k(x, o, R: tl.constexpr):\n    b = tl.load(x + o_r[:, None, None] + o_c[None, :, None])\n"
        "    tl.store(o, tl.sum(b, 0))\n",
        # the 2-D form the issue found exact, and a 3-D tile reduced along its last axis
        "@triton.jit\ndef k(x, o):\n    b = tl.load(x + o_r[:, None] + o_c[None, :])\n    tl.store(o, tl.sum(b, 0))\n"
        "@triton.jit\ndef h(x, o):\n    b = tl.zeros([4, 8, 16], tl.float32)\n    tl.store(o, tl.sum(b, axis=2))\n"),
    "triton-ascend#2364": (
        "@triton.jit\ndef k(o, eps: tl.bfloat16, BLOCK: tl.constexpr):\n    tl.store(o, eps.to(tl.float32))\n",
        "@triton.jit\ndef k(o, eps: tl.float32, n: tl.int32, BLOCK: tl.constexpr):\n    tl.store(o, eps)\n"),
    "FlagTree#1245": (
        "@triton.jit\ndef k(x, o, n):\n    m = offs < n\n    tl.store(o + offs, tl.load(x + offs, mask=m), m)\n",
        "@triton.jit\ndef k(x, o, n):\n    tl.store(o + offs, tl.load(x + offs, mask=offs < n))\n"),
    "FlagTree#1083": (
        "@triton.jit\ndef k(c, p):\n    old = tl.atomic_add(c + tl.zeros([8], tl.int32), 1)\n    tl.store(p, old)\n",
        "@triton.jit\ndef k(c, p):\n    tl.atomic_add(c + tl.zeros([8], tl.int32), 1)\n    tl.atomic_max(p, 3)\n"),
}

TTIR_3D = ('%22 = "tt.reduce"(%21) <{axis = 0 : i32}> ({\n  ^bb0(%a: f32, %b: f32):\n'
           '    %30 = arith.addf %a, %b : f32\n    tt.reduce.return %30 : f32\n'
           '  }) : (tensor<8x4x16xf32>) -> tensor<4x16xf32>\n')
TTIR_ARGS = "  tt.func public @k(%arg0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %arg1: {}) attributes {{}} {{\n"


@pytest.mark.parametrize("bug", kn.NPU_BUGS, ids=lambda b: b.id)
def test_each_detector_finds_its_planted_pattern_and_passes_its_twin(bug: kn.NpuBug) -> None:
    positive, negative = PLANTED[bug.id]
    assert bug.detect(positive), f"{bug.id}: the planted pattern is found"
    assert not bug.detect(negative), f"{bug.id}: its twin without the pattern is not"


def test_the_ttir_detectors_read_the_rank_and_the_argument_types() -> None:
    assert pat.ttir_leading_axis_reductions(TTIR_3D) == ["8x4x16"]
    assert not pat.ttir_leading_axis_reductions(TTIR_3D.replace("8x4x16xf32", "8x64xf32")), "a 2-D sum is exact"
    assert not pat.ttir_leading_axis_reductions(TTIR_3D.replace("axis = 0", "axis = 2")), "not the leading axis"
    assert pat.ttir_half_scalar_arguments(TTIR_ARGS.replace("{}", "f16", 1)) == ["%arg1: f16"]
    assert pat.ttir_half_scalar_arguments(TTIR_ARGS.replace("{}", "bf16", 1)) == ["%arg1: bf16"]
    # triton-ascend 3.2.0's JIT types a tl.float16-annotated argument f32: no 16-bit scalar reaches its launcher
    assert not pat.ttir_half_scalar_arguments(TTIR_ARGS.replace("{}", "f32", 1))


def _canaries() -> dict[str, Any]:
    planted = pytest.importorskip("tests.planted_npu_bugs")
    return {s.name: s for s in planted.SPECS}


def test_every_bug_is_public_data_with_a_canary_that_has_its_pattern() -> None:
    canaries = _canaries()
    for bug in kn.NPU_BUGS:
        assert bug.link.startswith("https://github.com/") and bug.link.rsplit("/", 1)[-1] == bug.id.split("#")[1]
        assert bug.reported_on and bug.pattern and bug.lowered.startswith("reproduced" if bug.reproduced else
                                                                          "not reproduced")
        source = inspect.getsource(canaries[bug.canary].kernel.fn)
        assert [b.id for b, _ in kn.matches(source)] == [bug.id], f"{bug.canary} has {bug.id}'s pattern alone"


def test_a_bug_the_lowering_does_not_reproduce_is_no_known_divergence_of_its_canary(monkeypatch) -> None:
    assert all(not b.reproduced for b in kn.NPU_BUGS), "none reproduced on ascend-lowered (tests/planted_npu_bugs.py)"
    assert kn.canary_divergences([b.id for b in kn.NPU_BUGS]) == (), "an unreproduced bug is not claimed"
    # the control: were the lowering to reproduce #2291, its canary would be xfail with the link on ascend-lowered
    reproduced = dataclasses.replace(kn.bug("triton-ascend#2291"), reproduced=True)
    monkeypatch.setattr(kn, "NPU_BUGS", (reproduced, *kn.NPU_BUGS[1:]))
    [div] = kn.canary_divergences(["triton-ascend#2291"])
    assert div.backend == kn.LOWERED and div.link == reproduced.link and div.matches(kn.LOWERED, {})
    source = PLANTED["triton-ascend#2291"][0]
    assert kn.unseen(source, kn.LOWERED) == [], "a bug the tier reproduces is one it can see"
    assert [u["id"] for u in kn.unseen(source, "ascend-compile")] == ["triton-ascend#2291"]
    with pytest.raises(KeyError, match="known: triton-ascend#2291"):
        kn.bug("triton-ascend#1")


def test_unseen_names_the_tier_and_the_link_and_nothing_without_a_pattern() -> None:
    [entry] = kn.unseen(PLANTED["FlagTree#1245"][0], "ascend-lowered")
    assert entry["note"].startswith("ascend-lowered cannot see this known NPU bug: "
                                    "https://github.com/flagos-ai/FlagTree/issues/1245")
    assert entry["line"] == "tl.store(o + offs, tl.load(x + offs, mask=m), m)"
    clean = "@triton.jit\ndef k(x, o, N):\n    tl.store(o + i, tl.sum(tl.load(x + offs), axis=0))\n"
    assert kn.unseen(clean, "ascend-lowered") == []


def _record(kernel: str, status: Status, source: str = "", backend: str = "ascend-lowered") -> Record:
    r = empty_record(backend, "run", kernel, "c", {})
    r["status"] = status
    if source:
        r["npu_unseen"] = kn.unseen(source, backend)
    return r


def test_the_report_says_what_a_pass_cannot_see_and_only_for_a_pass() -> None:
    source = PLANTED["triton-ascend#2291"][0]
    records = [_record("k3d", Status.PASSED, source), _record("plain", Status.PASSED),
               _record("bad", Status.FAILED, source)]
    assert npu_unseen_md.cell_note("lowered", records[:1]) == "lowered cannot see known NPU bug triton-ascend#2291"
    assert npu_unseen_md.cell_note("lowered", records[1:]) == "", "no pattern, or no pass: no note"
    text = npu_unseen_md.section({"lowered": records})
    assert ("- `k3d`: ascend-lowered cannot see this known NPU bug: https://github.com/triton-lang/triton-ascend/"
            "issues/2291") in text
    assert "`plain`" not in text and "`bad`" not in text
    assert npu_unseen_md.section({"lowered": records[1:]}) == ""
    v = verdict.build([Column("lowered", "ascend-lowered", "run", {}, "")], {"lowered": records[:2]})
    cells = dict((k, c[0]) for k, c in v.rows)
    assert cells["k3d"] == "lowered ✓ · lowered cannot see known NPU bug triton-ascend#2291", "a pass, never bare"
    assert cells["plain"] == "lowered ✓"
    from parity.report import index_page

    html_rows = {r.kernel: r.text for r in index_page.rows([Column("lowered", "ascend-lowered", "run", {}, "")],
                                                           {"lowered": records[:2]}, {})}
    assert html_rows == {"k3d": "lowered ✓ · lowered cannot see known NPU bug triton-ascend#2291", "plain": "lowered ✓"}


def _run(tier: str, status: Status, source: str) -> Record:
    record = _record("k", status)
    run = SimpleNamespace(session=SimpleNamespace(backend=SimpleNamespace(name=tier)), records=[record],
                          code=SimpleNamespace(source=lambda: source))
    pipeline.note_npu_unseen(run)  # type: ignore[arg-type]
    return record


def test_the_pipeline_notes_passes_of_triton_ascend_tiers_without_the_device() -> None:
    source = PLANTED["FlagTree#1083"][0]
    for tier in ("ascend-lowered", "ascend-compile"):
        assert [u["id"] for u in _run(tier, Status.PASSED, source)["npu_unseen"]] == ["FlagTree#1083"], tier
    assert "npu_unseen" not in _run("ascend", Status.PASSED, source), "the NPU itself can see it"
    assert "npu_unseen" not in _run("cuda-compile", Status.PASSED, source), "not a triton-ascend tier"
    assert "npu_unseen" not in _run("ascend-lowered", Status.FAILED, source), "only a pass gets the note"
    assert "npu_unseen" not in _run("ascend-lowered", Status.PASSED, PLANTED["FlagTree#1083"][1])
