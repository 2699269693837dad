"""Controls for libraries/fa_test.py (hongziqi/fa-test): loading its scripts leaves nothing behind, the NPU
script's Ascend-only autotune options are a finding on upstream Triton, and our fp64 reference agrees with
the torch reference its GPU script writes out (gpu/test_fa_fwd_gpu_prof_tune.py, lines 502-509, commented
out there; the NPU scripts' own golden, torch_npu.npu_fusion_attention, needs an NPU)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

from libraries import fa_test

needs_checkout = pytest.mark.skipif(fa_test.checkout() is None, reason=fa_test.INSTALL)


def test_without_a_checkout_the_specs_skip_with_the_command_to_get_one(monkeypatch):
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not (Path(p or ".") / fa_test.SCRIPTS["npu"]).is_file()])
    assert fa_test.checkout() is None
    reason = fa_test.unavailable()
    assert reason and "git clone https://github.com/hongziqi/fa-test" in reason and "5d8e928f" in reason


@needs_checkout
def test_loading_a_script_leaves_no_stand_in_directory_or_variable_behind(monkeypatch, tmp_path):
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(fa_test, "_LOADED", {})
    had_npu = hasattr(torch, "npu")
    env = {k: os.environ.get(k) for k in fa_test.SCRIPT_ENV}
    try:
        fa_test.script("npu")
    except ImportError as exc:  # upstream Triton: the finding, with the script's own error
        assert "multibuffer" in str(exc) and "npu/test_fa_fwd_npu_prof_tune.py" in str(exc)
    assert os.getcwd() == str(tmp_path) and not (tmp_path / "test_results_batch").exists()
    assert {k: os.environ.get(k) for k in fa_test.SCRIPT_ENV} == env
    assert hasattr(torch, "npu") == had_npu
    for name in ("torch_npu", "pandas"):
        module = sys.modules.get(name)
        assert module is None or "stand-in" not in (module.__doc__ or "")


@pytest.mark.parametrize("causal", [False, True])
def test_our_fp64_reference_agrees_with_the_gpu_scripts_torch_reference(causal):
    gen = torch.Generator().manual_seed(20)
    p = {"B": 1, "N1": 2, "S1": 256, "D": 64, "causal": causal, "dtype": "fp16"}
    inputs = fa_test._inputs(p, gen)
    ours = fa_test.reference({k: v.double() for k, v in inputs.items()}, p)["o"]
    q, k, v = (inputs[n].float() for n in ("q", "k", "v"))  # fp16 matmuls as fp32 on the CPU
    s = torch.matmul(q, k.transpose(2, 3)) * fa_test.SM_SCALE
    if causal:
        s[:, :, torch.tril(torch.ones(p["S1"], p["S1"])) == 0] = float("-inf")
    probs = torch.softmax(s.float(), dim=-1).half().float()  # P rounded to fp16 before P·V, as theirs
    theirs = torch.matmul(probs, v)
    err = (theirs.double() - ours).abs().max().item()
    assert err < 2e-3, f"the GPU script's reference differs from ours by {err}"
    # the check can fail: a reference 1% off does not pass it
    wrong = ours * 1.01
    assert (theirs.double() - wrong).abs().max().item() > 2e-3
