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


def _config(bm: int, bn: int, stages: int, warps: int, ws: bool = False, exp_poly: int = 0, desc4: bool = False,
            persist: bool = False, host: bool = False) -> triton.Config:
    """A config; the CUDA-only switches (EXP_POLY, DESC4, PERSIST) enter its kwargs only when set, so the
    Ascend and interpreter lists never name them (the kernel's defaults apply there)."""
    kwargs: dict[str, Any] = {"BM": bm, "BN": bn, "WS": ws}
    kwargs.update({k: v for k, v in (("EXP_POLY", exp_poly), ("DESC4", desc4), ("PERSIST", persist)) if v})
    hook = _host_block_shapes if host else None  # host descriptors take the config's block shapes before a launch
    return triton.Config(kwargs, num_stages=stages, num_warps=warps, pre_hook=hook)


def _host_block_shapes(nargs: Mapping[str, Any]) -> None:
    """Set host-side descriptors' block shapes to the config's tiles: [1, BM, 1, D] for q and o, [1, BN, 1, D]
    for k and v (the autotuner calls this before each launch of a config that carries it)."""
    D = nargs["D"]
    for name, rows in (("q", nargs["BM"]), ("o", nargs["BM"]), ("k", nargs["BN"]), ("v", nargs["BN"])):
        if hasattr(nargs[name], "block_shape"):
            nargs[name].block_shape = [1, rows, 1, D]


# Hopper at D=128: BM=128 with BN 64 or 128 and 8 warps, 2-3 stages, are the published fast tiles; the
# warp-specialized ones (ws=True: TMA producer and MMA/softmax consumer warps, upstream Triton >= 3.5 on
# Hopper with device-side descriptors; 4 warps a group) are candidates timed by bench/issue30_kernels.py,
# outside the autotune list until a device run shows them correct and faster (a miscompile there would cost
# the whole cuda session its accuracy pass).
WS_CONFIGS = [_config(128, 128, 2, 4, ws=True), _config(128, 64, 3, 4, ws=True)]
# Candidates timed by bench/flash_candidates4.py (issue 30), outside the autotune list until a device run
# shows them correct and faster; all on the list's best tile (128x128, 3 stages, 8 warps) and 128x64:
# - EXP_POLY 1 / 2: a half / a quarter of the unmasked blocks' exponentials on the FMA pipe (exp2_poly), the
#   rest on MUFU (16 a clock an SM on Hopper, about half the MMA time at D=128);
# - DESC4: one 4-D descriptor per operand over the whole [B, T, H, D] tensor, built once per program;
# - PERSIST (with DESC4): one program an SM looping over (query block, batch·head) tiles, longest first, so
#   descriptors and launch costs are paid once an SM;
# - host: descriptors built on the host (triton.tools.tensor_descriptor, Triton >= 3.4), launcher argument.
CANDIDATE_CONFIGS = {
    "poly1": _config(128, 128, 3, 8, exp_poly=1),
    "poly2": _config(128, 128, 3, 8, exp_poly=2),
    "poly1-bn64": _config(128, 64, 3, 8, exp_poly=1),
    "poly2-bn64": _config(128, 64, 3, 8, exp_poly=2),
    "desc4": _config(128, 128, 3, 8, desc4=True),
    "desc4-poly1": _config(128, 128, 3, 8, exp_poly=1, desc4=True),
    # persistent at 128x128 takes 263,168 bytes of shared memory at 3 stages on sm_90 (the sm_90 build, Triton
    # 3.8), over the 232,448 an H200 block may have: 2 stages, or BN 64 at 3
    "persist": _config(128, 128, 2, 8, desc4=True, persist=True),
    "persist-poly1": _config(128, 128, 2, 8, exp_poly=1, desc4=True, persist=True),
    "persist-poly1-bn64": _config(128, 64, 3, 8, exp_poly=1, desc4=True, persist=True),
    "host": _config(128, 128, 3, 8, desc4=True, host=True),
    "host-poly1": _config(128, 128, 3, 8, exp_poly=1, desc4=True, host=True),
    "host-persist-poly1": _config(128, 128, 2, 8, exp_poly=1, desc4=True, persist=True, host=True),
}
HOST_CANDIDATES = tuple(name for name, c in CANDIDATE_CONFIGS.items() if c.pre_hook is not None)
CONFIGS = device_info.configs_for_target(
    cuda=[_config(128, 64, 3, 8), _config(128, 128, 2, 8), _config(128, 64, 4, 8), _config(128, 128, 3, 8),
          _config(64, 64, 3, 4), _config(64, 32, 2, 4)],
    ascend=[_config(64, 64, 1, 4), _config(128, 64, 1, 4)],
    interpret=[_config(32, 16, 1, 4)],
)
SHARED_BYTES = 227 * 1024  # sm_90's opt-in shared memory per block


def fits_shared_memory(configs: list, named_args: Mapping[str, Any], **kwargs: Any) -> list:
    """Configs whose Q tile and staged K, V tiles fit Hopper's shared memory at this dtype and D."""
    q = named_args["q"]
    size, D = getattr(q, "base", q).element_size(), {**named_args, **kwargs}["D"]  # base: a host descriptor's
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
    """y = exp2_poly(x), N elements a program: bench/flash_candidates4.py checks the device's result."""
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
    accumulates in place instead of into a second [BM, D] fp32 tile. EXP_POLY (CUDA candidates) moves part
    of the unmasked blocks' exponentials off MUFU; the masked ones, with -inf scores, keep tl.exp2."""
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
        b_p = exp2_mixed(b_s * qk_scale - b_m_new[:, None], BM, BN, EXP_POLY)
    b_alpha = tl.exp2(b_m - b_m_new)
    b_acc = tl.dot(b_p.to(b_v.dtype), b_v, b_acc * b_alpha[:, None])
    b_l = b_l * b_alpha + tl.sum(b_p, 1)
    return b_m_new, b_l, b_acc


@triton.jit
def attend_tile(q, k, v, o, tile, T, BH, qk_scale, H: tl.constexpr, D: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr, WS: tl.constexpr, IS_CAUSAL: tl.constexpr, EXP_POLY: tl.constexpr,
                DESCRIPTORS: tl.constexpr):
    """Attention of one query block of one (batch, head): tile t = (query block n_m - 1 - t // BH, batch·head
    t % BH), so the longest query blocks under a causal mask come first.

    With DESCRIPTORS (CUDA candidates) q, k, v, o are 4-D descriptors over [B, T, H, D] with blocks
    [1, rows, 1, D], built once by the caller; otherwise they are base pointers and the [T, D] descriptors of
    this (batch, head) are built here (triton-ascend 3.2.0 cannot pass a tensor descriptor into a @triton.jit
    helper: "'tensor_descriptor_type' object has no attribute 'is_ptr'"; so fold_block gets tiles). Rows
    past T read as zero and stores past T are dropped either way."""
    n_m = tl.cdiv(T, BM)
    i_m, i_bh = n_m - 1 - tile // BH, tile % BH
    i_b, i_h = i_bh // H, i_bh % H
    if not DESCRIPTORS:
        base = (i_b * T * H + i_h) * D
        d_q = tl.make_tensor_descriptor(q + base, shape=[T, D], strides=[H * D, 1], block_shape=[BM, D])
        d_o = tl.make_tensor_descriptor(o + base, shape=[T, D], strides=[H * D, 1], block_shape=[BM, D])
        d_k = tl.make_tensor_descriptor(k + base, shape=[T, D], strides=[H * D, 1], block_shape=[BN, D])
        d_v = tl.make_tensor_descriptor(v + base, shape=[T, D], strides=[H * D, 1], block_shape=[BN, D])
        b_q = d_q.load([i_m * BM, 0])  # [BM, D]
    else:
        b_q = q.load([i_b, i_m * BM, i_h, 0]).reshape(BM, D)
    o_m = i_m * BM + tl.arange(0, BM)
    b_m = tl.full([BM], float("-inf"), dtype=tl.float32)
    b_l = tl.zeros([BM], dtype=tl.float32)
    b_acc = tl.zeros([BM, D], dtype=tl.float32)
    # keys below `split` need no mask: left of the diagonal (causal) or inside T (BM is a multiple of BN)
    split = i_m * BM if IS_CAUSAL else (T // BN) * BN
    hi = tl.minimum((i_m + 1) * BM, T) if IS_CAUSAL else T
    if DESCRIPTORS:
        for start in range(0, split, BN):
            b_k = k.load([i_b, start, i_h, 0]).reshape(BN, D)
            b_v = v.load([i_b, start, i_h, 0]).reshape(BN, D)
            b_m, b_l, b_acc = fold_block(b_q, b_k, b_v, b_m, b_l, b_acc, o_m, start, T, qk_scale, BM, BN, False,
                                         IS_CAUSAL, EXP_POLY)
        for start in range(split, hi, BN):
            b_k = k.load([i_b, start, i_h, 0]).reshape(BN, D)
            b_v = v.load([i_b, start, i_h, 0]).reshape(BN, D)
            b_m, b_l, b_acc = fold_block(b_q, b_k, b_v, b_m, b_l, b_acc, o_m, start, T, qk_scale, BM, BN, True,
                                         IS_CAUSAL, EXP_POLY)
        o.store([i_b, i_m * BM, i_h, 0], (b_acc / b_l[:, None]).to(b_q.dtype).reshape(1, BM, 1, D))
    else:
        if WS:
            for start in tl.range(0, split, BN, warp_specialize=True):
                b_m, b_l, b_acc = fold_block(b_q, d_k.load([start, 0]), d_v.load([start, 0]), b_m, b_l, b_acc, o_m,
                                             start, T, qk_scale, BM, BN, False, IS_CAUSAL, EXP_POLY)
            for j in tl.static_range(BM // BN if IS_CAUSAL else 1):
                start = split + j * BN
                if start < hi:
                    b_m, b_l, b_acc = fold_block(b_q, d_k.load([start, 0]), d_v.load([start, 0]), b_m, b_l, b_acc,
                                                 o_m, start, T, qk_scale, BM, BN, True, IS_CAUSAL, EXP_POLY)
        else:
            for start in range(0, split, BN):
                b_m, b_l, b_acc = fold_block(b_q, d_k.load([start, 0]), d_v.load([start, 0]), b_m, b_l, b_acc, o_m,
                                             start, T, qk_scale, BM, BN, False, IS_CAUSAL, EXP_POLY)
            for start in range(split, hi, BN):
                b_m, b_l, b_acc = fold_block(b_q, d_k.load([start, 0]), d_v.load([start, 0]), b_m, b_l, b_acc, o_m,
                                             start, T, qk_scale, BM, BN, True, IS_CAUSAL, EXP_POLY)
        d_o.store([i_m * BM, 0], (b_acc / b_l[:, None]).to(b_q.dtype))


@triton.autotune(configs=CONFIGS, key=["H", "D", "IS_CAUSAL"],
                 prune_configs_by={"early_config_prune": fits_shared_memory})
@triton.jit(do_not_specialize=["T", "BH"])
def flash_attention_tma_kernel(q, k, v, o, T, BH, qk_scale, H: tl.constexpr, D: tl.constexpr, BM: tl.constexpr,
                               BN: tl.constexpr, WS: tl.constexpr, IS_CAUSAL: tl.constexpr,
                               EXP_POLY: tl.constexpr = 0, DESC4: tl.constexpr = False,
                               PERSIST: tl.constexpr = False, HOST: tl.constexpr = False):
    """One program per (query block, batch·head) (grid (n_m, B·H)), or with PERSIST one per SM looping over
    those tiles (grid (min(SMs, tiles),)), each the next tile a grid-stride away.

    Switches (constexpr, so a branch that is off is never compiled; the Ascend and interpreter lists set none):
    - WS asks upstream Triton to warp-specialize the unmasked key loop (Hopper since Triton 3.5 with
      device-side descriptors). Upstream Triton 3.6 and 3.8 fail to compile a kernel whose warp-specialized
      loop is followed by a second loop (NVGPUWarpSpecialization: "PassManager::run failed"), so under WS
      the masked blocks (at most BM // BN under a causal mask, the ragged last without) run unrolled.
    - EXP_POLY: see exp2_mixed.
    - DESC4: four 4-D descriptors over the whole [B, T, H, D] tensors, built once per program instead of
      four per tile; HOST: the launcher passes such descriptors (q, k, v, o are then descriptors).
    - PERSIST (CUDA candidates; meant with DESC4 or HOST, so descriptors are built once an SM)."""
    if HOST:
        d_q, d_k, d_v, d_o = q, k, v, o
    elif DESC4:
        B = BH // H
        d_q = tl.make_tensor_descriptor(q, shape=[B, T, H, D], strides=[T * H * D, H * D, D, 1],
                                        block_shape=[1, BM, 1, D])
        d_k = tl.make_tensor_descriptor(k, shape=[B, T, H, D], strides=[T * H * D, H * D, D, 1],
                                        block_shape=[1, BN, 1, D])
        d_v = tl.make_tensor_descriptor(v, shape=[B, T, H, D], strides=[T * H * D, H * D, D, 1],
                                        block_shape=[1, BN, 1, D])
        d_o = tl.make_tensor_descriptor(o, shape=[B, T, H, D], strides=[T * H * D, H * D, D, 1],
                                        block_shape=[1, BM, 1, D])
    else:
        d_q, d_k, d_v, d_o = q, k, v, o  # base pointers: attend_tile builds per-head descriptors
    if PERSIST:
        for tile in range(tl.program_id(0), tl.cdiv(T, BM) * BH, tl.num_programs(0)):
            attend_tile(d_q, d_k, d_v, d_o, tile, T, BH, qk_scale, H, D, BM, BN, WS, IS_CAUSAL, EXP_POLY,
                        DESC4 or HOST)
    else:
        attend_tile(d_q, d_k, d_v, d_o, tl.program_id(0) * BH + tl.program_id(1), T, BH, qk_scale, H, D, BM, BN,
                    WS, IS_CAUSAL, EXP_POLY, DESC4 or HOST)


def flash_attention_tma(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                        scale: float | None = None, host_descriptors: bool = False) -> torch.Tensor:
    """o [B, T, H, D] in q's dtype; q, k, v contiguous with D a power of two of at least 16 bytes.

    host_descriptors (CUDA, Triton >= 3.4; the HOST candidates of CANDIDATE_CONFIGS, whose pre-hook sets the
    block shapes): q, k, v, o go to the kernel as triton.tools.tensor_descriptor.TensorDescriptor objects."""
    B, T, H, D = q.shape
    if D & (D - 1) or D * q.element_size() < 16:
        raise ValueError(f"flash_attention_tma: D={D}; a descriptor block spans all of D, so D must be a power "
                         "of two of at least 16 bytes; use attention.flash_attention_fwd for other head sizes")
    scale = D**-0.5 if scale is None else scale
    o = nan_empty(q.shape, q.dtype, q.device)
    device_info.refuse_without_descriptors()
    device_info.ensure_descriptor_scratch(q.device)
    args: tuple[Any, ...] = (q, k, v, o)
    if host_descriptors:
        from triton.tools.tensor_descriptor import TensorDescriptor

        # the block shape is a placeholder: the config's pre-hook (_host_block_shapes) sets it before a launch
        args = tuple(TensorDescriptor.from_tensor(t, [1, 16, 1, D]) for t in args)

    def grid(meta: Mapping[str, Any]) -> tuple[int, ...]:
        tiles = (triton.cdiv(T, meta["BM"]), B * H)
        if meta.get("PERSIST"):
            return (min(device_info.device_core_count(q.device), tiles[0] * tiles[1]),)
        return tiles

    flash_attention_tma_kernel[grid](*args, T, B * H, scale * LOG2E, H=H, D=D, IS_CAUSAL=causal,
                                     HOST=host_descriptors)
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
