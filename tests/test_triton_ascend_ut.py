"""libraries/triton_ascend_ut.py: triton-ascend's test kernels from a checkout, never from an import of the
test module (it needs torch_npu, and the kernel is a closure inside the test function)."""

from __future__ import annotations

import inspect
import os
import sys

import pytest
import torch

from libraries import triton_ascend_ut as ut


def test_without_a_checkout_the_spec_skips_and_says_how(monkeypatch):
    monkeypatch.delenv("PARITY_TRITON_ASCEND_SRC", raising=False)
    monkeypatch.delenv("PARITY_TRITON_ASCEND_GIT", raising=False)
    assert "PARITY_TRITON_ASCEND_SRC" in ut.unavailable() and "PARITY_TRITON_ASCEND_GIT" in ut.unavailable()


@pytest.mark.skipif(not (os.environ.get("PARITY_TRITON_ASCEND_SRC") or os.environ.get("PARITY_TRITON_ASCEND_GIT")),
                    reason="no triton-ascend checkout: set PARITY_TRITON_ASCEND_SRC or PARITY_TRITON_ASCEND_GIT")
def test_the_kernel_and_launcher_are_the_test_files_own_and_gather_right(monkeypatch):
    monkeypatch.setattr(ut, "_LOADED", {})
    loaded = ut.gather()
    assert "torch_npu" not in sys.modules and "test_common" not in sys.modules
    fn = getattr(loaded["kernel"], "fn", loaded["kernel"])
    assert fn.__code__.co_filename.endswith("test_general_gather.py")  # errors point into the checkout's file
    assert "out = tl.gather(src, idx, axis)" in inspect.getsource(fn)
    [spec] = ut.SPECS
    params = {"src": (4, 64), "idx": (4, 32), "axis": 1, "dtype": "fp32"}
    inputs = spec.make_inputs(params, torch.Generator().manual_seed(0))
    got = spec.launch(inputs, params)["out"]  # the interpreter (tests/conftest.py) runs the test's launcher
    assert torch.equal(got, spec.reference(inputs, params)["out"])


def test_only_the_case_the_test_skips_itself_is_expected_and_only_on_the_ascend_tiers():
    [spec] = ut.SPECS
    expected = [c.params["src"] for c in spec.cases("full") if spec.divergence_for("ascend-compile", c.params)]
    assert expected == [(128, 64)]  # 4·8192 bytes >= 196608 / 8; the next largest, (4, 64), is not
    big = {"src": (128, 64), "idx": (128, 128), "axis": 1, "dtype": "fp32"}
    assert spec.divergence_for("ascend", big).expected_by and spec.divergence_for("cuda-compile", big) is None
