"""Planted kernels for the repro's capture-by-storage, pointer-table and fresh-process controls.

- `planted_conv_state`: a Mamba-style causal conv1d state update. The launcher keeps the state
  time-major ([B + 1, W, D], one spare slot, so the state starts at a storage offset), the kernel
  writes it through that layout, and the caller gets it back as the transposed [B, D, W] view; x is
  a slice of a padded buffer and the weight an expanded view. Planted: the shift drops the last
  state column (`BUGGY_SHIFT`).
- `planted_lora_shrink`: a LoRA-shrink-like kernel that reads each token's weight through a uint64
  table of `data_ptr()` values (with offsets into one stacked tensor) it is never handed directly.
  Planted: the last K column is skipped (`BUGGY_K`).
- `planted_stale_table`: the same, with one more table entry holding an address that lies in no
  tensor (a freed adapter's); the kernel never reads it, but a repro cannot know that.
- `planted_after_launch`: a correct kernel whose launcher spoils the output afterwards when
  PLANTED_AFTER_LAUNCH=1: the failure is not in the launches, so its repro exits 0.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

BUGGY_SHIFT = "m_old = m_d[:, None] & (o_w[None, :] + 1 < W - 1)  # planted: drops the last column"
FIXED_SHIFT = "m_old = m_d[:, None] & (o_w[None, :] + 1 < W)"
BUGGY_K = "m_k = o_k < K - 1  # planted: skips the last column"
FIXED_K = "m_k = o_k < K"
STALE_ADDRESS = 0xDEAD_0000_0000  # user-space-looking, mapped by nothing here
AFTER_LAUNCH_VAR = "PLANTED_AFTER_LAUNCH"


@triton.jit
def conv_state_update_kernel(x, state, w, out, stride_xb, stride_sb, stride_sw, stride_wb, stride_wd, D,
                             W: tl.constexpr, BD: tl.constexpr, BW: tl.constexpr):
    i_b, i_d = tl.program_id(0), tl.program_id(1)
    o_d = i_d * BD + tl.arange(0, BD)
    o_w = tl.arange(0, BW)
    m_d = o_d < D
    # shift the window left by one: new[w] = old[w + 1], and new[W - 1] = x
    p_old = state + i_b * stride_sb + (o_w[None, :] + 1) * stride_sw + o_d[:, None]
    m_old = m_d[:, None] & (o_w[None, :] + 1 < W - 1)  # planted: drops the last column
    b_old = tl.load(p_old, mask=m_old, other=0.0)  # [BD, BW]
    b_x = tl.load(x + i_b * stride_xb + o_d, mask=m_d, other=0.0)  # [BD]
    b_new = tl.where(o_w[None, :] == W - 1, b_x[:, None], b_old)
    m_new = m_d[:, None] & (o_w[None, :] < W)
    b_w = tl.load(w + i_b * stride_wb + o_d[:, None] * stride_wd + o_w[None, :], mask=m_new, other=0.0)
    tl.store(out + i_b * D + o_d, tl.sum(b_new * b_w, 1), mask=m_d)
    tl.store(state + i_b * stride_sb + o_w[None, :] * stride_sw + o_d[:, None], b_new, mask=m_new)


def conv_state_update(x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor) -> dict[str, torch.Tensor]:
    B, D, W = conv_state.shape
    state_tw = torch.empty(B + 1, W, D, dtype=conv_state.dtype, device=conv_state.device)[1:]  # time-major
    state = state_tw.transpose(1, 2)  # [B, D, W], the caller's layout
    state.copy_(conv_state)
    x_pad = torch.zeros(B, D + 1, dtype=x.dtype, device=x.device)
    x_pad[:, 1:] = x
    x_view = x_pad[:, 1:]  # a slice at storage offset 1
    w = weight.unsqueeze(0).expand(B, D, W)  # stride 0 over B
    out = nan_empty((B, D), x.dtype, x.device)
    BD = 4
    conv_state_update_kernel[(B, triton.cdiv(D, BD))](
        x_view, state_tw, w, out, x_view.stride(0), state_tw.stride(0), state_tw.stride(1), w.stride(0),
        w.stride(1), D, W=W, BD=BD, BW=triton.next_power_of_2(W))
    return {"out": out, "conv_state": state}


def conv_state_reference(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    state = torch.cat([inputs["conv_state"][:, :, 1:], inputs["x"][:, :, None]], dim=2)
    return {"out": (state * inputs["weight"][None]).sum(-1), "conv_state": state}


@triton.jit
def lora_shrink_kernel(x, table, ids, out, K, R: tl.constexpr, BK: tl.constexpr):
    i_t = tl.program_id(0)
    i_l = tl.load(ids + i_t)
    p_w = tl.load(table + i_l).to(tl.pointer_type(tl.float32))  # this token's adapter, by address
    o_r = tl.arange(0, R)
    o_k = tl.arange(0, BK)
    m_k = o_k < K - 1  # planted: skips the last column
    b_x = tl.load(x + i_t * K + o_k, mask=m_k, other=0.0)  # [BK]
    b_w = tl.load(p_w + o_r[:, None] * K + o_k[None, :], mask=m_k[None, :], other=0.0)  # [R, BK]
    tl.store(out + i_t * R + o_r, tl.sum(b_w * b_x[None, :], 1))


def lora_shrink(x: torch.Tensor, lora_a: torch.Tensor, ids: torch.Tensor, stale: bool = False) -> torch.Tensor:
    T, K = x.shape
    L, R, _ = lora_a.shape
    addresses = [lora_a[i].data_ptr() for i in range(L)] + ([STALE_ADDRESS] if stale else [])
    table = torch.tensor(addresses, dtype=torch.uint64, device=x.device)
    out = nan_empty((T, R), x.dtype, x.device)
    lora_shrink_kernel[(T,)](x, table, ids, out, K, R=R, BK=triton.next_power_of_2(K))
    return out


def lora_shrink_reference(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    w = inputs["lora_a"][inputs["ids"].long()]  # [T, R, K]
    return {"out": torch.einsum("trk,tk->tr", w, inputs["x"])}


@triton.jit
def copy_kernel(x, out, N, BN: tl.constexpr):
    o_n = tl.program_id(0) * BN + tl.arange(0, BN)
    tl.store(out + o_n, tl.load(x + o_n, mask=o_n < N), mask=o_n < N)


def copy_then_spoil(x: torch.Tensor) -> torch.Tensor:
    out = nan_empty(x.shape, x.dtype, x.device)
    copy_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BN=16)
    if os.environ.get(AFTER_LAUNCH_VAR) == "1":  # a launcher step outside any kernel
        out[-1] = 0.0
    return out


def copy_reference(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"]}


def _conv_inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    B, D, W = p["B"], p["D"], p["W"]
    return {"x": randn((B, D), p["dtype"], gen), "conv_state": randn((B, D, W), p["dtype"], gen),
            "weight": randn((D, W), p["dtype"], gen)}


def _lora_inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["T"], p["K"]), p["dtype"], gen), "lora_a": randn((p["L"], p["R"], p["K"]), p["dtype"], gen),
            "ids": torch.randint(0, p["L"], (p["T"],), generator=gen, dtype=torch.int32)}


SPECS = [
    KernelSpec(
        name="planted_conv_state", family="planted_views", kernel=conv_state_update_kernel,
        launch=lambda inputs, p: conv_state_update(inputs["x"], inputs["conv_state"], inputs["weight"]),
        reference=conv_state_reference,
        cases=by_level(product(B=[2], D=[6], W=[4], dtype=["fp32"])),
        make_inputs=_conv_inputs,
    ),
    KernelSpec(
        name="planted_lora_shrink", family="planted_views", kernel=lora_shrink_kernel,
        launch=lambda inputs, p: {"out": lora_shrink(inputs["x"], inputs["lora_a"], inputs["ids"])},
        reference=lora_shrink_reference,
        cases=by_level(product(T=[5], K=[8], L=[3], R=[4], dtype=["fp32"])),
        make_inputs=_lora_inputs,
    ),
    KernelSpec(
        name="planted_stale_table", family="planted_views", kernel=lora_shrink_kernel,
        launch=lambda inputs, p: {"out": lora_shrink(inputs["x"], inputs["lora_a"], inputs["ids"], stale=True)},
        reference=lora_shrink_reference,
        cases=by_level(product(T=[5], K=[8], L=[3], R=[4], dtype=["fp32"])),
        make_inputs=_lora_inputs,
    ),
    KernelSpec(
        name="planted_after_launch", family="planted_views", kernel=copy_kernel,
        launch=lambda inputs, p: {"out": copy_then_spoil(inputs["x"])},
        reference=copy_reference,
        cases=by_level(product(N=[40], dtype=["fp32"])),
        make_inputs=lambda p, gen: {"x": randn((p["N"],), p["dtype"], gen)},
    ),
]
