"""kernels.basics.device_info: persistent grids follow the compile tier's target, and the
tensor-descriptor kernels say why they cannot run instead of crashing."""

from __future__ import annotations

import pytest
import torch

from kernels.basics import device_info
from parity.backends.cuda import torch_device
from parity.spec.context import backend_scope


def test_core_count_is_the_cuda_compile_targets_sm_count(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    undo = torch_device.install(90, 132, 232448, 65536)
    try:
        with backend_scope("cuda-compile"):
            assert device_info.device_core_count(torch.device("cpu")) == 132
    finally:
        undo()


def test_core_count_under_the_interpreter_is_small_so_tile_loops_wrap(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    with backend_scope("cuda-compile"):  # the interpreter wins over any target
        assert device_info.device_core_count(torch.device("cpu")) == device_info.INTERPRETER_CORES


def test_descriptor_kernels_skip_on_ascend_lowered_and_run_elsewhere():
    with backend_scope("ascend-lowered"):
        assert "segfaults" in (device_info.descriptors_unavailable() or "")
        with pytest.raises(RuntimeError) as info:
            device_info.refuse_without_descriptors()
        assert getattr(info.value, "parity_skip", False)
    with backend_scope("interpret"):  # negative control: triton 3.6 has tl.make_tensor_descriptor
        assert device_info.descriptors_unavailable() is None
        device_info.refuse_without_descriptors()
