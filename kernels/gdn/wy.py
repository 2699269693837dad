"""recompute_w_u: the WY representation of a chunk, u = Ai·(β ⊙ v) and w = Ai·(β ⊙ exp(g) ⊙ k).

One program per (chunk, batch · head). Ai [BT, BT] is loaded once and multiplied
with BV/BK column blocks of v and k; the scaled operands are rounded back to the
input dtype so both dots run on tensor cores with fp32 accumulation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels import gdn
from kernels.gdn import fla_peer
from kernels.gdn.common import chunk_bounds
from parity import KernelSpec, known, nan_empty
from parity.cases import by_level, product
from reference import gdn as ref


@triton.heuristics({
    "USE_G": lambda args: args["g"] is not None,
    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None,
})
@triton.autotune(
    configs=gdn.autotune_configs([triton.Config({}, num_warps=num_warps, num_stages=num_stages)
                                  for num_warps, num_stages in ((4, 3), (8, 3), (4, 1))]),
    key=["H", "K", "V", "BT", "BK", "BV", "IS_VARLEN"],
)
@triton.jit(do_not_specialize=["T"])
def recompute_w_u_kernel(k, v, beta, A, g, w, u, cu_seqlens, chunk_indices, T, H: tl.constexpr, K: tl.constexpr,
                         V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, USE_G: tl.constexpr,
                         IS_VARLEN: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = chunk_bounds(i_b, i_t, T, cu_seqlens, chunk_indices, IS_VARLEN)

    p_beta = tl.make_block_ptr(beta + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
    b_beta = tl.load(p_beta, boundary_check=(0,)).to(tl.float32)  # [BT]
    p_A = tl.make_block_ptr(A + (bos * H + i_h) * BT, (T, BT), (H * BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    b_A = tl.load(p_A, boundary_check=(0, 1))  # [BT, BT]

    for i_v in range(tl.cdiv(V, BV)):
        p_v = tl.make_block_ptr(v + (bos * H + i_h) * V, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        p_u = tl.make_block_ptr(u + (bos * H + i_h) * V, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        b_v = tl.load(p_v, boundary_check=(0, 1))  # [BT, BV]
        b_vb = (b_v.to(tl.float32) * b_beta[:, None]).to(b_v.dtype)
        b_u = tl.dot(b_A, b_vb)
        tl.store(p_u, b_u.to(p_u.dtype.element_ty), boundary_check=(0, 1))

    b_kscale = b_beta
    if USE_G:
        p_g = tl.make_block_ptr(g + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
        b_kscale = b_beta * tl.exp(tl.load(p_g, boundary_check=(0,)).to(tl.float32))  # [BT]
    for i_k in range(tl.cdiv(K, BK)):
        p_k = tl.make_block_ptr(k + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_w = tl.make_block_ptr(w + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        b_k = tl.load(p_k, boundary_check=(0, 1))  # [BT, BK]
        b_kb = (b_k.to(tl.float32) * b_kscale[:, None]).to(b_k.dtype)
        b_w = tl.dot(b_A, b_kb)
        tl.store(p_w, b_w.to(p_w.dtype.element_ty), boundary_check=(0, 1))


def recompute_w_u(k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, A: torch.Tensor,
                  g_cumsum: torch.Tensor | None = None, cu_seqlens: torch.Tensor | None = None,
                  chunk_indices: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """w [B, T, H, K] and u [B, T, H, V] in k's/v's dtype, from Ai = A [B, T, H, BT]."""
    B, T, H, K = k.shape
    V, BT = v.shape[-1], A.shape[-1]
    if cu_seqlens is not None and chunk_indices is None:
        chunk_indices = gdn.prepare_chunk_indices(cu_seqlens, BT)
    NT = triton.cdiv(T, BT) if cu_seqlens is None else len(chunk_indices)
    w = nan_empty(k.shape, k.dtype, k.device)
    u = nan_empty(v.shape, v.dtype, v.device)
    recompute_w_u_kernel[(NT, B * H)](k=k, v=v, beta=beta, A=A, g=g_cumsum, w=w, u=u, cu_seqlens=cu_seqlens,
                                      chunk_indices=chunk_indices, T=T, H=H, K=K, V=V, BT=BT,
                                      BK=min(triton.next_power_of_2(K), 64), BV=min(triton.next_power_of_2(V), 64))
    return w, u


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    """Realistic k, v, β, and Ai and g_cumsum from the fp64 pipeline (Ai rounded to the input dtype, as fla)."""
    raw = gdn.raw_inputs(p, gen)
    pipe = gdn.fp64_pipeline(raw, p, until="Ai")
    out = {"k": raw["k"], "v": raw["v"], "beta": raw["beta"], "Ai": pipe["Ai"].to(raw["k"].dtype)}
    if p["use_g"]:
        out["g_cumsum"] = pipe["g_cumsum"].float()
    if "cu_seqlens" in raw:
        out["cu_seqlens"] = raw["cu_seqlens"]
    return out


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    w, u = recompute_w_u(inputs["k"], inputs["v"], inputs["beta"], inputs["Ai"], inputs.get("g_cumsum"),
                         gdn.cu_of(inputs))
    return {"w": w, "u": u}


def _reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    w, u = ref.recompute_w_u(inputs["k"], inputs["v"], inputs["beta"], inputs["Ai"], inputs.get("g_cumsum"), p["BT"],
                             gdn.cu_of(inputs))
    return {"w": w, "u": u}


def _baseline(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """Two batched matmuls in torch eager."""
    k, v, beta, Ai, BT = inputs["k"], inputs["v"], inputs["beta"], inputs["Ai"], p["BT"]
    chunked = lambda x: gdn.chunked(x, BT)  # noqa: E731  [B, NT, H, BT, ...]
    scale_k = beta if inputs.get("g_cumsum") is None else beta * torch.exp(inputs["g_cumsum"]).to(beta.dtype)
    u = chunked(Ai) @ chunked(v * beta[..., None])
    w = chunked(Ai) @ chunked(k * scale_k[..., None])
    return w, u


CASE_DTYPES = ["bf16", "fp16", "fp32"]
_SMALL = {"H": 2, "K": 32, "V": 32}
_QUICK = (product(B=[2], T=[100], **{k: [v] for k, v in _SMALL.items()}, BT=[16, 64], use_g=[False, True],
                  dtype=["fp16", "fp32"])
          + product(B=[1], T=[50], **{k: [v] for k, v in _SMALL.items()}, BT=[32], use_g=[True], dtype=["bf16"])
          + gdn.varlen_cases({**_SMALL, "BT": 32, "use_g": True, "dtype": "fp16"}, [(0, 64, 36)]))
_FULL = (product(B=[1, 2], T=[1, 63, 300], H=[2], K=[64, 128], V=[64, 128], BT=[16, 32, 64], use_g=[False, True],
                 dtype=CASE_DTYPES)
         + gdn.varlen_product([(0, 64, 36), (37, 0, 200, 27, 0)], H=[4], K=[128], V=[64], BT=[16, 32, 64],
                              use_g=[False, True], dtype=CASE_DTYPES))


def _bytes(p: Mapping[str, Any]) -> float:
    B, T, _ = gdn.shape_of(p)
    s = gdn.itemsize(p["dtype"])
    return B * T * p["H"] * (2 * (p["K"] + p["V"]) * s + p["BT"] * s + s + 4 * p["use_g"])


SPECS = [
    KernelSpec(
        name="gdn_recompute_w_u",
        family="gdn",
        kernel=recompute_w_u_kernel,
        launch=_launch,
        reference=_reference,
        cases=by_level(_QUICK, _FULL),
        make_inputs=_inputs,
        tolerance=gdn.per_kernel_tolerance(CASE_DTYPES),
        compile_signature=gdn.compile_signature({"H": 2, "K": 128, "V": 128, "BT": 64}, {"use_g": (False, True)}),
        dynamic_args=("T",),
        variants={"USE_G": (False, True), "IS_VARLEN": (False, True)},
        known_divergences=(known.INTERPRETER_BF16,),
        bytes=_bytes,
        flops=lambda p: 2 * gdn.shape_of(p)[0] * gdn.shape_of(p)[1] * p["H"] * p["BT"] * (p["K"] + p["V"]),
        out_dims={"w": ("b", "t", "head", "k"), "u": ("b", "t", "head", "v")},
        perf_cases=gdn.perf_cases(use_g=True),
        peer=fla_peer.WY,
        perf_target=gdn.PEER_TARGET,
        baseline=_baseline,
    ),
]
