"""Real device faults, for the GPU: an out-of-bounds write and an int32 offset past 2^31.

Run in this order with one xdist worker: the write poisons the CUDA context, so the worker
must be replaced for the int32 twin and the correct kernel after it to run at all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.basics import row_gather as rg
from parity import KernelSpec, Tolerance
from parity.cases import by_level, product
from tests import planted


@triton.jit
def oob_write_kernel(x, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    # 2^36 elements (256 GiB) past the buffer: an address no allocation covers
    tl.store(x + (1 << 36) + o, tl.load(x + o, mask=o < n), mask=o < n)


def _oob_write(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    oob_write_kernel[(1,)](inputs["x"], p["N"], BLOCK=128)
    return {"out": inputs["x"]}


@triton.jit
def row_gather_int32_kernel(x, rows, out, N, stride_row, BN: tl.constexpr):
    i_r, i_n = tl.program_id(0), tl.program_id(1)
    row = tl.load(rows + i_r)  # planted: stays int32, so row · stride wraps past 2^31
    o_n = i_n * BN + tl.arange(0, BN)
    m_n = o_n < N
    b_x = tl.load(x + row * stride_row + o_n, mask=m_n, other=0)
    tl.store(out + i_r * N + o_n, b_x.to(tl.float32), mask=m_n)


def _gather_int32(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x, rows = inputs["x"], inputs["rows"]
    out = torch.full((len(rows), x.shape[1]), float("nan"), device=x.device)
    row_gather_int32_kernel[(len(rows), triton.cdiv(x.shape[1], rg.BN))](x, rows, out, x.shape[1], x.stride(0),
                                                                         BN=rg.BN)
    return {"out": out}


oob_write = KernelSpec(
    name="fault_oob_write", family="planted", kernel=oob_write_kernel, launch=_oob_write,
    reference=lambda inputs, p: {"out": inputs["x"].clone()},
    cases=by_level(product(N=[100], dtype=["fp32"])),
    make_inputs=lambda p, gen: {"x": torch.ones(p["N"], dtype=torch.float32)},
)
int32_gather = KernelSpec(
    name="row_gather_int32", family="planted", kernel=row_gather_int32_kernel, launch=_gather_int32,
    reference=rg.ref.row_gather, cases=by_level(product(M=[(1 << 21) + 1], N=[rg.BN])),
    make_inputs=rg._inputs, tolerance_key=lambda p: "fp32",
    tolerance={"fp32": Tolerance(rtol=0.0, atol=0.0, reason="a gather of int8 into fp32 is exact")},
    device_gib=rg._device_gib, out_dims={"out": ("row", "col")},
)

# the shipped int64 kernel under its own name (names are unique across the registry)
int64_gather = dataclasses.replace(rg.SPECS[0], name="row_gather_int64", family="planted")

SPECS = [oob_write, int32_gather, int64_gather, planted.correct_add]
