"""chunk_fwd_o: the GDN output from the per-chunk states and the intra-chunk attention.

    o_i = scale·[exp(g_i)·q_i·H_c + Σ_{j≤i} (q_i·k_j)·exp(g_i − g_j)·v_new_j]

The intra-chunk mask is inclusive (j ≤ i). One program per (V block, chunk,
batch · head); q·H_c and q·kᵀ share the K loop, then the masked, decayed scores
multiply v_new on tensor cores.
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
    configs=gdn.autotune_configs([triton.Config({"BK": BK, "BV": BV}, num_warps=num_warps, num_stages=num_stages)
                                  for BK, BV, num_warps, num_stages in ((64, 128, 4, 3), (64, 128, 8, 3),
                                                                        (64, 64, 4, 3), (128, 64, 4, 2))]),
    key=["H", "K", "V", "BT", "IS_VARLEN"],
)
@triton.jit(do_not_specialize=["T"])
def chunk_fwd_o_kernel(q, k, v, h, g, o, cu_seqlens, chunk_indices, scale, T, H: tl.constexpr, K: tl.constexpr,
                       V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, USE_G: tl.constexpr,
                       IS_VARLEN: tl.constexpr):
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_tg = i_t  # position in the flat chunk list, which is also h's chunk index
    else:
        i_tg = i_b * tl.cdiv(T, BT) + i_t
    i_t, bos, T = chunk_bounds(i_b, i_t, T, cu_seqlens, chunk_indices, IS_VARLEN)
    o_i = tl.arange(0, BT)

    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_q = tl.make_block_ptr(q + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_k = tl.make_block_ptr(k + (bos * H + i_h) * K, (K, T), (1, H * K), (i_k * BK, i_t * BT), (BK, BT), (0, 1))
        p_h = tl.make_block_ptr(h + (i_tg * H + i_h) * K * V, (K, V), (V, 1), (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        b_q = tl.load(p_q, boundary_check=(0, 1))  # [BT, BK]
        b_k = tl.load(p_k, boundary_check=(0, 1))  # [BK, BT]
        b_h = tl.load(p_h, boundary_check=(0, 1))  # [BK, BV]
        b_o += tl.dot(b_q, b_h)
        b_A += tl.dot(b_q, b_k)
    m_A = o_i[:, None] >= o_i[None, :]  # inclusive: a token attends to itself
    if USE_G:
        p_g = tl.make_block_ptr(g + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
        b_g = tl.load(p_g, boundary_check=(0,)).to(tl.float32)  # [BT]
        b_o = b_o * tl.exp(b_g)[:, None]
        b_A = b_A * tl.exp(tl.where(m_A, b_g[:, None] - b_g[None, :], 0.0))
    b_A = tl.where(m_A, b_A, 0.0)

    p_v = tl.make_block_ptr(v + (bos * H + i_h) * V, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    p_o = tl.make_block_ptr(o + (bos * H + i_h) * V, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    b_v = tl.load(p_v, boundary_check=(0, 1))  # [BT, BV]
    b_o = (b_o + tl.dot(b_A.to(b_v.dtype), b_v)) * scale
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


def chunk_fwd_o(q: torch.Tensor, k: torch.Tensor, v_new: torch.Tensor, h: torch.Tensor,
                g_cumsum: torch.Tensor | None = None, scale: float | None = None, chunk_size: int = 64,
                cu_seqlens: torch.Tensor | None = None, chunk_indices: torch.Tensor | None = None) -> torch.Tensor:
    """o [B, T, H, V] in q's dtype; scale defaults to K^-0.5."""
    B, T, H, K = q.shape
    V = v_new.shape[-1]
    scale = K**-0.5 if scale is None else scale
    if cu_seqlens is not None and chunk_indices is None:
        chunk_indices = gdn.prepare_chunk_indices(cu_seqlens, chunk_size)
    NT = triton.cdiv(T, chunk_size) if cu_seqlens is None else len(chunk_indices)
    o = nan_empty((B, T, H, V), q.dtype, q.device)

    def grid(meta: Mapping[str, Any]) -> tuple[int, int, int]:
        return triton.cdiv(V, meta["BV"]), NT, B * H

    chunk_fwd_o_kernel[grid](q=q, k=k, v=v_new, h=h, g=g_cumsum, o=o, cu_seqlens=cu_seqlens,
                             chunk_indices=chunk_indices, scale=scale, T=T, H=H, K=K, V=V, BT=chunk_size)
    return o


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    """q, k realistic; v_new, h and g_cumsum from the fp64 pipeline, rounded as fla stores them."""
    raw = gdn.raw_inputs(p, gen)
    pipe = gdn.fp64_pipeline(raw, p, until="h")
    dt = raw["q"].dtype
    out: dict[str, Any] = {"q": raw["q"], "k": raw["k"], "v_new": pipe["v_new"].to(dt), "h": pipe["h"].to(dt)}
    if p["use_g"]:
        out["g_cumsum"] = pipe["g_cumsum"].float()
    if "cu_seqlens" in raw:
        out["cu_seqlens"] = raw["cu_seqlens"]
    return out


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"o": chunk_fwd_o(inputs["q"], inputs["k"], inputs["v_new"], inputs["h"], inputs.get("g_cumsum"), None,
                             p["BT"], gdn.cu_of(inputs))}


def _reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"o": ref.chunk_fwd_o(inputs["q"], inputs["k"], inputs["v_new"], inputs["h"], inputs.get("g_cumsum"),
                                 p["K"] ** -0.5, p["BT"], gdn.cu_of(inputs))}


def _baseline(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> torch.Tensor:
    """Batched matmuls + tril in torch eager."""
    q, k, v, h, BT = inputs["q"], inputs["k"], inputs["v_new"], inputs["h"], p["BT"]
    chunked = lambda x: gdn.chunked(x, BT)  # noqa: E731  [B, NT, H, BT, ...]
    qc, kc, vc = chunked(q), chunked(k), chunked(v)
    h = h[:, : qc.shape[1]]  # a varlen batch has more chunks than one padded sequence; the baseline is one
    A = qc @ kc.transpose(-1, -2)
    inter = qc @ h
    if inputs.get("g_cumsum") is not None:
        gc = chunked(inputs["g_cumsum"])
        A = A * torch.exp(gc[..., :, None] - gc[..., None, :]).to(A.dtype)
        inter = inter * torch.exp(gc)[..., None].to(inter.dtype)
    return (inter + torch.tril(A) @ vc) * p["K"] ** -0.5


CASE_DTYPES = ["bf16", "fp16", "fp32"]
_SMALL = {"H": [2], "K": [32], "V": [32]}
_QUICK = (product(B=[2], T=[100], **_SMALL, BT=[16, 64], use_g=[False, True], dtype=["fp16", "fp32"])
          + product(B=[1], T=[50], **_SMALL, BT=[32], use_g=[True], dtype=["bf16"])
          + gdn.varlen_cases({"H": 2, "K": 32, "V": 32, "BT": 32, "use_g": True, "dtype": "fp32"}, [(0, 64, 36)]))
_FULL = (product(B=[1, 2], T=[1, 63, 300, 1000], H=[2], K=[64, 128], V=[64, 128], BT=[16, 32, 64],
                 use_g=[False, True], dtype=CASE_DTYPES)
         + gdn.varlen_product([(0, 64, 36), (37, 0, 200, 27, 0)], H=[4], K=[128], V=[64], BT=[16, 32, 64],
                              use_g=[False, True], dtype=CASE_DTYPES))


def _bytes(p: Mapping[str, Any]) -> float:
    B, T, cu = gdn.shape_of(p)
    s = gdn.itemsize(p["dtype"])
    return (B * T * p["H"] * ((2 * p["K"] + 2 * p["V"]) * s + 4 * p["use_g"])
            + gdn.num_chunks(B, T, p["BT"], cu) * p["H"] * p["K"] * p["V"] * s)


SPECS = [
    KernelSpec(
        name="gdn_chunk_fwd_o",
        family="gdn",
        kernel=chunk_fwd_o_kernel,
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
        flops=lambda p: 2 * gdn.shape_of(p)[0] * gdn.shape_of(p)[1] * p["H"] * (
            p["K"] * p["V"] + p["BT"] * p["K"] + p["BT"] * p["V"]),
        out_dims={"o": ("b", "t", "head", "v")},
        perf_cases=gdn.perf_cases(use_g=True),
        peer=fla_peer.CHUNK_O,
        perf_target=gdn.PEER_TARGET,
        baseline=_baseline,
    ),
]
