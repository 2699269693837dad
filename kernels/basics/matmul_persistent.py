"""matmul_persistent: C = A·Bᵀ on a grid of one program per core, each looping over output tiles.

The grid is the SM count on CUDA and the AI-core count on Ascend (its docs recommend one program
per core for kernels with tl.dot, and its launcher caps grids at 65535), read for the target on
the compile tiers too (kernels.basics.device_info). Tiles are visited in grouped order so that
GROUP_M row blocks reuse each column block of B from L2. Loads are masked pointer loads, so any
M, N, K works.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.basics import device_info
from kernels.basics.matmul import SPECS as _PLAIN
from kernels.basics.matmul import dtype_cases
from kernels.basics.matmul_tma import fits_shared_memory
from parity import nan_empty
from parity.cases import by_level, product


def _config(bm: int, bn: int, bk: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8}, num_stages=stages, num_warps=warps)


# the same Hopper tiles as matmul_tma (128x256x64, 8 warps, 3-4 stages first); fp32 "ieee" keeps the last
CONFIGS = device_info.configs_for_target(
    cuda=[_config(128, 256, 64, 3, 8), _config(128, 256, 64, 4, 8), _config(128, 128, 64, 4, 8),
          _config(128, 128, 64, 4, 4), _config(64, 128, 64, 4, 4), _config(128, 64, 64, 4, 4),
          _config(64, 64, 16, 3, 8)],
    ascend=[_config(128, 128, 64, 1, 4), _config(64, 128, 64, 1, 4), _config(64, 64, 64, 1, 4)],
    interpret=[_config(32, 32, 16, 1, 4)],
)


@triton.autotune(configs=CONFIGS, key=["M", "N", "K", "INPUT_PRECISION"],
                 prune_configs_by={"early_config_prune": fits_shared_memory})
@triton.jit
def matmul_persistent_kernel(a, b, c, M, N, K, stride_am, stride_bn, stride_cm, BM: tl.constexpr, BN: tl.constexpr,
                             BK: tl.constexpr, GROUP_M: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    n_m, n_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    n_in_group = GROUP_M * n_n
    o_k = tl.arange(0, BK)
    for i_tile in range(tl.program_id(0), n_m * n_n, tl.num_programs(0)):
        first_m = (i_tile // n_in_group) * GROUP_M
        size_m = tl.minimum(n_m - first_m, GROUP_M)
        i_m = first_m + (i_tile % n_in_group) % size_m
        i_n = (i_tile % n_in_group) // size_m
        o_m = i_m * BM + tl.arange(0, BM)
        o_n = i_n * BN + tl.arange(0, BN)
        b_acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k0 in range(0, K, BK):
            m_k = (k0 + o_k) < K
            b_a = tl.load(a + o_m[:, None] * stride_am + (k0 + o_k)[None, :],
                          mask=(o_m < M)[:, None] & m_k[None, :], other=0.0)  # [BM, BK]
            b_b = tl.load(b + o_n[:, None] * stride_bn + (k0 + o_k)[None, :],
                          mask=(o_n < N)[:, None] & m_k[None, :], other=0.0)  # [BN, BK]
            b_acc = tl.dot(b_a, tl.trans(b_b), b_acc, input_precision=INPUT_PRECISION)
        m_c = (o_m < M)[:, None] & (o_n < N)[None, :]
        tl.store(c + o_m[:, None] * stride_cm + o_n[None, :], b_acc.to(c.dtype.element_ty), mask=m_c)


def matmul_persistent(a: torch.Tensor, b: torch.Tensor, precision: str | None = None,
                      num_cores: int | None = None) -> torch.Tensor:
    """A [M, K] times B [N, K] transposed (unit stride along K) on min(cores, tiles) programs."""
    M, K = a.shape
    N = b.shape[0]
    c = nan_empty((M, N), a.dtype, a.device)
    cores = num_cores or device_info.device_core_count(a.device)

    def grid(meta: Mapping[str, Any]) -> tuple[int]:
        return (max(1, min(cores, triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]))),)

    matmul_persistent_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                                   INPUT_PRECISION=precision)
    return c


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"c": matmul_persistent(inputs["a"], inputs["b"], p.get("precision"), num_cores=p.get("programs"))}


_BASE = _PLAIN[0]  # same math, inputs and tolerances as the per-tile matmul; only the grid differs

# the pointer matmul's spec with this kernel, and cases that make the tile loop wrap
SPECS = [
    dataclasses.replace(
        _BASE,
        name="matmul_persistent",
        kernel=matmul_persistent_kernel,
        launch=_launch,
        # the tile loop wraps only where tiles outnumber programs: 150x100 at the interpreter's 32x32 tiles
        # is 20 tiles over 3 programs, and `programs` pins the grid to 2 so it wraps on a GPU too
        cases=by_level(dtype_cases({"M": [150], "N": [100], "K": [80]})
                       + product(M=[300], N=[264], K=[80], dtype=["fp16"], programs=[2]),
                       dtype_cases({"M": [1, 100, 513], "N": [72, 256], "K": [16, 80, 1000]})
                       + product(M=[513], N=[256], K=[1000], dtype=["bf16"], programs=[2])
                       + product(M=[513], N=[256], K=[1000], dtype=["fp32"], precision=["tf32"], programs=[2])),
        doc="persistent matmul: grid = cores, grouped tile order inside; autotuned over Hopper's fast tiles",
    ),
]
