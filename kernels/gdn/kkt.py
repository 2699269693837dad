"""chunk_scaled_dot_kkt: A = β ⊙ (K Kᵀ) ⊙ exp(g_i − g_j), strictly lower inside each chunk.

A is fp32 [B, T, H, BT]. One program per (chunk, batch · head); K·Kᵀ runs on tensor
cores with the input dtype as operands and an fp32 accumulator, and β and the decay
are applied afterwards in fp32 (cheaper and more exact than scaling k first).
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
from parity import KernelSpec, PerfTarget, known, nan_empty
from parity.cases import by_level, product
from reference import gdn as ref


@triton.heuristics({
    "USE_G": lambda args: args["g"] is not None,
    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None,
})
@triton.autotune(
    configs=gdn.autotune_configs([triton.Config({"BK": BK}, num_warps=num_warps, num_stages=num_stages)
                                  for BK, num_warps, num_stages in ((64, 2, 3), (64, 4, 3), (64, 2, 2))]),
    key=["H", "K", "BT", "IS_VARLEN"],
)
@triton.jit(do_not_specialize=["T"])
def chunk_scaled_dot_kkt_kernel(k, beta, g, A, cu_seqlens, chunk_indices, T, H: tl.constexpr, K: tl.constexpr,
                                BT: tl.constexpr, BK: tl.constexpr, USE_G: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = chunk_bounds(i_b, i_t, T, cu_seqlens, chunk_indices, IS_VARLEN)
    o_i = tl.arange(0, BT)

    p_beta = tl.make_block_ptr(beta + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
    b_beta = tl.load(p_beta, boundary_check=(0,)).to(tl.float32)  # [BT]
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_k = tl.make_block_ptr(k + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        b_k = tl.load(p_k, boundary_check=(0, 1))  # [BT, BK]; rows past T read as 0
        b_A += tl.dot(b_k, tl.trans(b_k))
    b_A *= b_beta[:, None]
    m_A = o_i[:, None] > o_i[None, :]  # strictly lower
    if USE_G:
        p_g = tl.make_block_ptr(g + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
        b_g = tl.load(p_g, boundary_check=(0,)).to(tl.float32)  # [BT]
        # the exponent is masked too: above the diagonal g_i - g_j > 0 and exp may overflow
        b_A *= tl.exp(tl.where(m_A, b_g[:, None] - b_g[None, :], 0.0))
    b_A = tl.where(m_A, b_A, 0.0)
    p_A = tl.make_block_ptr(A + (bos * H + i_h) * BT, (T, BT), (H * BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    tl.store(p_A, b_A.to(p_A.dtype.element_ty), boundary_check=(0, 1))


def chunk_scaled_dot_kkt(k: torch.Tensor, beta: torch.Tensor, g_cumsum: torch.Tensor | None = None,
                         chunk_size: int = 64, cu_seqlens: torch.Tensor | None = None,
                         chunk_indices: torch.Tensor | None = None) -> torch.Tensor:
    """A [B, T, H, BT] fp32 from k [B, T, H, K], β [B, T, H] and the chunk-local cumsum of g [B, T, H]."""
    B, T, H, K = k.shape
    if cu_seqlens is not None and chunk_indices is None:
        chunk_indices = gdn.prepare_chunk_indices(cu_seqlens, chunk_size)
    NT = triton.cdiv(T, chunk_size) if cu_seqlens is None else len(chunk_indices)
    A = nan_empty((B, T, H, chunk_size), torch.float32, k.device)
    chunk_scaled_dot_kkt_kernel[(NT, B * H)](k=k, beta=beta, g=g_cumsum, A=A, cu_seqlens=cu_seqlens,
                                             chunk_indices=chunk_indices, T=T, H=H, K=K, BT=chunk_size)
    return A


def kkt_inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    """k, β, the chunk-local cumsum of g (use_g) and cu_seqlens (varlen): also gdn_kkt_solve's inputs."""
    raw = gdn.raw_inputs(p, gen)
    out = {"k": raw["k"], "beta": raw["beta"]}
    if p["use_g"]:
        out["g_cumsum"] = gdn.fp64_cumsum(raw, p).float()
    if "cu_seqlens" in raw:
        out["cu_seqlens"] = raw["cu_seqlens"]
    return out


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"A": chunk_scaled_dot_kkt(inputs["k"], inputs["beta"], inputs.get("g_cumsum"), p["BT"],
                                      gdn.cu_of(inputs))}


def _reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"A": ref.chunk_scaled_dot_kkt(inputs["k"], inputs["beta"], inputs.get("g_cumsum"), p["BT"],
                                          gdn.cu_of(inputs))}


def scaled_kkt_eager(inputs: Mapping[str, Any], BT: int) -> torch.Tensor:
    """β·k·kᵀ per chunk with the decay, in torch eager, before the strict lower part is taken (fp32)."""
    kc = gdn.chunked(inputs["k"], BT)  # [B, NT, H, BT, K]
    A = (kc @ kc.transpose(-1, -2)).float() * gdn.chunked(inputs["beta"], BT)[..., None]
    if inputs.get("g_cumsum") is not None:
        gc = gdn.chunked(inputs["g_cumsum"], BT)
        A = A * torch.exp(gc[..., :, None] - gc[..., None, :])
    return A


def _baseline(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> torch.Tensor:
    """bmm + tril in torch eager."""
    return torch.tril(scaled_kkt_eager(inputs, p["BT"]), diagonal=-1)


CASE_DTYPES = ["bf16", "fp16", "fp32"]
_QUICK = (product(B=[2], T=[100], H=[2], K=[32], V=[32], BT=[16, 64], use_g=[False, True], dtype=["fp16", "fp32"])
          + product(B=[1], T=[50], H=[2], K=[32], V=[32], BT=[32], use_g=[True], dtype=["bf16"])
          + gdn.varlen_cases({"H": 2, "K": 32, "V": 32, "BT": 32, "use_g": True, "dtype": "fp32"}, [(0, 64, 36)]))
_FULL = (product(B=[1, 2], T=[1, 63, 300, 1000], H=[2, 4], K=[64, 128], V=[64], BT=[16, 32, 64, 128],
                 use_g=[False, True], dtype=CASE_DTYPES)
         + gdn.varlen_product([(0, 64, 36), (37, 0, 200, 27, 0)], H=[4], K=[128], V=[64], BT=[16, 32, 64, 128],
                              use_g=[False, True], dtype=CASE_DTYPES))

SPECS = [
    KernelSpec(
        name="gdn_chunk_scaled_dot_kkt",
        family="gdn",
        kernel=chunk_scaled_dot_kkt_kernel,
        launch=_launch,
        reference=_reference,
        cases=by_level(_QUICK, _FULL),
        make_inputs=kkt_inputs,
        tolerance=gdn.per_kernel_tolerance(CASE_DTYPES),
        compile_signature=gdn.compile_signature({"H": 2, "K": 128, "V": 64, "BT": 64}, {"use_g": (False, True)}),
        dynamic_args=("T",),
        variants={"USE_G": (False, True), "IS_VARLEN": (False, True)},
        known_divergences=(known.INTERPRETER_BF16,),
        bytes=lambda p: gdn.shape_of(p)[0] * gdn.shape_of(p)[1] * p["H"] * (
            p["K"] * gdn.itemsize(p["dtype"]) + 4 * p["BT"] + gdn.itemsize(p["dtype"]) + 4 * p["use_g"]),
        flops=lambda p: 2 * gdn.shape_of(p)[0] * gdn.shape_of(p)[1] * p["H"] * p["BT"] * p["K"],
        out_dims={"A": ("b", "t", "head", "col")},
        valid=lambda name, p, shape: gdn.real_columns(p, shape),
        perf_cases=gdn.perf_cases(use_g=True),
        peer=fla_peer.KKT,
        perf_target=PerfTarget(max_time_vs_peer=1.0, why="issue 19: kkt <= 1.0x fla (0.330 vs 0.327 ms on the H200)"),
        baseline=_baseline,
    ),
]
