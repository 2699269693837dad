"""flash_attention_tma: flash attention forward whose tiles move through device-side tensor descriptors.

The same math as flash_attention_fwd ([B, T, H, D], online softmax in the log2 domain), with
the memory path Hopper kernels use: each program builds [T, D] descriptors over its (batch,
head) with tl.make_tensor_descriptor, so rows past T read as zero and stores past T are
dropped without masks. The key loop runs in two parts, so only the blocks that need a mask pay
for it: under a causal mask, the blocks left of the diagonal go unmasked and the diagonal ones
are masked; without one, every block but the ragged last goes unmasked. Query blocks start
from the last, the longest under a causal mask.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.attention.flash import LOG2E
from kernels.attention.flash import SPECS as _FLASH
from kernels.basics import device_info
from parity import nan_empty
from parity.cases import by_level, product


def _config(bm: int, bn: int, stages: int, warps: int, ws: bool = False, exp_poly: int = 0) -> triton.Config:
    """A config; EXP_POLY (CUDA only) enters its kwargs only when set, so the Ascend and interpreter lists
    never name it (the kernel's default applies there)."""
    kwargs: dict[str, Any] = {"BM": bm, "BN": bn, "WS": ws}
    if exp_poly:
        kwargs["EXP_POLY"] = exp_poly
    return triton.Config(kwargs, num_stages=stages, num_warps=warps)


# Hopper at D=128: BM=128 with BN 64 or 128 and 8 warps, 2-3 stages, are the published fast tiles; the
# warp-specialized ones (ws=True: TMA producer and MMA/softmax consumer warps, upstream Triton >= 3.5 on
# Hopper with device-side descriptors; 4 warps a group) are candidates timed by bench/kernels_old_vs_new.py,
# outside the autotune list until a device run shows them correct and faster (a miscompile there would cost
# the whole cuda session its accuracy pass).
WS_CONFIGS = [_config(128, 128, 2, 4, ws=True), _config(128, 64, 3, 4, ws=True)]
# EXP_POLY: part of the exponentials on the FMA pipe (exp2_mixed). On the H200 (bench/CANDIDATES.md, round 4) a
# quarter of them at 128x128, 3 stages, 8 warps was 1 % (non-causal) and 1.5 % (causal) faster than the same tile
# without; a half, or BN 64, was slower. The autotuner times it beside the plain tile.
CANDIDATE_CONFIGS = {
    "poly2": _config(128, 128, 3, 8, exp_poly=2),
    "poly1": _config(128, 128, 3, 8, exp_poly=1),
    "poly2-bn64": _config(128, 64, 3, 8, exp_poly=2),
}
CONFIGS = device_info.configs_for_target(
    cuda=[_config(128, 64, 3, 8), CANDIDATE_CONFIGS["poly2"], _config(128, 64, 4, 8), _config(128, 128, 3, 8),
          _config(64, 64, 3, 4), _config(64, 32, 2, 4)],
    ascend=[_config(64, 64, 1, 4), _config(128, 64, 1, 4)],
    interpret=[_config(32, 16, 1, 4)],
)
SHARED_BYTES = 227 * 1024  # sm_90's opt-in shared memory per block


def fits_shared_memory(configs: list, named_args: Mapping[str, Any], **kwargs: Any) -> list:
    """Configs whose Q tile and staged K, V tiles fit Hopper's shared memory at this dtype and D."""
    size, D = named_args["q"].element_size(), {**named_args, **kwargs}["D"]
    kept = [c for c in configs
            if (c.kwargs["BM"] + 2 * c.num_stages * c.kwargs["BN"]) * D * size <= SHARED_BYTES]
    return kept or configs[-1:]


# 2**f on [-0.5, 0.5], degree 3, fitted here for the least maximum relative error (Lawson's iteration in
# numpy over 20001 points): 7.5e-5 relative, far inside bf16's half-ulp of 2**-9 (P is cast to bf16 before
# P·V). Degree 2 reaches only 1.7e-3.
EXP2_C0 = tl.constexpr(0.9999281093641539)  # constexpr globals: a @triton.jit body may read only those
EXP2_C1 = tl.constexpr(0.6932609856052576)
EXP2_C2 = tl.constexpr(0.2426105422817228)
EXP2_C3 = tl.constexpr(0.05517132143402796)
ROUNDER = tl.constexpr(12582912.0)  # 1.5 * 2**23: adding it rounds a float of magnitude < 2**22 to an integer


@triton.jit
def exp2_poly(x):
    """2**x for x <= 0 on the FMA and integer pipes instead of MUFU (FlashAttention-4's emulated exponential).

    x = j + f with j = round(x) (the add of ROUNDER leaves j in t's low mantissa bits) and f in [-0.5, 0.5];
    2**f comes from a cubic (three FMAs) and j goes straight into the exponent bits by an integer add of
    j << 23. x is clamped at -126 so the exponent never wraps (2**-126 in place of 0: nothing next to the
    row's maximum, whose term is 1)."""
    x = tl.maximum(x, -126.0)
    t = x + ROUNDER
    f = x - (t - ROUNDER)
    p = tl.fma(tl.fma(tl.fma(f, EXP2_C3, EXP2_C2), f, EXP2_C1), f, EXP2_C0)
    bits = p.to(tl.int32, bitcast=True) + (t.to(tl.int32, bitcast=True) << 23)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def exp2_poly_kernel(x, y, N: tl.constexpr):
    """y = exp2_poly(x), N elements a program: bench/flash_attention_candidates.py checks the device's result."""
    o = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(y + o, exp2_poly(tl.load(x + o)))


@triton.jit
def exp2_mixed(x, BM: tl.constexpr, BN: tl.constexpr, EXP_POLY: tl.constexpr):
    """2**x of a [BM, BN] score tile, part of it by exp2_poly: none (EXP_POLY 0), every other column (1), or
    every fourth (2). Columns pair up as [BM, BN // 2, 2] because in Hopper's MMA accumulator layout a thread
    holds adjacent column pairs, so the split and join move no data; the quarter splits the even half again
    as columns c and c + BN // 2, which the same thread holds too."""
    if EXP_POLY == 0:
        p = tl.exp2(x)
    else:
        a, b = x.reshape(BM, BN // 2, 2).split()
        if EXP_POLY == 1:
            a = exp2_poly(a)
        else:
            a0, a1 = a.reshape(BM, 2, BN // 4).permute(0, 2, 1).split()
            a = tl.join(exp2_poly(a0), tl.exp2(a1)).permute(0, 2, 1).reshape(BM, BN // 2)
        p = tl.join(a, tl.exp2(b)).reshape(BM, BN)
    return p


@triton.jit
def fold_block(b_q, b_k, b_v, b_m, b_l, b_acc, o_m, start, T, qk_scale, BM: tl.constexpr, BN: tl.constexpr,
               MASK: tl.constexpr, IS_CAUSAL: tl.constexpr, EXP_POLY: tl.constexpr):
    """Fold keys [start, start + BN) (tiles b_k, b_v [BN, D]) into the running max, sum and output of a query block.

    The scale is folded into the exponent (s·scale − m, one FMA per score, as the max is taken on the
    unscaled scores), and the rescaled accumulator goes into the P·V dot as its addend, so the MMA
    accumulates in place instead of into a second [BM, D] fp32 tile. EXP_POLY (CUDA) moves part of the
    unmasked blocks' exponentials off MUFU (exp2_mixed); the masked ones, with -inf scores, keep tl.exp2."""
    b_s = tl.dot(b_q, b_k.T)  # [BM, BN]
    if MASK:
        o_n = start + tl.arange(0, BN)
        m_s = o_n[None, :] < T
        if IS_CAUSAL:
            m_s = m_s & (o_m[:, None] >= o_n[None, :])
        b_s = tl.where(m_s, b_s * qk_scale, float("-inf"))
        b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
        b_p = tl.exp2(b_s - b_m_new[:, None])
    else:
        b_m_new = tl.maximum(b_m, tl.max(b_s, 1) * qk_scale)
        if b_v.dtype == tl.float32:  # P stays fp32 in the P·V dot: keep MUFU's full-precision exp2
            b_p = tl.exp2(b_s * qk_scale - b_m_new[:, None])
        else:
            b_p = exp2_mixed(b_s * qk_scale - b_m_new[:, None], BM, BN, EXP_POLY)
    b_alpha = tl.exp2(b_m - b_m_new)
    b_acc = tl.dot(b_p.to(b_v.dtype), b_v, b_acc * b_alpha[:, None])
    b_l = b_l * b_alpha + tl.sum(b_p, 1)
    return b_m_new, b_l, b_acc


@triton.jit
def attend_keys(b_q, k, v, b_m, b_l, b_acc, o_m, lo, hi, T, qk_scale, H: tl.constexpr, D: tl.constexpr,
                BM: tl.constexpr, BN: tl.constexpr, MASK: tl.constexpr, IS_CAUSAL: tl.constexpr, WS: tl.constexpr,
                EXP_POLY: tl.constexpr):
    """Fold keys [lo, hi) into the running max b_m, sum b_l and output b_acc of one query block.

    Takes base pointers and builds its own descriptors: triton-ascend 3.2.0 cannot pass a tensor
    descriptor into a @triton.jit helper ("'tensor_descriptor_type' object has no attribute
    'is_ptr'"), so the loads stay here and fold_block gets tiles; and a second descriptor per operand
    costs one 128-byte write per program.
    WS (CUDA configs only) asks upstream Triton to warp-specialize the loop (TMA producer warps,
    MMA/softmax consumer warps; Hopper since Triton 3.5 with device-side descriptors); the branch
    is resolved at compile time, so triton-ascend 3.2, whose tl.range has no warp_specialize, never
    sees that loop."""
    d_k = tl.make_tensor_descriptor(k, shape=[T, D], strides=[H * D, 1], block_shape=[BN, D])
    d_v = tl.make_tensor_descriptor(v, shape=[T, D], strides=[H * D, 1], block_shape=[BN, D])
    if WS:
        for start in tl.range(lo, hi, BN, warp_specialize=True):
            b_m, b_l, b_acc = fold_block(b_q, d_k.load([start, 0]), d_v.load([start, 0]), b_m, b_l, b_acc, o_m,
                                         start, T, qk_scale, BM, BN, MASK, IS_CAUSAL, EXP_POLY)
    else:
        for start in range(lo, hi, BN):
            b_m, b_l, b_acc = fold_block(b_q, d_k.load([start, 0]), d_v.load([start, 0]), b_m, b_l, b_acc, o_m,
                                         start, T, qk_scale, BM, BN, MASK, IS_CAUSAL, EXP_POLY)
    return b_m, b_l, b_acc


@triton.jit
def attend_tail(b_q, k, v, b_m, b_l, b_acc, o_m, lo, hi, T, qk_scale, H: tl.constexpr, D: tl.constexpr,
                BM: tl.constexpr, BN: tl.constexpr, IS_CAUSAL: tl.constexpr, EXP_POLY: tl.constexpr):
    """attend_keys over the masked blocks [lo, hi), unrolled: at most BM // BN of them under a causal
    mask, one (the ragged last) without.

    The warp-specialized configs need this: upstream Triton 3.6 and 3.8 fail to compile a kernel
    whose warp-specialized loop is followed by a second loop (NVGPUWarpSpecialization pass:
    "PassManager::run failed"), and compile it when the second loop is unrolled into guarded blocks."""
    d_k = tl.make_tensor_descriptor(k, shape=[T, D], strides=[H * D, 1], block_shape=[BN, D])
    d_v = tl.make_tensor_descriptor(v, shape=[T, D], strides=[H * D, 1], block_shape=[BN, D])
    for j in tl.static_range(BM // BN if IS_CAUSAL else 1):
        start = lo + j * BN
        if start < hi:
            b_m, b_l, b_acc = fold_block(b_q, d_k.load([start, 0]), d_v.load([start, 0]), b_m, b_l, b_acc, o_m,
                                         start, T, qk_scale, BM, BN, True, IS_CAUSAL, EXP_POLY)
    return b_m, b_l, b_acc


@triton.autotune(configs=CONFIGS, key=["H", "D", "IS_CAUSAL"],
                 prune_configs_by={"early_config_prune": fits_shared_memory})
@triton.jit(do_not_specialize=["T"])
def flash_attention_tma_kernel(q, k, v, o, T, qk_scale, H: tl.constexpr, D: tl.constexpr, BM: tl.constexpr,
                               BN: tl.constexpr, WS: tl.constexpr, IS_CAUSAL: tl.constexpr,
                               EXP_POLY: tl.constexpr = 0):
    # the masked part starts at a multiple of BN (`split`); a config with BN above BM computed wrong causal rows
    tl.static_assert(BM % BN == 0, "flash_attention_tma: BM must be a multiple of BN")
    i_m, i_bh = tl.cdiv(T, BM) - 1 - tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    base = (i_b * T * H + i_h) * D
    d_q = tl.make_tensor_descriptor(q + base, shape=[T, D], strides=[H * D, 1], block_shape=[BM, D])
    d_o = tl.make_tensor_descriptor(o + base, shape=[T, D], strides=[H * D, 1], block_shape=[BM, D])
    o_m = i_m * BM + tl.arange(0, BM)
    b_q = d_q.load([i_m * BM, 0])  # [BM, D]
    b_m = tl.full([BM], float("-inf"), dtype=tl.float32)
    b_l = tl.zeros([BM], dtype=tl.float32)
    b_acc = tl.zeros([BM, D], dtype=tl.float32)
    # keys below `split` need no mask: left of the diagonal (causal) or inside T (BM is a multiple of BN)
    split = i_m * BM if IS_CAUSAL else (T // BN) * BN
    hi = tl.minimum((i_m + 1) * BM, T) if IS_CAUSAL else T
    b_m, b_l, b_acc = attend_keys(b_q, k + base, v + base, b_m, b_l, b_acc, o_m, 0, split, T, qk_scale, H, D, BM,
                                  BN, False, IS_CAUSAL, WS, EXP_POLY)
    if WS:
        b_m, b_l, b_acc = attend_tail(b_q, k + base, v + base, b_m, b_l, b_acc, o_m, split, hi, T, qk_scale, H, D, BM,
                                      BN, IS_CAUSAL, EXP_POLY)
    else:
        b_m, b_l, b_acc = attend_keys(b_q, k + base, v + base, b_m, b_l, b_acc, o_m, split, hi, T, qk_scale, H, D,
                                      BM, BN, True, IS_CAUSAL, False, EXP_POLY)
    d_o.store([i_m * BM, 0], (b_acc / b_l[:, None]).to(o.dtype.element_ty))


def flash_attention_tma(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                        scale: float | None = None) -> torch.Tensor:
    """o [B, T, H, D] in q's dtype; q, k, v contiguous with D a power of two of at least 16 bytes."""
    B, T, H, D = q.shape
    if D & (D - 1) or D * q.element_size() < 16:
        raise ValueError(f"flash_attention_tma: D={D}; a descriptor block spans all of D, so D must be a power "
                         "of two of at least 16 bytes; use attention.flash_attention_fwd for other head sizes")
    scale = D**-0.5 if scale is None else scale
    o = nan_empty(q.shape, q.dtype, q.device)
    device_info.refuse_without_descriptors()
    device_info.ensure_descriptor_scratch(q.device)

    def grid(meta: Mapping[str, Any]) -> tuple[int, int]:
        return (triton.cdiv(T, meta["BM"]), B * H)

    flash_attention_tma_kernel[grid](q, k, v, o, T, scale * LOG2E, H=H, D=D, IS_CAUSAL=causal)
    return o


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"o": flash_attention_tma(inputs["q"], inputs["k"], inputs["v"], p["causal"])}


_BASE = _FLASH[0]  # same inputs, reference, tolerances and baseline as the block-pointer kernel
DTYPES = ["bf16", "fp16", "fp32"]
_QUICK = (product(B=[1], T=[100], H=[2], D=[64], causal=[False, True], dtype=["fp16", "fp32"])
          + product(B=[1], T=[37], H=[1], D=[128], causal=[True], dtype=["fp32", "bf16"]))
_FULL = product(B=[1, 2], T=[1, 63, 64, 100, 257, 1000], H=[1, 3], D=[64, 128], causal=[False, True], dtype=DTYPES)

# inputs, reference, tolerances, variants and baseline are the block-pointer kernel's
SPECS = [
    dataclasses.replace(
        _BASE,
        name="flash_attention_tma",
        kernel=flash_attention_tma_kernel,
        launch=_launch,
        cases=by_level(_QUICK, _FULL),
        unavailable=device_info.descriptors_unavailable,
        perf_cases=product(B=[4], T=[8192], H=[32], D=[128], causal=[False, True], dtype=["bf16"]),
        doc="flash attention forward over tensor descriptors, unmasked off-diagonal key blocks; autotuned",
    ),
]
