"""Correct long fp32 reductions at the default tolerance, and one that accumulates in fp16 (issue 49).

None of these specs gives a tolerance: each is judged at torch.testing's fp32 default (rtol 1.3e-6), which a
correct fp32 sum of 10^5 to 10^6 terms misses by reassociation alone.
- `rounding_atomic_sum`: block partials added into one element with tl.atomic_add (order free on a GPU, in
  program order on the CPU tiers);
- `rounding_row_sum`: a row of N walked in blocks of BLOCK, then reduced;
- `rounding_scan`: an inclusive prefix sum of N, block by block with a carried total (each element its own
  reduction length, up to N);
- `rounding_dot`: C = A·B with fp32 operands, K up to 4096, input_precision="ieee";
- `rounding_dot_fp16_acc` (the control): fp16 operands, the dot's accumulator in fp16 (out_dtype=tl.float16)
  over K = 4096. Its error is that of fp16 accumulation, far outside fp32 rounding: it must stay a failure,
  the author's.
- `rounding_dot_tight` (a control of the owner): the correct fp32 dot under a tolerance its spec chose tighter
  than rounding allows: a failure owned by that tolerance, a note, no draft;
- `rounding_dot_drops_last` (a control of the judge): the fp32 dot that skips its last K block (a loop bound
  off by one block): wrong beyond any rounding, at the default tolerance still a failure, the author's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, Tolerance, nan_empty, randn
from parity.cases import by_level, product
from tests.planted_rowsum import row_sum_looped_kernel as row_sum_kernel  # walks a row in BLOCKs, sums in fp32


@triton.jit
def atomic_sum_kernel(x, out, N, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    o = i * BLOCK + tl.arange(0, BLOCK)
    b_x = tl.load(x + o, mask=o < N, other=0.0)
    tl.atomic_add(out, tl.sum(b_x, axis=0))


@triton.jit
def scan_kernel(x, y, N, BLOCK: tl.constexpr):
    b_carry = tl.zeros([1], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        o = start + tl.arange(0, BLOCK)
        b_y = tl.cumsum(tl.load(x + o, mask=o < N, other=0.0), axis=0) + b_carry  # [BLOCK]
        tl.store(y + o, b_y, mask=o < N)
        b_carry += tl.sum(tl.where(o == start + BLOCK - 1, b_y, 0.0), axis=0) - b_carry


@triton.jit
def dot_kernel(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC_FP16: tl.constexpr,
               DROP_LAST: tl.constexpr):
    o_m = tl.arange(0, BM)
    o_n = tl.arange(0, BN)
    if ACC_FP16:
        b_acc = tl.zeros([BM, BN], dtype=tl.float16)
    else:
        b_acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K - BK * DROP_LAST, BK):
        o_k = k + tl.arange(0, BK)
        b_a = tl.load(a + o_m[:, None] * K + o_k[None, :])  # [BM, BK]
        b_b = tl.load(b + o_k[:, None] * BN + o_n[None, :])  # [BK, BN]
        if ACC_FP16:
            b_acc = tl.dot(b_a, b_b, b_acc, out_dtype=tl.float16)
        else:
            b_acc = tl.dot(b_a, b_b, b_acc, input_precision="ieee")
    tl.store(c + o_m[:, None] * BN + o_n[None, :], b_acc.to(c.dtype.element_ty))


def atomic_sum(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = torch.zeros((1,), dtype=x.dtype, device=x.device)
    atomic_sum_kernel[(triton.cdiv(p["N"], 1024),)](x, out, p["N"], BLOCK=1024)
    return {"s": out}


def row_sum(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = nan_empty((2,), x.dtype, x.device)
    row_sum_kernel[(2,)](x, out, p["N"], BLOCK=4096)
    return {"s": out}


def scan(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    y = nan_empty(x.shape, x.dtype, x.device)
    scan_kernel[(1,)](x, y, p["N"], BLOCK=1024)
    return {"y": y}


def dot(inputs: Mapping[str, Any], p: Mapping[str, Any], acc_fp16: bool = False,
        drop_last: bool = False) -> dict[str, torch.Tensor]:
    a, b = inputs["a"], inputs["b"]
    c = nan_empty((16, 16), a.dtype, a.device)
    dot_kernel[(1,)](a, b, c, p["K"], BM=16, BN=16, BK=64, ACC_FP16=acc_fp16, DROP_LAST=drop_last)
    return {"c": c}


def _sum_reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"s": inputs["x"].sum().reshape(1)}


def _row_reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"s": inputs["x"].reshape(2, -1).sum(-1)}


def _scan_reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"y": inputs["x"].cumsum(0)}


def _dot_reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"c": inputs["a"] @ inputs["b"]}


def _dot_inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"a": randn((16, p["K"]), p["dtype"], gen), "b": randn((p["K"], 16), p["dtype"], gen)}


SPECS = [
    KernelSpec(name="rounding_atomic_sum", family="rounding", kernel=atomic_sum_kernel, launch=atomic_sum,
               reference=_sum_reference,
               cases=by_level(product(N=[524_288, 1_048_576], dtype=["fp32"])),
               make_inputs=lambda p, gen: {"x": randn((p["N"],), p["dtype"], gen)}),
    KernelSpec(name="rounding_row_sum", family="rounding", kernel=row_sum_kernel, launch=row_sum,
               reference=_row_reference,
               cases=by_level(product(N=[500_000], dtype=["fp32"])),
               make_inputs=lambda p, gen: {"x": torch.rand((2 * p["N"],), generator=gen, dtype=torch.float32)}),
    KernelSpec(name="rounding_scan", family="rounding", kernel=scan_kernel, launch=scan,
               reference=_scan_reference,
               cases=by_level(product(N=[200_000], dtype=["fp32"])),
               make_inputs=lambda p, gen: {"x": randn((p["N"],), p["dtype"], gen)}),
    KernelSpec(name="rounding_dot", family="rounding", kernel=dot_kernel, launch=dot, reference=_dot_reference,
               cases=by_level(product(K=[1024, 4096], dtype=["fp32"])), make_inputs=_dot_inputs),
    KernelSpec(name="rounding_dot_fp16_acc", family="rounding", kernel=dot_kernel,
               launch=lambda inputs, p: dot(inputs, p, acc_fp16=True), reference=_dot_reference,
               cases=by_level(product(K=[4096], dtype=["fp16"])), make_inputs=_dot_inputs),
    KernelSpec(name="rounding_dot_tight", family="rounding", kernel=dot_kernel, launch=dot, reference=_dot_reference,
               cases=by_level(product(K=[4096], dtype=["fp32"])), make_inputs=_dot_inputs,
               tolerance={"fp32": Tolerance(rtol=1e-7, atol=0.0, reason="a control: tighter than fp32 rounding")}),
    KernelSpec(name="rounding_dot_drops_last", family="rounding", kernel=dot_kernel,
               launch=lambda inputs, p: dot(inputs, p, drop_last=True), reference=_dot_reference,
               cases=by_level(product(K=[4096], dtype=["fp32"])), make_inputs=_dot_inputs),
]
