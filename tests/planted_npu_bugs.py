"""Minimal kernels with the patterns of the published silent wrong results of triton-ascend on a real NPU
(parity.known_npu), one spec each: the canaries that say whether ascend-lowered (triton-adapter's lowering run on
x86) reproduces each bug. Each spec's reference is the right answer, so a tier that computes right passes.

- `npu_bug_3d_leading_sum`: tl.sum(acc, 0) over a 3-D tile [R, X1, X0] (triton-ascend#2291);
- `npu_bug_half_scalar`: a scalar argument annotated tl.float16 / tl.bfloat16, stored as fp32 (triton-ascend#2364);
- `npu_bug_masked_store`: masked fp32 stores of 1..8 columns, 20 launches into NaN-prefilled outputs
  (FlagTree#1245: groups of 2 x fp32 lost nondeterministically);
- `npu_bug_atomic_return`: 512 lanes each tl.atomic_add 1 to one counter and keep the value it returns
  (FlagTree#1083: lanes in groups of 8 got the group's base value).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty
from parity.known_npu import canary_divergences
from parity.spec import Case

R, X1, X0 = 8, 4, 16
STORE_RUNS = 20
LANES = 512


@triton.jit
def sum_3d_leading_kernel(x, out, s_r, s_1, R: tl.constexpr, X1: tl.constexpr, X0: tl.constexpr):
    o_r = tl.arange(0, R)[:, None, None]
    o_1 = tl.arange(0, X1)[None, :, None]
    o_0 = tl.arange(0, X0)[None, None, :]
    b_acc = tl.load(x + o_r * s_r + o_1 * s_1 + o_0)  # [R, X1, X0]; s_1 = 0: an input broadcast along X1
    b_s = tl.sum(b_acc, 0)  # [X1, X0]: the leading axis
    tl.store(out + tl.arange(0, X1)[:, None] * X0 + tl.arange(0, X0)[None, :], b_s)


@triton.jit
def half_scalar_kernel(out, value: tl.float16, BLOCK: tl.constexpr):
    tl.store(out + tl.arange(0, BLOCK), tl.full([BLOCK], 0.0, tl.float32) + value.to(tl.float32))


@triton.jit
def bf16_scalar_kernel(out, value: tl.bfloat16, BLOCK: tl.constexpr):
    tl.store(out + tl.arange(0, BLOCK), tl.full([BLOCK], 0.0, tl.float32) + value.to(tl.float32))


@triton.jit
def masked_store_kernel(x, out, cols, BLOCK: tl.constexpr):
    i_r = tl.program_id(0)
    o_c = tl.arange(0, BLOCK)
    m_c = o_c < cols
    b_x = tl.load(x + i_r * cols + o_c, mask=m_c, other=0.0)
    tl.store(out + i_r * cols + o_c, b_x * 2.0, mask=m_c)


@triton.jit
def atomic_return_kernel(cnt, pos, N: tl.constexpr):
    o_l = tl.arange(0, N)
    p_old = tl.atomic_add(cnt + tl.zeros([N], tl.int32), tl.full([N], 1, tl.int32), sem="relaxed")
    tl.store(pos + o_l, p_old)


def _sum_launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out = nan_empty((X1, X0), torch.float32, inputs["x"].device)
    s_r, s_1 = (X1 * X0, X0) if p["layout"] == "contiguous" else (X0, 0)
    sum_3d_leading_kernel[(1,)](inputs["x"], out, s_r, s_1, R=R, X1=X1, X0=X0)
    return {"out": out}


def _sum_reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"] if p["layout"] == "contiguous" else inputs["x"].reshape(-1)[:R * X0].reshape(R, 1, X0)
    return {"out": x.sum(0).expand(X1, X0)}


def _scalar_launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out = nan_empty((16,), torch.float32, inputs["device"].device)
    kernel = half_scalar_kernel if p["scalar"] == "fp16" else bf16_scalar_kernel
    kernel[(1,)](out, p["value"], BLOCK=16)
    return {"out": out}


def _store_launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x, rows, cols = inputs["x"], p["rows"], p["cols"]
    outs = []
    for _ in range(STORE_RUNS):  # the NPU bug is nondeterministic: many launches, each into fresh NaN
        out = nan_empty((rows * cols,), torch.float32, x.device)
        masked_store_kernel[(rows,)](x, out, cols, BLOCK=8)
        outs.append(out)
    return {"out": torch.stack(outs)}


def _atomic_launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    dev = inputs["device"].device
    cnt = torch.zeros(1, dtype=torch.int32, device=dev)
    pos = torch.full((LANES,), -1, dtype=torch.int32, device=dev)
    atomic_return_kernel[(1,)](cnt, pos, N=LANES)
    # the lanes' order is free; their set is not: N lanes adding 1 get N distinct values 0..N-1
    return {"returned": torch.sort(pos.cpu().to(torch.int64)).values.to(torch.float32), "count": cnt.float()}


def _device(p: Mapping[str, Any], g: torch.Generator) -> dict[str, Any]:
    return {"device": torch.zeros(1)}


def _one(**params: Any) -> Any:
    return lambda level: [Case(dict(params))]


SPECS = [
    KernelSpec(name="npu_bug_3d_leading_sum", family="planted_npu_bugs",
               known_divergences=canary_divergences(["triton-ascend#2291"]), kernel=sum_3d_leading_kernel,
               launch=_sum_launch, reference=_sum_reference,
               cases=lambda level: [Case({"layout": s, "dtype": "fp32"}) for s in ("contiguous", "broadcast")],
               make_inputs=lambda p, g: {"x": torch.randn((R, X1, X0), generator=g)}),
    KernelSpec(name="npu_bug_half_scalar", family="planted_npu_bugs",
               known_divergences=canary_divergences(["triton-ascend#2364"]), kernel=half_scalar_kernel,
               launch=_scalar_launch,
               reference=lambda i, p: {"out": torch.full((16,), p["value"], dtype=torch.float64)},
               cases=lambda level: [Case({"scalar": s, "value": 1.5, "dtype": "fp32"}) for s in ("fp16", "bf16")],
               make_inputs=_device),
    KernelSpec(name="npu_bug_masked_store", family="planted_npu_bugs",
               known_divergences=canary_divergences(["FlagTree#1245"]), kernel=masked_store_kernel,
               launch=_store_launch,
               reference=lambda i, p: {"out": (i["x"] * 2.0).reshape(1, -1).expand(STORE_RUNS, -1)},
               cases=lambda level: [Case({"rows": 64, "cols": c, "dtype": "fp32"}) for c in (1, 2, 3, 4, 8)],
               make_inputs=lambda p, g: {"x": torch.randn(p["rows"] * p["cols"], generator=g)}),
    KernelSpec(name="npu_bug_atomic_return", family="planted_npu_bugs",
               known_divergences=canary_divergences(["FlagTree#1083"]), kernel=atomic_return_kernel,
               launch=_atomic_launch,
               reference=lambda i, p: {"returned": torch.arange(LANES, dtype=torch.float64),
                                       "count": torch.tensor([float(LANES)], dtype=torch.float64)},
               cases=_one(dtype="fp32"), make_inputs=_device),
]
