"""kkt_solve: Ai = (I + A)⁻¹ with A = β ⊙ (K Kᵀ) ⊙ exp(g_i − g_j) strictly lower, in one kernel, BT = 64.

chunk_scaled_dot_kkt followed by solve_tril, without the round trip of the fp32 A through
memory (a 64-wide fp32 row written, then read back, per token and head) and without one launch.
One program per (chunk, batch · head) builds the ten 16×16 blocks of A on or below the diagonal
from 16-row slices of k (tensor-core dots over BK columns at a time), applies β and the decay in
fp32, inverts the four diagonal blocks by forward substitution (one rolled loop that steps all
four) and merges the rest as solve_tril does (tf32 dots on CUDA, as fla's); Ai is stored in k's
dtype, zeros above the diagonal included. fla-core 0.6.0 makes the same split
(`chunk_gated_delta_rule_fwd_intra`: kkt and solve fused at BT = 64, recompute_w_u apart).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels import gdn
from kernels.basics import device_info
from kernels.gdn import fla_peer
from kernels.gdn.common import chunk_bounds
from kernels.gdn.kkt import kkt_inputs, scaled_kkt_eager
from kernels.gdn.solve_tril import _invert_diag16, _store_block, merge_lower64
from parity import KernelSpec, current_target, known, nan_empty
from parity.cases import by_level, product
from reference import gdn as ref

BT_FUSED = 64  # the chunk size this kernel handles; others go through kkt and solve_tril


@triton.jit
def _rows16(x, T, i_t, r: tl.constexpr, H: tl.constexpr, BT: tl.constexpr):  # noqa: ANN202 (a tensor)
    """Rows r·16 .. r·16+15 of chunk i_t of a per-token [T] vector (stride H) as fp32; 0 past T."""
    p_x = tl.make_block_ptr(x, (T,), (H,), (i_t * BT + r * 16,), (16,), (0,))
    return tl.load(p_x, boundary_check=(0,)).to(tl.float32)


@triton.jit
def _k16(k, T, i_t, r: tl.constexpr, i_k, H: tl.constexpr, K: tl.constexpr,  # noqa: ANN202 (a tensor)
         BT: tl.constexpr, BK: tl.constexpr):
    """k rows r·16 .. r·16+15 of chunk i_t, columns i_k·BK onwards: [16, BK]; 0 past T or K."""
    p_k = tl.make_block_ptr(k, (T, K), (H * K, 1), (i_t * BT + r * 16, i_k * BK), (16, BK), (1, 0))
    return tl.load(p_k, boundary_check=(0, 1))


@triton.jit
def _scale_block(b_A, b_beta_r, b_g_r, b_g_c, m_r, DIAG: tl.constexpr, USE_G: tl.constexpr):  # noqa: ANN202
    """β_i · A[i, j] · exp(g_i − g_j) on one block, 0 on rows past T (and on/above a diagonal block's diagonal).

    The exponent is masked as well as the product: past T the decay can overflow, and 0·inf is NaN,
    which the merges' dots would carry into real rows."""
    o_i = tl.arange(0, 16)
    m_A = m_r[:, None] & (o_i[None, :] >= 0)
    if DIAG:
        m_A = m_A & (o_i[:, None] > o_i[None, :])
    b_A = b_A * b_beta_r[:, None]
    if USE_G:
        b_A = b_A * tl.exp(tl.where(m_A, b_g_r[:, None] - b_g_c[None, :], 0.0))
    return tl.where(m_A, b_A, 0.0)


@triton.jit
def _invert4_diag16(b_A1, b_A2, b_A3, b_A4):  # noqa: ANN202 (four tensors)
    """(I + L)⁻¹ of four 16×16 blocks by forward substitution in one rolled loop (L: each strict lower part).

    solve_tril's _invert_diag16 unrolls its 15 steps; four of those per chunk made this kernel's
    compile ~5 s. One loop of 15 steps that advances all four blocks keeps four independent chains
    per step for the scheduler, with a quarter of the code."""
    o_i = tl.arange(0, 16)
    m_l = o_i[:, None] > o_i[None, :]
    # Lᵀ: row i of L comes out of a reduction along axis 1 in the layout the next product needs
    b_Lt1 = tl.trans(tl.where(m_l, b_A1, 0.0))
    b_Lt2 = tl.trans(tl.where(m_l, b_A2, 0.0))
    b_Lt3 = tl.trans(tl.where(m_l, b_A3, 0.0))
    b_Lt4 = tl.trans(tl.where(m_l, b_A4, 0.0))
    b_I = (o_i[:, None] == o_i[None, :]).to(tl.float32)
    b_Ai1, b_Ai2, b_Ai3, b_Ai4 = b_I, b_I, b_I, b_I  # rows >= i still hold the identity
    for i in range(1, 16):
        m_c = o_i[None, :] == i
        m_r = o_i[:, None] == i
        b_r1 = tl.sum(tl.sum(tl.where(m_c, b_Lt1, 0.0), 1)[:, None] * b_Ai1, 0)
        b_r2 = tl.sum(tl.sum(tl.where(m_c, b_Lt2, 0.0), 1)[:, None] * b_Ai2, 0)
        b_r3 = tl.sum(tl.sum(tl.where(m_c, b_Lt3, 0.0), 1)[:, None] * b_Ai3, 0)
        b_r4 = tl.sum(tl.sum(tl.where(m_c, b_Lt4, 0.0), 1)[:, None] * b_Ai4, 0)
        b_Ai1 = tl.where(m_r, b_Ai1 - b_r1[None, :], b_Ai1)
        b_Ai2 = tl.where(m_r, b_Ai2 - b_r2[None, :], b_Ai2)
        b_Ai3 = tl.where(m_r, b_Ai3 - b_r3[None, :], b_Ai3)
        b_Ai4 = tl.where(m_r, b_Ai4 - b_r4[None, :], b_Ai4)
    return b_Ai1, b_Ai2, b_Ai3, b_Ai4


@triton.jit
def _invert_diag16_dots(b_A, DOT_PRECISION: tl.constexpr):  # noqa: ANN202 (a tensor)
    """(I + L)⁻¹ = (I − L)(I + L²)(I + L⁴)(I + L⁸), exact as L¹⁶ = 0: six 16×16 dots instead of 15 serial steps."""
    o_i = tl.arange(0, 16)
    b_L = tl.where(o_i[:, None] > o_i[None, :], b_A, 0.0)
    b_P = (o_i[:, None] == o_i[None, :]).to(tl.float32) - b_L
    b_L = tl.dot(b_L, b_L, input_precision=DOT_PRECISION)
    b_P = tl.dot(b_P, b_L, b_P, input_precision=DOT_PRECISION)
    b_L = tl.dot(b_L, b_L, input_precision=DOT_PRECISION)
    b_P = tl.dot(b_P, b_L, b_P, input_precision=DOT_PRECISION)
    b_L = tl.dot(b_L, b_L, input_precision=DOT_PRECISION)
    return tl.dot(b_P, b_L, b_P, input_precision=DOT_PRECISION)


@triton.jit
def _invert4_diag16_batched(b_A1, b_A2, b_A3, b_A4):  # noqa: ANN202 (four tensors)
    """_invert4_diag16 on one [4, 16, 16] stack: each step is one op over the four blocks instead of
    four over a 16×16 tile that the mma layout replicates across warps (one stack in, one out)."""
    o_i = tl.arange(0, 16)
    m_l = o_i[:, None] > o_i[None, :]
    # [16, 16, 2, 2] -> [4, 16, 16] with block b at index b; the strict lower part, transposed per block
    b_L = tl.join(tl.join(tl.where(m_l, b_A1, 0.0), tl.where(m_l, b_A2, 0.0)),
                  tl.join(tl.where(m_l, b_A3, 0.0), tl.where(m_l, b_A4, 0.0)))
    b_Lt = tl.permute(tl.reshape(tl.permute(b_L, (3, 2, 0, 1)), (4, 16, 16)), (0, 2, 1))  # [b, j, i]
    b_Ai = tl.broadcast_to(((o_i[:, None] == o_i[None, :]).to(tl.float32))[None, :, :], (4, 16, 16))
    for i in range(1, 16):
        b_l = tl.sum(tl.where(o_i[None, None, :] == i, b_Lt, 0.0), 2)  # [4, 16]: L[i, j] over j
        b_r = tl.sum(b_l[:, :, None] * b_Ai, 1)  # [4, 16]: Σ_j L[i, j]·Ai[j, :]
        b_Ai = tl.where(o_i[None, :, None] == i, b_Ai - b_r[:, None, :], b_Ai)
    b_Ai = tl.reshape(tl.permute(b_Ai, (1, 2, 0)), (16, 16, 2, 2))  # [r, c, b // 2, b % 2]
    b_Ai12, b_Ai34 = tl.split(tl.permute(b_Ai, (0, 1, 3, 2)))  # the b // 2 halves: blocks (1, 2) and (3, 4)
    b_Ai1, b_Ai2 = tl.split(b_Ai12)
    b_Ai3, b_Ai4 = tl.split(b_Ai34)
    return b_Ai1, b_Ai2, b_Ai3, b_Ai4


# INV, how the four diagonal blocks are inverted (bench/kkt_solve_candidates.py times each):
INV_ROLLED = 0  # _invert4_diag16: one rolled loop over all four (the default: compiles in a fraction)
INV_UNROLLED = 1  # solve_tril's _invert_diag16 four times, 15 unrolled steps each (the kernel before issue 30)
INV_DOTS = 2  # _invert_diag16_dots: the product form on tensor-core-sized dots
INV_BATCHED = 3  # _invert4_diag16_batched: the rolled loop on one [4, 16, 16] stack

# One config: each is a compile per variant. A 16×16 tile in the mma layout is replicated across warps
# (8 fp32 a thread per tile whatever num_warps), so more warps repeat the same work and only fewer warps
# add parallel chunks. ptxas for sm_90 (Triton 3.8, bf16, tf32 merges): 1 warp 184 registers, 2 warps 182,
# 4 warps 213, no spills (ieee merges: 242-255, spilling at 2 warps; fla-core 0.6.0's kernel: 255 and 98
# spilled at 1 warp). On one H200 (Triton 3.6.0, T=65536, H=32, K=128, bf16, bench/kkt_solve_candidates.py):
# 1 warp 0.49 ms, 2 warps 0.90 ms, 4 warps 2.19 ms; fla-core 0.6.0's fused kernel 0.76 ms.
_CONFIGS = [triton.Config({"BK": 64}, num_warps=1, num_stages=2)]


# Ascend gets one config: warps do not map onto its cores, and bishengir took 30 to 140 s a config of
# the unrolled kernel on a loaded 2-core host (ascend-compile, triton-ascend 3.2.0; ~3 s rolled)
@triton.heuristics({
    "USE_G": lambda args: args["g"] is not None,
    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None,
})
@triton.autotune(
    configs=device_info.configs_for_target(cuda=_CONFIGS, ascend=_CONFIGS[:1], interpret=_CONFIGS[:1]),
    key=["H", "K", "IS_VARLEN"],
)
@triton.jit(do_not_specialize=["T"])
def chunk_kkt_solve_kernel(k, beta, g, Ai, cu_seqlens, chunk_indices, T, H: tl.constexpr, K: tl.constexpr,
                           BT: tl.constexpr, BK: tl.constexpr, DOT_PRECISION: tl.constexpr, USE_G: tl.constexpr,
                           IS_VARLEN: tl.constexpr, INV: tl.constexpr = 0):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = chunk_bounds(i_b, i_t, T, cu_seqlens, chunk_indices, IS_VARLEN)
    k += (bos * H + i_h) * K
    Ai += (bos * H + i_h) * BT

    # the ten blocks on or below the diagonal; block (r, c) = k_r · k_cᵀ
    b_A11 = tl.zeros([16, 16], dtype=tl.float32)
    b_A21 = tl.zeros([16, 16], dtype=tl.float32)
    b_A22 = tl.zeros([16, 16], dtype=tl.float32)
    b_A31 = tl.zeros([16, 16], dtype=tl.float32)
    b_A32 = tl.zeros([16, 16], dtype=tl.float32)
    b_A33 = tl.zeros([16, 16], dtype=tl.float32)
    b_A41 = tl.zeros([16, 16], dtype=tl.float32)
    b_A42 = tl.zeros([16, 16], dtype=tl.float32)
    b_A43 = tl.zeros([16, 16], dtype=tl.float32)
    b_A44 = tl.zeros([16, 16], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        b_k1 = _k16(k, T, i_t, 0, i_k, H, K, BT, BK)
        b_k2 = _k16(k, T, i_t, 1, i_k, H, K, BT, BK)
        b_k3 = _k16(k, T, i_t, 2, i_k, H, K, BT, BK)
        b_k4 = _k16(k, T, i_t, 3, i_k, H, K, BT, BK)
        b_A11 = tl.dot(b_k1, tl.trans(b_k1), b_A11)
        b_A21 = tl.dot(b_k2, tl.trans(b_k1), b_A21)
        b_A22 = tl.dot(b_k2, tl.trans(b_k2), b_A22)
        b_A31 = tl.dot(b_k3, tl.trans(b_k1), b_A31)
        b_A32 = tl.dot(b_k3, tl.trans(b_k2), b_A32)
        b_A33 = tl.dot(b_k3, tl.trans(b_k3), b_A33)
        b_A41 = tl.dot(b_k4, tl.trans(b_k1), b_A41)
        b_A42 = tl.dot(b_k4, tl.trans(b_k2), b_A42)
        b_A43 = tl.dot(b_k4, tl.trans(b_k3), b_A43)
        b_A44 = tl.dot(b_k4, tl.trans(b_k4), b_A44)

    o_i = tl.arange(0, 16)
    m_1 = i_t * BT + o_i < T
    m_2 = i_t * BT + 16 + o_i < T
    m_3 = i_t * BT + 32 + o_i < T
    m_4 = i_t * BT + 48 + o_i < T
    beta += bos * H + i_h
    b_b1 = _rows16(beta, T, i_t, 0, H, BT)
    b_b2 = _rows16(beta, T, i_t, 1, H, BT)
    b_b3 = _rows16(beta, T, i_t, 2, H, BT)
    b_b4 = _rows16(beta, T, i_t, 3, H, BT)
    b_g1 = b_b1
    b_g2 = b_b2
    b_g3 = b_b3
    b_g4 = b_b4
    if USE_G:
        g += bos * H + i_h
        b_g1 = _rows16(g, T, i_t, 0, H, BT)
        b_g2 = _rows16(g, T, i_t, 1, H, BT)
        b_g3 = _rows16(g, T, i_t, 2, H, BT)
        b_g4 = _rows16(g, T, i_t, 3, H, BT)
    b_A11 = _scale_block(b_A11, b_b1, b_g1, b_g1, m_1, True, USE_G)
    b_A22 = _scale_block(b_A22, b_b2, b_g2, b_g2, m_2, True, USE_G)
    b_A33 = _scale_block(b_A33, b_b3, b_g3, b_g3, m_3, True, USE_G)
    b_A44 = _scale_block(b_A44, b_b4, b_g4, b_g4, m_4, True, USE_G)
    b_A21 = _scale_block(b_A21, b_b2, b_g2, b_g1, m_2, False, USE_G)
    b_A31 = _scale_block(b_A31, b_b3, b_g3, b_g1, m_3, False, USE_G)
    b_A32 = _scale_block(b_A32, b_b3, b_g3, b_g2, m_3, False, USE_G)
    b_A41 = _scale_block(b_A41, b_b4, b_g4, b_g1, m_4, False, USE_G)
    b_A42 = _scale_block(b_A42, b_b4, b_g4, b_g2, m_4, False, USE_G)
    b_A43 = _scale_block(b_A43, b_b4, b_g4, b_g3, m_4, False, USE_G)

    # the four diagonal inversions are independent, which gives the scheduler parallel work
    if INV == 1:  # INV_UNROLLED
        b_Ai11 = _invert_diag16(b_A11)
        b_Ai22 = _invert_diag16(b_A22)
        b_Ai33 = _invert_diag16(b_A33)
        b_Ai44 = _invert_diag16(b_A44)
    elif INV == 2:  # INV_DOTS
        b_Ai11 = _invert_diag16_dots(b_A11, DOT_PRECISION)
        b_Ai22 = _invert_diag16_dots(b_A22, DOT_PRECISION)
        b_Ai33 = _invert_diag16_dots(b_A33, DOT_PRECISION)
        b_Ai44 = _invert_diag16_dots(b_A44, DOT_PRECISION)
    elif INV == 3:  # INV_BATCHED
        b_Ai11, b_Ai22, b_Ai33, b_Ai44 = _invert4_diag16_batched(b_A11, b_A22, b_A33, b_A44)
    else:
        b_Ai11, b_Ai22, b_Ai33, b_Ai44 = _invert4_diag16(b_A11, b_A22, b_A33, b_A44)
    b_Ai21 = -tl.dot(b_Ai22, tl.dot(b_A21, b_Ai11, input_precision=DOT_PRECISION), input_precision=DOT_PRECISION)
    b_Ai31, b_Ai32, b_Ai41, b_Ai42, b_Ai43 = merge_lower64(
        b_Ai11, b_Ai21, b_Ai22, b_Ai33, b_Ai44, b_A31, b_A32, b_A41, b_A42, b_A43, DOT_PRECISION)
    _store_block(Ai, b_Ai11, T, i_t, 0, 0, H, BT)
    _store_block(Ai, b_Ai21, T, i_t, 1, 0, H, BT)
    _store_block(Ai, b_Ai22, T, i_t, 1, 1, H, BT)
    _store_block(Ai, b_Ai31, T, i_t, 2, 0, H, BT)
    _store_block(Ai, b_Ai32, T, i_t, 2, 1, H, BT)
    _store_block(Ai, b_Ai33, T, i_t, 2, 2, H, BT)
    _store_block(Ai, b_Ai41, T, i_t, 3, 0, H, BT)
    _store_block(Ai, b_Ai42, T, i_t, 3, 1, H, BT)
    _store_block(Ai, b_Ai43, T, i_t, 3, 2, H, BT)
    _store_block(Ai, b_Ai44, T, i_t, 3, 3, H, BT)
    b_zero = tl.zeros([16, 16], dtype=tl.float32)
    for c in tl.static_range(1, 4):
        for r in tl.static_range(0, c):
            _store_block(Ai, b_zero, T, i_t, r, c, H, BT)


def default_dot_precision(k: torch.Tensor) -> str:
    """tf32 for the merges on CUDA: ~2^-11 relative error per product, under the bf16/fp16 rounding of
    Ai and well inside the 0.005 err_ratio budget even in fp32, and tensor-core dots where ieee runs
    FMA loops. ieee on the interpreter and on Ascend, which have no tf32 mode to gain from."""
    on_cuda = k.device.type == "cuda" or (k.device.type == "cpu" and current_target() == "cuda")
    return "tf32" if on_cuda and not device_info.interpreting() else "ieee"


def chunk_kkt_solve(k: torch.Tensor, beta: torch.Tensor, g_cumsum: torch.Tensor | None = None,
                    cu_seqlens: torch.Tensor | None = None, chunk_indices: torch.Tensor | None = None,
                    output_dtype: torch.dtype | None = None, dot_precision: str | None = None) -> torch.Tensor:
    """Ai [B, T, H, 64] in output_dtype (default k's) from k [B, T, H, K], β [B, T, H] and the chunk-local
    cumsum of g [B, T, H]. dot_precision of the merges: default tf32 on CUDA (as fla-core 0.6.0's fused
    kernel), ieee elsewhere."""
    B, T, H, K = k.shape
    if dot_precision is None:
        dot_precision = default_dot_precision(k)
    if cu_seqlens is not None and chunk_indices is None:
        chunk_indices = gdn.prepare_chunk_indices(cu_seqlens, BT_FUSED)
    NT = triton.cdiv(T, BT_FUSED) if cu_seqlens is None else len(chunk_indices)
    Ai = nan_empty((B, T, H, BT_FUSED), output_dtype or k.dtype, k.device)
    chunk_kkt_solve_kernel[(NT, B * H)](k=k, beta=beta, g=g_cumsum, Ai=Ai, cu_seqlens=cu_seqlens,
                                        chunk_indices=chunk_indices, T=T, H=H, K=K, BT=BT_FUSED,
                                        DOT_PRECISION=dot_precision)
    return Ai


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"Ai": chunk_kkt_solve(inputs["k"], inputs["beta"], inputs.get("g_cumsum"), gdn.cu_of(inputs))}


def _reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    cu = gdn.cu_of(inputs)
    A = ref.chunk_scaled_dot_kkt(inputs["k"], inputs["beta"], inputs.get("g_cumsum"), p["BT"], cu)
    return {"Ai": ref.solve_tril(A, p["BT"], cu)}


def _baseline(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> torch.Tensor:
    """bmm, decay and tril, then torch.linalg.solve_triangular, in torch eager."""
    A = scaled_kkt_eager(inputs, p["BT"])
    eye = torch.eye(p["BT"], device=A.device, dtype=A.dtype)
    return torch.linalg.solve_triangular(eye + torch.tril(A, -1), eye.expand(A.shape), upper=False,
                                         unitriangular=True)


CASE_DTYPES = ["bf16", "fp16", "fp32"]
_SMALL = {"H": [2], "K": [32], "V": [32], "BT": [BT_FUSED]}
_QUICK = (product(B=[2], T=[100], **_SMALL, use_g=[False, True], dtype=["fp16", "fp32"])
          + product(B=[1], T=[50], **_SMALL, use_g=[True], dtype=["bf16"])
          + gdn.varlen_cases({"H": 2, "K": 32, "V": 32, "BT": BT_FUSED, "use_g": True, "dtype": "fp32"},
                             [(0, 64, 36)]))
_FULL = (product(B=[1, 2], T=[1, 15, 63, 300, 1000], H=[2, 4], K=[64, 128], V=[64], BT=[BT_FUSED],
                 use_g=[False, True], dtype=CASE_DTYPES)
         + gdn.varlen_product([(0, 64, 36), (37, 0, 200, 27, 0), (513, 1000)], H=[4], K=[128], V=[64],
                              BT=[BT_FUSED], use_g=[False, True], dtype=CASE_DTYPES))

SPECS = [
    KernelSpec(
        name="gdn_kkt_solve",
        family="gdn",
        kernel=chunk_kkt_solve_kernel,
        launch=_launch,
        reference=_reference,
        cases=by_level(_QUICK, _FULL),
        make_inputs=kkt_inputs,
        tolerance=gdn.per_kernel_tolerance(CASE_DTYPES),
        compile_signature=gdn.compile_signature({"H": 2, "K": 128, "V": 64, "BT": BT_FUSED}, {"use_g": (False, True)}),
        dynamic_args=("T",),
        variants={"USE_G": (False, True), "IS_VARLEN": (False, True)},
        known_divergences=(known.INTERPRETER_BF16,),
        bytes=lambda p: gdn.shape_of(p)[0] * gdn.shape_of(p)[1] * p["H"] * (
            (p["K"] + p["BT"]) * gdn.itemsize(p["dtype"]) + gdn.itemsize(p["dtype"]) + 4 * p["use_g"]),
        flops=lambda p: 2 * gdn.shape_of(p)[0] * gdn.shape_of(p)[1] * p["H"] * p["BT"] * (p["K"] + p["BT"]),
        out_dims={"Ai": ("b", "t", "head", "col")},
        valid=lambda name, p, shape: gdn.real_columns(p, shape),
        perf_cases=gdn.perf_cases(use_g=True),
        peer=fla_peer.KKT_SOLVE,
        perf_target=gdn.PEER_TARGET,
        baseline=_baseline,
    ),
]
