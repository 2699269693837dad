"""A user kernel, registered through the public API only (no parity internals).

Row-wise L2 normalisation of a [T, D] activation, blocked over rows, as linear
attention normalises q and k. Run it with:

    nox -s interpret -- --kernels examples.user_kernels.l2norm
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, Tolerance, nan_empty, randn
from parity.cases import by_level, product


@triton.jit(do_not_specialize=["T"])
def l2norm_rows_kernel(x, y, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr, EPS: tl.constexpr):
    i_t = tl.program_id(0)
    o_t = i_t * BT + tl.arange(0, BT)
    o_d = tl.arange(0, BD)
    m = (o_t < T)[:, None] & (o_d < D)[None, :]
    b_x = tl.load(x + o_t[:, None] * D + o_d[None, :], mask=m, other=0.0).to(tl.float32)  # [BT, BD]
    b_r = 1.0 / tl.sqrt(tl.sum(b_x * b_x, axis=1) + EPS)  # [BT]
    tl.store(y + o_t[:, None] * D + o_d[None, :], (b_x * b_r[:, None]).to(y.dtype.element_ty), mask=m)


def l2norm_rows(x: torch.Tensor, eps: float = 1e-6, bt: int = 16) -> torch.Tensor:
    """Args: x [T, D]. Returns: x / ||x||₂ per row, in x's dtype."""
    T, D = x.shape
    y = nan_empty(x.shape, x.dtype, x.device)
    l2norm_rows_kernel[(triton.cdiv(T, bt),)](x, y, T=T, D=D, BT=bt, BD=triton.next_power_of_2(D), EPS=eps)
    return y


def reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]  # float64 on the CPU
    return {"y": x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-6)}


SPECS = [
    KernelSpec(
        name="user_l2norm_rows",
        family="user",
        kernel=l2norm_rows_kernel,
        launch=lambda inputs, p: {"y": l2norm_rows(inputs["x"])},
        reference=reference,
        cases=by_level(product(T=[1, 100], D=[64, 100], dtype=["fp16", "bf16", "fp32"]),
                       product(T=[1, 100, 1000, 4097], D=[64, 100, 128], dtype=["fp16", "bf16", "fp32"])),
        make_inputs=lambda p, gen: {"x": randn((p["T"], p["D"]), p["dtype"], gen)},
        tolerance={"fp32": Tolerance(rtol=1e-5, atol=1e-6, reason=(
            "the sum of squares adds D fp32 roundings and 1/sqrt is a few ulp: ~1e-6 relative"))},
        dynamic_args=("T",),
        out_dims={"y": ("t", "d")},
        bytes=lambda p: 2 * p["T"] * p["D"] * (4 if p["dtype"] == "fp32" else 2),
    ),
]
