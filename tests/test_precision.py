"""fp32 tl.dot's precision mode: cuda-compile reads TF32 dots from the TTIR (parity.backends.cuda.dot_precision),
the verdict notes it across backends, and a cuda failure that TF32's rounding explains reads "precision mode"
(author, not a bug, no vendor draft) with the compile's evidence and the bound it was judged by."""

import dataclasses
from types import SimpleNamespace

from parity.backends.cuda.dot_precision import tf32_dots
from parity.report import divergence_md
from parity.report.verdict import owner_tag
from parity.results import OwnerKind
from parity.triage.decide import decide
from parity.triage.drafts import plan_drafts
from parity.triage.owner import make_owner
from parity.triage.precision import NOTE, kernels_with_tf32

# lines of Triton 3.8's TTIR for sm_90 (compiled here from a 16x16 kernel)
TF32 = ("%c_12 = tt.dot %a_7, %b_11, %c, inputPrecision = tf32 : tensor<64x32xf32> * tensor<32x64xf32> -> "
        "tensor<64x64xf32> loc(#loc15)")
IEEE = "%c_12 = tt.dot %a_7, %b_11, %c : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32> loc(#loc15)"
TF32X3 = IEEE.replace("%c :", "%c, inputPrecision = tf32x3 :")
FP16 = TF32.replace("xf32> *", "xf16> *").replace("x64xf32> ->", "x64xf16> ->")


def test_the_ttir_says_which_fp32_dots_are_tf32():
    assert tf32_dots(TF32) == {"tf32": 1, "fp32_dots": 1, "block_k": [32], "line": TF32[8:].split(" ->")[0]}
    # controls: ieee (no attribute), tf32x3 (full fp32 accuracy), fp16 operands and no dot at all
    assert tf32_dots(IEEE)["tf32"] == 0 and tf32_dots(TF32X3)["tf32"] == 0
    assert tf32_dots(FP16) is None and tf32_dots("tt.return") is None and tf32_dots(None) is None


def _cuda_failure(err_ratio: float, k: int | None = 1024) -> dict:
    return {"backend": "cuda", "mode": "run", "suite": "accuracy", "kernel": "attn", "case": "K=1024,dtype=fp32",
            "params": {"dtype": "fp32", **({"K": k} if k else {})}, "status": "failed", "compile": None,
            "reason": "output 'o': 70% of elements off", "metrics": {
                "max_abs_err": 3e-3, "err_ratio": err_ratio, "nan_count": 0, "mismatch_frac": 0.7,
                "region": "scattered (70.0%)"}}


COMPILED = {"cuda-compile": {"backend": "cuda-compile", "status": "passed", "tf32_dots": tf32_dots(TF32)}}
DOT = "acc = tl.dot(q, k, acc)"


def test_a_cuda_failure_within_tf32_rounding_reads_precision_mode_with_its_evidence():
    owner = decide(_cuda_failure(2e-3), COMPILED, DOT)
    assert (owner.who, owner.limit, owner.provisional) == ("author", "cuda-tf32-dot", False), owner
    assert "cuda-compile TTIR: 1 of 1 fp32 dots inputPrecision = tf32" in owner.evidence, owner.evidence
    assert "2^-10 * sqrt(K) = 0.031 at K=1024" in owner.evidence and "vs fp64" in owner.evidence
    assert 'input_precision="ieee"' in owner.evidence and "not a bug" in owner.evidence
    assert owner_tag(owner) == "precision mode" and plan_drafts({"owner": owner}).kind == "author"  # no vendor
    # without the compile record it still says why TF32 applies (NVIDIA's default), and a case without K is
    # judged by the fixed bound
    assert "NVIDIA's default" in decide(_cuda_failure(2e-3), {}, DOT).evidence
    assert "the case names no K" in decide(_cuda_failure(2e-3, k=None), {}, DOT).evidence


def test_controls_an_error_beyond_the_bound_for_its_k_or_a_pinned_dot_is_not_precision_mode():
    # K=64: 2^-10 * 8 = 7.8e-3; an err_ratio of 2e-2 is beyond what TF32 rounds, though under the old fixed bound
    owner = decide(_cuda_failure(2e-2, k=64), COMPILED, DOT)
    assert owner.limit is None and owner_tag(owner) != "precision mode", owner
    assert decide(_cuda_failure(2e-3), COMPILED, 'tl.dot(q, k, acc, input_precision="ieee")').limit is None


def test_the_verdict_notes_tf32_dots_across_backends_and_only_where_the_ttir_shows_them():
    compiled = {"backend": "cuda-compile", "mode": "compile", "suite": "compile", "kernel": "attn", "case": "c",
                "params": {}, "status": "passed", "reason": None, "metrics": None, "tolerance": None,
                "compiles": 1, "compile": {"ok": True}, "perf": None, "repro": None, "tf32_dots": tf32_dots(TF32)}
    ieee = {**compiled, "kernel": "gemm", "tf32_dots": tf32_dots(IEEE)}
    records = {"cuda-compile": [compiled, ieee]}
    assert kernels_with_tf32(records) == ["attn"]  # control: gemm's dots are ieee
    column = SimpleNamespace(label="cuda-compile", backend="cuda-compile", env={}, link_prefix="cuda-compile/")
    text = divergence_md.render([column], records, [], None)
    assert f"- `attn`: {NOTE}" in text and "`gemm`:" not in text
    assert "inputPrecision = tf32" in NOTE and "input_precision='ieee'" in NOTE
    assert "### Cross-backend notes" not in divergence_md.render([column], {"cuda-compile": [ieee]}, [], None)


def test_a_tf32_finding_reads_as_a_precision_mode_not_a_kernel_fix():
    from parity.report.findings import owner_words

    tf32 = make_owner(OwnerKind.AUTHOR, "kernel author", "", limit="cuda-tf32-dot")
    assert owner_words(tf32).startswith("precision mode the kernel chose")
    # control: another author finding keeps its words
    assert owner_words(dataclasses.replace(tf32, limit=None)) == "needs a change in the kernel"
