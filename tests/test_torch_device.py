"""The compile tiers present a believable device to torch: libraries that read torch.cuda or
torch.npu at import take the target's path, and everything is undone on exit."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.backends.ascend import torch_device as npu_device
from parity.backends.ascend.arch import ASCEND_ARCHS
from parity.backends.cuda import torch_device as cuda_device

ROOT = Path(__file__).resolve().parents[1]


def test_torch_cuda_names_the_target_sm_and_is_undone():
    if torch.cuda.is_available():
        pytest.skip("a real GPU answers here")
    with pytest.raises((AssertionError, RuntimeError)):  # control: CPU torch has no CUDA device
        torch.cuda.get_device_name(0)
    undo = cuda_device.install(90, 132, 232448, 65536)
    try:
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1
        assert torch.cuda.get_device_name(0) == "NVIDIA H100 80GB HBM3"
        assert torch.cuda.get_device_capability() == (9, 0)
        props = torch.cuda.get_device_properties(0)
        assert props.multi_processor_count == 132 and props.shared_memory_per_block_optin == 232448
        with torch.cuda.device(0):
            pass
    finally:
        undo()
    assert not torch.cuda.is_available()


def test_torch_npu_answers_with_the_arch_table_and_is_undone():
    had = hasattr(torch, "npu")
    undo = npu_device.install(ASCEND_ARCHS["Ascend910B3"])
    try:
        assert torch.npu.is_available() and torch.npu.get_device_name(0) == "Ascend910B3"
        props = torch.npu.get_device_properties(0)
        assert (props.cube_core_num, props.vector_core_num) == (20, 40)
    finally:
        undo()
    assert hasattr(torch, "npu") == had


IMPORT_UNDER = {
    "cuda-compile": ("from parity.backends.cuda.compile import CudaCompileBackend as B",
                     "assert fla.utils.IS_NVIDIA_HOPPER, 'fla took a non-Hopper path'"),
    "ascend-compile": ("from parity.backends.ascend.compile import AscendCompileBackend as B",
                       "assert fla.utils.IS_NPU, 'fla took a non-NPU path'"),
}


@pytest.mark.parametrize("tier", list(IMPORT_UNDER))
def test_fla_imports_under_the_compile_tier(tier, tmp_path):
    if importlib.util.find_spec("fla") is None:
        pytest.skip("fla is not installed here: `pip install --no-deps fla-core==0.6.0 einops`")
    backend_import, check = IMPORT_UNDER[tier]
    script = (f"{backend_import}\nb = B()\nreason = b.unavailable() if hasattr(b, '_missing') else None\n"
              "b.prepare()\nif b.unavailable(): print('UNAVAILABLE', b.unavailable()); raise SystemExit(0)\n"
              f"import fla.ops.gated_delta_rule, fla.utils\n{check}\nprint('imported')\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PARITY_CACHE_DIR"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    if "UNAVAILABLE" in proc.stdout:
        pytest.skip(proc.stdout.strip())
    assert proc.returncode == 0 and "imported" in proc.stdout, proc.stderr[-3000:]
