"""softmax: one program per row, masked with -inf so padded lanes vanish from max and sum."""

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
def softmax_kernel(x, out, N, stride_x, stride_out, BN: tl.constexpr):
    i_m = tl.program_id(0)
    o_n = tl.arange(0, BN)
    m_n = o_n < N
    b_x = tl.load(x + i_m * stride_x + o_n, mask=m_n, other=-float("inf")).to(tl.float32)
    b_x = b_x - tl.max(b_x, axis=0)
    b_e = tl.exp(b_x)
    b_o = b_e / tl.sum(b_e, axis=0)
    tl.store(out + i_m * stride_out + o_n, b_o.to(out.dtype.element_ty), mask=m_n)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Row-wise softmax of x [M, N]; rows may be strided (x.stride(1) must be 1)."""
    M, N = x.shape
    if x.stride(1) != 1:
        raise ValueError(f"softmax needs unit stride along rows, got strides {x.stride()}; pass x.contiguous()")
    out = nan_empty(x.shape, x.dtype, x.device)
    softmax_kernel[(M,)](x, out, N=N, stride_x=x.stride(0), stride_out=out.stride(0), BN=triton.next_power_of_2(N))
    return out


# a strided case reads rows out of a wider buffer, as a slice of a larger activation would be
PAD = 13


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    width = p["N"] + (PAD if p.get("strided") else 0)
    return {"x": randn((p["M"], width), p["dtype"], gen, scale=3.0)}


def _rows(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> torch.Tensor:
    return inputs["x"][:, : p["N"]]  # a view: the kernel sees stride(0) = N + PAD


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": softmax(_rows(inputs, p))}


DTYPES = ["fp16", "bf16", "fp32"]

SPECS = [
    KernelSpec(
        name="softmax",
        family="basics",
        kernel=softmax_kernel,
        launch=_launch,
        reference=lambda inputs, p: ref.softmax({"x": _rows(inputs, p)}, p),
        cases=by_level(product(M=[37], N=[1, 100, 781], dtype=DTYPES) + product(M=[37], N=[100], dtype=DTYPES,
                                                                                 strided=[True]),
                       product(M=[1, 37, 1000], N=[1, 100, 781, 1024, 4099], dtype=DTYPES)),
        make_inputs=_inputs,
        tolerance={
            "fp32": Tolerance(rtol=1e-5, atol=1e-6, reason=(
                "tl.exp lowers to an approximate exp2 on GPUs (a few ulp) and the row sum adds one "
                "fp32 rounding per element, so errors reach ~1e-6 relative, above torch's 1.3e-6 at "
                "the tails; atol shrinks because outputs are probabilities of order 1/N")),
        },
        bytes=lambda p: 2 * p["M"] * p["N"] * (4 if p["dtype"] == "fp32" else 2),
        flops=lambda p: 5 * p["M"] * p["N"],
        out_dims={"out": ("row", "col")},
        perf_cases=product(M=[32768], N=[4096], dtype=["bf16"]),
        bound="memory",
        perf_target=MEMORY_BOUND_TARGET,
        baseline=lambda inputs, p: torch.softmax(_rows(inputs, p), dim=-1),
    ),
]
