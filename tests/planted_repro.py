"""A user kernel spec with a planted off-by-one, for the repro and shrinking controls.

`scale_rows_kernel` scales x [B, T, H, K] by SCALE. Its helper `row_limit` returns
T - 1 instead of T, so the last row of every (batch, head) is never written and
stays NaN. The bug sits in a @triton.jit helper and uses a constexpr global, so
the repro only reproduces it when source extraction follows both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

SCALE: tl.constexpr = tl.constexpr(2.0)
BUGGY_LINE = "return T - 1  # planted off-by-one"
FIXED_LINE = "return T"


@triton.jit
def row_limit(T):
    return T - 1  # planted off-by-one


@triton.jit
def scale_rows_kernel(x, out, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    o_t = i_t * BT + tl.arange(0, BT)
    o_k = tl.arange(0, BK)
    m_x = (o_t < row_limit(T))[:, None] & (o_k < K)[None, :]
    o_x = ((i_b * T + o_t[:, None]) * H + i_h) * K + o_k[None, :]
    b_x = tl.load(x + o_x, mask=m_x, other=0.0)  # [BT, BK]
    tl.store(out + o_x, (b_x.to(tl.float32) * SCALE).to(out.dtype.element_ty), mask=m_x)


@triton.heuristics({"EVEN_T": lambda args: args["T"] % args["BT"] == 0})
@triton.jit(do_not_specialize=["T"])
def copy_even_kernel(x, out, T, BT: tl.constexpr, EVEN_T: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    if EVEN_T:
        tl.store(out + o_t, tl.load(x + o_t))
    else:
        tl.store(out + o_t, tl.load(x + o_t, mask=o_t < T), mask=o_t < T)


def scale_rows(x: torch.Tensor, bt: int = 16) -> torch.Tensor:
    B, T, H, K = x.shape
    out = nan_empty(x.shape, x.dtype, x.device)
    scale_rows_kernel[(triton.cdiv(T, bt), B * H)](x, out, T, H=H, K=K, BT=bt, BK=triton.next_power_of_2(K))
    return out


def scale_rows_reference(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"] * _factor()}


def _factor() -> float:
    return 2.0


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["B"], p["T"], p["H"], p["K"]), p["dtype"], gen)}


SPECS = [
    KernelSpec(
        name="planted_scale_rows", family="planted_repro", kernel=scale_rows_kernel,
        launch=lambda inputs, p: {"out": scale_rows(inputs["x"])},
        reference=scale_rows_reference,
        cases=by_level(product(B=[2], T=[40], H=[2], K=[8], dtype=["fp32", "bf16"])),
        make_inputs=_inputs,
        out_dims={"out": ("b", "t", "head", "k")},
    ),
]
