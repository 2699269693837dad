"""triton-ascend's already-reported noinline bug (triton-ascend#39) is the vendor's, with a note, not a fresh draft;
found while calibrating on upstream's test_core.py (test_noinline)."""

from __future__ import annotations

from parity.triage import decide, plan_drafts
from parity.triage import limits as lim

MESSAGE = ("mlir_error after ttir: [ConvertTritonIRToLinalgIR] encounters error: failed to legalize unresolved "
           "materialization from ('memref<?xf32>') to '!tt.ptr<f32>' that remained live after conversion; "
           "'tt.call' op 'noinline_simple_fn__fp32_fp32_Pfp32__' does not reference a valid function")
SOURCE = ("@triton.jit(noinline=True)\ndef noinline_simple_fn(x, y, Z):\n    tl.store(Z, x + y)\n\n@triton.jit\n"
          "def kernel(X, Y, Z):\n    noinline_simple_fn(tl.load(X), tl.load(Y), Z)\n")


def _record(tier: str, ok: bool) -> dict:
    return {"backend": tier, "kernel": "k", "case": "N=1", "status": "passed" if ok else "failed",
            "reason": None if ok else MESSAGE, "params": {"N": 1},
            "compile": {"ok": ok, "error_kind": None if ok else "mlir_error", "message": "" if ok else MESSAGE,
                        "stage_reached": "ttir"}}


def test_noinline_on_triton_ascend_is_the_reported_bug(monkeypatch):
    monkeypatch.setattr(lim.TierLimit, "holds", lambda self: True)  # the probe compiles; here the rule is checked
    failing, upstream = _record("ascend-compile", False), _record("cuda-compile", True)
    owner = decide(failing, {"cuda-compile": upstream}, SOURCE)
    assert (owner.who, owner.limit) == ("triton-ascend", "ascend-noinline"), owner
    assert "triton-ascend/issues/39" in owner.evidence and plan_drafts({"owner": owner}).kind == "tier"
    # negative controls: the same conversion error from a kernel without noinline is no such report (a plain helper
    # inside a dynamic loop is triton-ascend#2156, another bug); and upstream's own tiers are not triton-ascend's
    plain = decide(failing, {"cuda-compile": upstream}, SOURCE.replace("(noinline=True)", ""))
    assert plain.limit != "ascend-noinline"
    assert not next(x for x in lim.LIMITS if x.id == "ascend-noinline").matches(
        {**failing, "backend": "cuda-compile"}, SOURCE)


def test_the_noinline_probe_cannot_tell_without_triton_ascend(monkeypatch):
    monkeypatch.setattr(lim, "_is_triton_ascend", lambda: False)
    assert lim._ascend_cannot_call_noinline() is None


def test_the_noinline_probe_holds_on_triton_ascend_3_2():
    import importlib.metadata

    import pytest

    if not lim._is_triton_ascend():
        pytest.skip("needs triton-ascend (nox -s ascend-compile's venv)")
    if not importlib.metadata.version("triton-ascend").startswith("3.2."):
        pytest.skip("the bug is known on triton-ascend 3.2; a later release may have fixed it (then it retires)")
    assert lim._ascend_cannot_call_noinline() is True
