"""tril_mask: strict and inclusive lower-triangular masks built by tl.arange broadcasting.

The layout is the chunked one of linear attention: x is [B, T, H, BT] and row t of
the sequence is row t % BT of its chunk, so the last chunk is ragged when T is not
a multiple of BT.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.basics import MEMORY_BOUND_TARGET
from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product
from reference import basics as ref


@triton.jit(do_not_specialize=["T", "n_rows"])
def tril_mask_kernel(x, out, T, n_rows, H: tl.constexpr, BT: tl.constexpr, BR: tl.constexpr,
                     INCLUSIVE: tl.constexpr):
    # x viewed as [B·T·H, BT]: row r is position t = (r // H) % T, row t % BT of its chunk.
    # A program streams BR consecutive rows, a contiguous block of memory: one tile per
    # (chunk, head) read BT rows H·BT elements apart and left the device copy's pace behind.
    i_r = tl.program_id(0)
    o_r = i_r * BR + tl.arange(0, BR)
    o_j = tl.arange(0, BT)
    m_r = o_r < n_rows
    o_i = ((o_r // H) % T) % BT  # [BR]: the row's place in its chunk
    o_x = o_r[:, None] * BT + o_j[None, :]
    b_x = tl.load(x + o_x, mask=m_r[:, None], other=0.0)  # [BR, BT]
    if INCLUSIVE:
        m_keep = o_i[:, None] >= o_j[None, :]
    else:
        m_keep = o_i[:, None] > o_j[None, :]
    tl.store(out + o_x, tl.where(m_keep, b_x, 0.0), mask=m_r[:, None])


def tril_mask(x: torch.Tensor, inclusive: bool, rows_per_program: int | None = None,
              num_warps: int = 4) -> torch.Tensor:
    """Lower-triangular mask of each [BT, BT] chunk of x [B, T, H, BT]; `rows_per_program` (a power
    of 2; default: 4 KiB of x per program) and `num_warps` are the launch's tuning knobs.

    On the H200 (bench/kernel_candidates.py, B=4, T=65536, H=16, BT=64, bf16) 32 rows a program ran
    at 100% of a device copy of the same bytes, 128 rows at 97%, one tile per (chunk, head) at 85%."""
    B, T, H, BT = x.shape
    out = nan_empty(x.shape, x.dtype, x.device)
    n_rows = B * T * H
    BR = rows_per_program or max(1, 4096 // (BT * x.element_size()))
    tril_mask_kernel[(triton.cdiv(n_rows, BR),)](x, out, T=T, n_rows=n_rows, H=H, BT=BT, BR=BR,
                                                 INCLUSIVE=inclusive, num_warps=num_warps)
    return out


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["B"], p["T"], p["H"], p["BT"]), p["dtype"], gen)}


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": tril_mask(inputs["x"], p["inclusive"])}


def _baseline(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> torch.Tensor:
    """torch.where over a broadcast [T, BT] mask, as a torch port writes it."""
    x = inputs["x"]
    i = (torch.arange(x.shape[1], device=x.device) % x.shape[3])[:, None]
    j = torch.arange(x.shape[3], device=x.device)[None, :]
    keep = (i >= j) if p["inclusive"] else (i > j)
    return torch.where(keep[None, :, None, :], x, 0.0)


DTYPES = ["fp16", "bf16", "fp32"]

SPECS = [
    KernelSpec(
        name="tril_mask",
        family="basics",
        kernel=tril_mask_kernel,
        launch=_launch,
        reference=ref.tril_mask,
        cases=by_level(product(B=[1], T=[100], H=[2], BT=[16, 64], inclusive=[False, True], dtype=DTYPES),
                       product(B=[1, 2], T=[1, 15, 100, 1000], H=[1, 4], BT=[16, 32, 64], inclusive=[False, True],
                               dtype=DTYPES)),
        make_inputs=_inputs,
        dynamic_args=("T",),
        variants={"INCLUSIVE": (False, True)},
        # the other mask's comparison must be gone from each variant's IR
        ir_absent={("INCLUSIVE", False): (r"arith\.cmpi sge",), ("INCLUSIVE", True): (r"arith\.cmpi sgt",)},
        bytes=lambda p: 2 * p["B"] * p["T"] * p["H"] * p["BT"] * (4 if p["dtype"] == "fp32" else 2),
        perf_cases=product(B=[4], T=[65536], H=[16], BT=[64], inclusive=[False], dtype=["bf16"]),  # 2^28 elements
        bound="memory",
        perf_target=MEMORY_BOUND_TARGET,
        baseline=_baseline,
        out_dims={"out": ("b", "t", "head", "col")},
    ),
]
