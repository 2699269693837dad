"""Deliberately broken kernels: each checker must catch its planted bug."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, Tolerance, nan_empty, randn
from parity.cases import by_level, product


@triton.jit
def copy_rows_floor_grid_kernel(x, out, T, K: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    o_t = i_t * BT + tl.arange(0, BT)
    o_k = tl.arange(0, K)
    m_t = o_t < T
    b_x = tl.load(x + o_t[:, None] * K + o_k[None, :], mask=m_t[:, None])
    tl.store(out + o_t[:, None] * K + o_k[None, :], b_x, mask=m_t[:, None])


def copy_rows_floor_grid(x: torch.Tensor, bt: int = 64) -> torch.Tensor:
    T, K = x.shape
    out = nan_empty(x.shape, x.dtype, x.device)
    # the planted bug: T // BT drops the ragged last block, so its rows are never written
    copy_rows_floor_grid_kernel[(T // bt,)](x, out, T=T, K=K, BT=bt)
    return out


@triton.jit
def add_mask_off_by_one_kernel(x, y, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n - 1  # the planted bug: the last element reads as 0
    b = tl.load(x + o, mask=m, other=0.0) + tl.load(y + o, mask=m, other=0.0)
    tl.store(out + o, b, mask=o < n)


@triton.jit
def add_nan_at_kernel(x, y, out, n, BAD: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    b = tl.load(x + o, mask=m) + tl.load(y + o, mask=m)
    tl.store(out + o, tl.where(o == BAD, float("nan"), b), mask=m)


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out + o, tl.load(x + o, mask=m) + tl.load(y + o, mask=m), mask=m)


def _pair(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["N"],), p["dtype"], gen), "y": randn((p["N"],), p["dtype"], gen)}


def _add_ref(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"] + inputs["y"]}


def _launch_with(kernel: Any, **extra: Any) -> Any:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        x, y = inputs["x"], inputs["y"]
        out = nan_empty(x.shape, x.dtype, x.device)
        kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, n=x.numel(), BLOCK=256, **extra)
        return {"out": out}
    return launch


FP32_4097 = by_level(product(N=[4097], dtype=["fp32"]))

floor_grid = KernelSpec(
    name="planted_floor_grid", family="planted", kernel=copy_rows_floor_grid_kernel,
    launch=lambda inputs, p: {"out": copy_rows_floor_grid(inputs["x"])},
    reference=lambda inputs, p: {"out": inputs["x"].clone()},
    cases=by_level(product(T=[1000], K=[16], dtype=["fp32"])),
    make_inputs=lambda p, gen: {"x": randn((p["T"], p["K"]), p["dtype"], gen)},
    out_dims={"out": ("t", "k")},
)
mask_off_by_one = KernelSpec(
    name="planted_mask_off_by_one", family="planted", kernel=add_mask_off_by_one_kernel,
    launch=_launch_with(add_mask_off_by_one_kernel), reference=_add_ref, cases=FP32_4097, make_inputs=_pair,
    out_dims={"out": ("i",)},
)
nan_output = KernelSpec(
    name="planted_nan", family="planted", kernel=add_nan_at_kernel,
    launch=_launch_with(add_nan_at_kernel, BAD=7), reference=_add_ref, cases=FP32_4097, make_inputs=_pair,
)
correct_add = KernelSpec(
    name="correct_add", family="planted", kernel=add_kernel, launch=_launch_with(add_kernel),
    reference=_add_ref, cases=by_level(product(N=[4097], dtype=["fp16"])), make_inputs=_pair,
)
too_tight = KernelSpec(
    name="correct_add_too_tight", family="planted", kernel=add_kernel, launch=_launch_with(add_kernel),
    reference=_add_ref, cases=by_level(product(N=[4097], dtype=["fp16"])), make_inputs=_pair,
    tolerance={"fp16": Tolerance(rtol=1e-6, atol=0.0, reason="deliberately tighter than fp16 rounding")},
)

SPECS = [floor_grid, mask_off_by_one, nan_output, correct_add, too_tight]
