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


# --- tensors on the target device type (parity.compile.device_tensors) -------------------------------

def _device_checking_launch(target: str):
    """A launcher written like a library's: refuses tensors not on `target`, allocates on their device."""
    def launch(inputs, p):
        x = inputs["x"]
        if x.device.type != target:
            raise ValueError(f"input device is not {target.upper()}")
        out = torch.empty_like(x)
        scratch = torch.zeros(x.shape[0], device=x.device, dtype=torch.float32)
        index = torch.arange(x.shape[-1], device=target).reshape(1, -1).contiguous()
        rows = x.new_empty(x.shape[0]).cumsum(0)
        for t in (out, scratch, index, rows, x.to(x.device), x.view(-1), x.t().contiguous()):
            assert t.device.type == target, f"{t.device} left {target}"
        out.copy_(x * 2 + index)
        return {"out": out, "scratch": scratch}

    return launch


def test_a_device_checking_launcher_fails_on_cpu_tensors_and_runs_on_target_tensors():
    from parity.compile.device_tensors import launch_on_target

    x = torch.arange(12.0).reshape(3, 4)
    launch = _device_checking_launch("cuda")
    with pytest.raises(ValueError, match="input device is not CUDA"):  # control: what the tiers gave before
        launch({"x": x}, {})
    out = launch_on_target(launch, {"x": x}, {}, "cuda")
    assert type(out["out"]) is torch.Tensor and out["out"].device.type == "cpu"  # plain CPU once back
    assert torch.equal(out["out"], x * 2 + torch.arange(4.0))
    with pytest.raises((AssertionError, RuntimeError)):  # only inside the launch do factories accept "cuda"
        torch.empty(2, device="cuda")


def test_target_tensors_share_memory_strides_and_identity_like_device_tensors():
    from parity.compile.device_tensors import as_cpu, on_target

    base = torch.randn(8, 16)
    with on_target("cuda") as move:
        x = move({"x": base.t()})["x"]  # non-contiguous: Triton specializes on strides too
        assert x.data_ptr() == base.data_ptr() and x.stride() == (1, 16) and x.dtype == base.dtype
        assert x.is_cuda and x.get_device() == 0 and x.device == torch.device("cuda", 0)
        assert x.to("cuda") is x and x[1:].data_ptr() == base.data_ptr() + 4  # moves keep it; views alias
        y = torch.empty_like(x)
        assert y.add_(1) is y  # in-place ops return their argument
        plain = x.cpu()
        assert type(plain) is torch.Tensor and plain.data_ptr() == base.data_ptr()
        assert type(torch.empty(2).copy_(x[0, :2])) is torch.Tensor  # copying into a CPU tensor stays CPU
        assert type(torch.zeros_like(x, device="cpu")) is torch.Tensor
    assert type(as_cpu({"o": (x, 3)})["o"][0]) is torch.Tensor


def test_npu_target_tensors_in_a_clean_process():
    """"npu" needs torch's PrivateUse1 renamed, once per process: checked in a child of its own."""
    script = (
        "import torch\nfrom parity.compile.device_tensors import launch_on_target\n"
        "from tests.test_torch_device import _device_checking_launch\n"
        "x = torch.ones(2, 4)\nlaunch = _device_checking_launch('npu')\n"
        "try:\n    launch({'x': x}, {})\nexcept ValueError as exc:\n    print('control:', exc)\n"
        "out = launch_on_target(launch, {'x': x}, {}, 'npu')\n"
        "assert type(out['out']) is torch.Tensor and out['out'].device.type == 'cpu'\nprint('npu ok')\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert "control: input device is not NPU" in proc.stdout and "npu ok" in proc.stdout, proc.stderr[-3000:]


def test_triton_specializes_target_tensors_in_a_clean_process():
    from parity.backends.cuda.compile import CudaCompileBackend

    reason = CudaCompileBackend().unavailable()
    if reason:
        pytest.skip(reason)
    controls = Path(__file__).with_name("target_tensor_controls.py")
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", str(controls)], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, f"target tensor controls failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
