"""Real-compile controls: Triton specializes target tensors (parity.compile.device_tensors) as it
specializes device tensors, on cuda-compile's compile-only driver.

Not collected directly (no test_ prefix): tests/test_torch_device.py runs this file in a fresh
process with TRITON_INTERPRET=0, as tests/cuda_compile_controls.py is run.
"""

from __future__ import annotations

import pytest
import torch

from parity.compile.device_tensors import launch_on_target
from tests.cuda_compile_fixture import cuda_compile_backend  # noqa: F401  (the `backend` fixture)

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def strided_copy_kernel(x, out, n, stride, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o * stride, mask=o < n), mask=o < n)


def _launch(inputs, p):
    x = inputs["x"][p["offset"]:]
    assert x.device.type == "cuda"
    out = torch.empty(p["n"], device=x.device, dtype=x.dtype)
    strided_copy_kernel[(1,)](x, out, p["n"], x.stride(0), BLOCK=64)
    return {"out": out}


def _compiles(backend, **params) -> list[dict]:
    backend.log.begin([], set())
    strided_copy_kernel.device_caches.clear()
    launch_on_target(_launch, {"x": torch.zeros(256)}, params, "cuda")
    return backend.log.compiles


def test_alignment_and_value_specialization_see_the_real_pointer_and_stride(backend):
    [aligned] = _compiles(backend, n=64, offset=0)
    assert aligned["ok"], aligned
    sigs = set()
    for offset in (0, 1, 4):  # 16-byte aligned, 4-byte off, 16-byte aligned again
        strided_copy_kernel.device_caches.clear()
        backend.log.begin([], set())
        launch_on_target(_launch, {"x": torch.zeros(256)}, {"n": 64, "offset": offset}, "cuda")
        for cache in strided_copy_kernel.device_caches.values():
            sigs |= set(cache[0])
    # the 4-byte-off pointer is its own specialization: two distinct keys over three launches
    assert len(sigs) == 2, sigs
