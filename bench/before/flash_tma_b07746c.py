# ruff: noqa: ANN001, ANN201  (@triton.jit parameters stay unannotated, as in kernels/)
"""flash_attention_tma as it was at b07746c (parity main, 2026-12-01), kept to time it beside the new one.

Only bench/issue30_kernels.py imports this; it is not a spec (kernels/ holds the live kernel).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.attention.flash import LOG2E
from kernels.basics import device_info
from parity import nan_empty


def _config(bm: int, bn: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BM": bm, "BN": bn}, num_stages=stages, num_warps=warps)


# Hopper at D=128: BM=128 with BN 64 or 128 and 8 warps, 2-3 stages, are the published fast tiles.
CONFIGS = device_info.configs_for_target(
    cuda=[_config(128, 64, 3, 8), _config(128, 128, 2, 8), _config(128, 64, 4, 8), _config(128, 128, 3, 8),
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


@triton.jit
def attend_keys(b_q, k, v, b_m, b_l, b_acc, o_m, lo, hi, T, qk_scale, H: tl.constexpr, D: tl.constexpr,
                BN: tl.constexpr, MASK: tl.constexpr, IS_CAUSAL: tl.constexpr):
    """Fold keys [lo, hi) into the running max b_m, sum b_l and output b_acc of one query block.

    Takes base pointers and builds its own descriptors: triton-ascend 3.2.0 cannot pass a tensor
    descriptor into a @triton.jit helper ("'tensor_descriptor_type' object has no attribute
    'is_ptr'"), and a second descriptor per operand costs one 128-byte write per program."""
    d_k = tl.make_tensor_descriptor(k, shape=[T, D], strides=[H * D, 1], block_shape=[BN, D])
    d_v = tl.make_tensor_descriptor(v, shape=[T, D], strides=[H * D, 1], block_shape=[BN, D])
    for start in range(lo, hi, BN):
        b_k = d_k.load([start, 0])  # [BN, D]
        b_v = d_v.load([start, 0])  # [BN, D]
        b_s = tl.dot(b_q, b_k.T)  # [BM, BN]
        if MASK:
            o_n = start + tl.arange(0, BN)
            m_s = o_n[None, :] < T
            if IS_CAUSAL:
                m_s = m_s & (o_m[:, None] >= o_n[None, :])
            b_s = tl.where(m_s, b_s * qk_scale, float("-inf"))
        else:
            b_s = b_s * qk_scale
        b_m_new = tl.maximum(b_m, tl.max(b_s, 1))
        b_p = tl.exp2(b_s - b_m_new[:, None])
        b_alpha = tl.exp2(b_m - b_m_new)
        b_l = b_l * b_alpha + tl.sum(b_p, 1)
        b_acc = b_acc * b_alpha[:, None] + tl.dot(b_p.to(b_v.dtype), b_v)
        b_m = b_m_new
    return b_m, b_l, b_acc


@triton.autotune(configs=CONFIGS, key=["H", "D", "IS_CAUSAL"],
                 prune_configs_by={"early_config_prune": fits_shared_memory})
@triton.jit(do_not_specialize=["T"])
def flash_attention_tma_kernel(q, k, v, o, T, qk_scale, H: tl.constexpr, D: tl.constexpr, BM: tl.constexpr,
                               BN: tl.constexpr, IS_CAUSAL: tl.constexpr):
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
    b_m, b_l, b_acc = attend_keys(b_q, k + base, v + base, b_m, b_l, b_acc, o_m, 0, split, T, qk_scale, H, D, BN,
                                  False, IS_CAUSAL)
    b_m, b_l, b_acc = attend_keys(b_q, k + base, v + base, b_m, b_l, b_acc, o_m, split, hi, T, qk_scale, H, D, BN,
                                  True, IS_CAUSAL)
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
