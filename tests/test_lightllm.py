"""libraries/lightllm.py: LightLLM's kernels load from the checkout PARITY_LIGHTLLM names, or skip saying how."""

from __future__ import annotations

import os
import sys

import pytest

from libraries import lightllm


def test_without_a_checkout_every_spec_skips_with_the_clone_command(monkeypatch, tmp_path):
    monkeypatch.delenv(lightllm.ENV, raising=False)
    reason = lightllm.unavailable()
    assert reason is not None and lightllm.ENV in reason and lightllm.COMMIT[:8] in reason and "git clone" in reason
    monkeypatch.setenv(lightllm.ENV, str(tmp_path))  # set, but no lightllm/ there: the reason says where it looked
    assert str(tmp_path) in lightllm.unavailable()
    assert all(spec.unavailable is lightllm.unavailable for spec in lightllm.SPECS)


@pytest.mark.skipif(not os.environ.get(lightllm.ENV), reason=f"set {lightllm.ENV} to a LightLLM checkout at "
                    f"{lightllm.COMMIT[:8]} to load its kernels")
def test_a_checkout_loads_the_kernel_modules_without_the_engine():
    assert lightllm.unavailable() is None
    lightllm.op(f"{lightllm.LLAMA}.rotary_emb:rotary_emb_fwd")
    # the bare parents kept lightllm/models/__init__.py (which imports every model) from running
    assert not hasattr(sys.modules["lightllm.models"], "LlamaTpPartModel")
    assert sys.modules["lightllm"].__version__ == f"snapshot {lightllm.COMMIT}"
