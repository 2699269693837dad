"""rmsnorm: y = x / sqrt(mean(x²) + eps) * w, one program per row, fp32 statistics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.basics import MEMORY_BOUND_TARGET
from parity import KernelSpec, Tolerance, nan_empty, randn
from parity.cases import by_level, product
from reference import basics as ref


@triton.jit
def rmsnorm_kernel(x, w, out, N, stride_row, eps, BN: tl.constexpr):
    i_m = tl.program_id(0)
    o_n = tl.arange(0, BN)
    m_n = o_n < N
    b_x = tl.load(x + i_m * stride_row + o_n, mask=m_n, other=0.0).to(tl.float32)
    b_w = tl.load(w + o_n, mask=m_n, other=0.0).to(tl.float32)
    b_rstd = 1.0 / tl.sqrt(tl.sum(b_x * b_x, axis=0) / N + eps)
    tl.store(out + i_m * stride_row + o_n, (b_x * b_rstd * b_w).to(out.dtype.element_ty), mask=m_n)


def rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    M, N = x.shape
    out = nan_empty(x.shape, x.dtype, x.device)
    rmsnorm_kernel[(M,)](x, w, out, N=N, stride_row=x.stride(0), eps=eps, BN=triton.next_power_of_2(N))
    return out


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["M"], p["N"]), p["dtype"], gen), "w": randn((p["N"],), p["dtype"], gen)}


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": rmsnorm(inputs["x"], inputs["w"], p["eps"])}


DTYPES = ["fp16", "bf16", "fp32"]

SPECS = [
    KernelSpec(
        name="rmsnorm",
        family="basics",
        kernel=rmsnorm_kernel,
        launch=_launch,
        reference=ref.rmsnorm,
        cases=by_level(product(M=[37], N=[100, 781], eps=[1e-6], dtype=DTYPES),
                       product(M=[1, 37, 1000], N=[1, 100, 781, 1024, 4099], eps=[1e-6], dtype=DTYPES)),
        make_inputs=_inputs,
        tolerance={
            "fp32": Tolerance(rtol=1e-5, atol=1e-5, reason=(
                "the mean of squares accumulates N fp32 roundings and 1/sqrt is a few ulp, so "
                "relative errors reach several 1e-6, above torch's 1.3e-6")),
        },
        bytes=lambda p: 2 * p["M"] * p["N"] * (4 if p["dtype"] == "fp32" else 2),
        flops=lambda p: 4 * p["M"] * p["N"],
        perf_cases=product(M=[32768], N=[4096], eps=[1e-6], dtype=["bf16"]),
        bound="memory",
        perf_target=MEMORY_BOUND_TARGET,
        baseline=lambda inputs, p: torch.nn.functional.rms_norm(inputs["x"], (inputs["x"].shape[-1],), inputs["w"],
                                                                p["eps"]),
        out_dims={"out": ("row", "col")},
    ),
]
