"""The kernels `nox -s ascend-standin` runs: parity's own vector_add and matmul with perf cases the CPU behind the
stand-in can time, and a small autotuned kernel, so that the Autotuner benchmarks its configs through the
driver's do_bench and torch.npu events as on an NPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.basics.matmul import SPECS as MATMUL
from kernels.basics.vector_add import SPECS as VECTOR_ADD
from parity import KernelSpec, nan_empty, randn
from parity.cases import product


@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def scale_tuned_kernel(x, out, n, alpha, BLOCK: tl.constexpr):
    i_b = tl.program_id(0)
    o_x = i_b * BLOCK + tl.arange(0, BLOCK)
    m_x = o_x < n
    b_x = tl.load(x + o_x, mask=m_x).to(tl.float32)
    tl.store(out + o_x, (b_x * alpha).to(out.dtype.element_ty), mask=m_x)


def scale_tuned(x: torch.Tensor, alpha: float) -> torch.Tensor:
    out = nan_empty(x.shape, x.dtype, x.device)
    n = x.numel()
    scale_tuned_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, alpha)
    return out


def _scale_launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": scale_tuned(inputs["x"], 0.5)}


SPECS = [
    replace(VECTOR_ADD[0], name="standin_vector_add", perf_cases=product(N=[1 << 16], dtype=["fp32"])),
    replace(MATMUL[0], name="standin_matmul",
            perf_cases=product(M=[128], N=[128], K=[128], dtype=["fp32"], precision=["ieee"])),
    KernelSpec(
        name="standin_scale_tuned",
        family="standin",
        kernel=scale_tuned_kernel,
        launch=_scale_launch,
        reference=lambda inputs, p: {"out": inputs["x"] * 0.5},
        cases=lambda level: product(N=[1000, 5000], dtype=["fp32"]),
        make_inputs=lambda p, gen: {"x": randn((p["N"],), p["dtype"], gen)},
        bytes=lambda p: 2 * p["N"] * 4,
        perf_cases=product(N=[1 << 15], dtype=["fp32"]),
        baseline=lambda inputs, p: inputs["x"] * 0.5,
    ),
]
