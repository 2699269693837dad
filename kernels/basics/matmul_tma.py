"""matmul_tma: C = A·Bᵀ through device-side tensor descriptors (TMA on Hopper).

The kernel builds its descriptors with tl.make_tensor_descriptor, the form both upstream
Triton (3.4+) and triton-ascend 3.2 spell; tiles past M, N or K read as zero and stores past
the edge are dropped by the descriptor, so the body has no masks. A descriptor needs 16-byte
aligned strides, so K and N are multiples of 16 bytes' worth of elements in every case.
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
from parity import nan_empty


def _config(bm: int, bn: int, bk: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8}, num_stages=stages, num_warps=warps)


# Hopper: 128x256x64 with 8 warps and 3-4 stages is the published fast bf16 tile. The last config
# is the small one fp32 input_precision="ieee" keeps: its FMA dot holds operand tiles in registers.
CONFIGS = device_info.configs_for_target(
    cuda=[_config(128, 256, 64, 3, 8), _config(128, 256, 64, 4, 8), _config(128, 128, 64, 4, 8),
          _config(128, 128, 64, 4, 4), _config(64, 128, 64, 4, 4), _config(128, 64, 64, 4, 4),
          _config(64, 64, 16, 3, 8)],
    ascend=[_config(128, 128, 64, 1, 4), _config(64, 128, 64, 1, 4), _config(64, 64, 64, 1, 4)],
    interpret=[_config(64, 64, 32, 1, 4)],
)


SHARED_BYTES = 227 * 1024  # sm_90's opt-in shared memory per block


def fits_shared_memory(configs: list, named_args: Mapping[str, Any], **kwargs: Any) -> list:
    """Configs whose operand pipeline fits Hopper's shared memory at this dtype (fp32 halves what fits);
    fp32 "ieee" keeps only the last config, as larger tiles spill registers in its FMA dot."""
    if {**named_args, **kwargs}.get("INPUT_PRECISION") == "ieee":
        return configs[-1:]
    size = named_args["a"].element_size()
    kept = [c for c in configs
            if c.num_stages * (c.kwargs["BM"] + c.kwargs["BN"]) * c.kwargs["BK"] * size <= SHARED_BYTES]
    return kept or configs[-1:]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K", "INPUT_PRECISION"],
                 prune_configs_by={"early_config_prune": fits_shared_memory})
@triton.jit
def matmul_tma_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      GROUP_M: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    # grouped order: GROUP_M row blocks share each column block of B while it sits in L2
    i_pid = tl.program_id(0)
    n_m, n_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    i_group = i_pid // (GROUP_M * n_n)
    first_m = i_group * GROUP_M
    size_m = tl.minimum(n_m - first_m, GROUP_M)
    i_m = first_m + (i_pid % (GROUP_M * n_n)) % size_m
    i_n = (i_pid % (GROUP_M * n_n)) // size_m

    d_a = tl.make_tensor_descriptor(a, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    d_b = tl.make_tensor_descriptor(b, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    d_c = tl.make_tensor_descriptor(c, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    b_acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        b_a = d_a.load([i_m * BM, k0])  # [BM, BK]
        b_b = d_b.load([i_n * BN, k0])  # [BN, BK]
        b_acc = tl.dot(b_a, b_b.T, b_acc, input_precision=INPUT_PRECISION)
    d_c.store([i_m * BM, i_n * BN], b_acc.to(c.dtype.element_ty))


def matmul_tma(a: torch.Tensor, b: torch.Tensor, precision: str | None = None) -> torch.Tensor:
    """A [M, K] times B [N, K] transposed, both contiguous; `precision` is tl.dot's input_precision for fp32."""
    M, K = a.shape
    N = b.shape[0]
    for name, t, n in (("a", a, K), ("b", b, K), ("c", a, N)):
        if (n * t.element_size()) % 16:
            raise ValueError(f"matmul_tma: {name}'s row stride is {n * t.element_size()} bytes; a tensor "
                             "descriptor needs a multiple of 16 bytes, so pad K and N or use basics.matmul")
    c = nan_empty((M, N), a.dtype, a.device)
    device_info.refuse_without_descriptors()
    device_info.ensure_descriptor_scratch(a.device)

    def grid(meta: Mapping[str, Any]) -> tuple[int]:
        return (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)

    matmul_tma_kernel[grid](a, b, c, M, N, K, INPUT_PRECISION=precision)
    return c


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"c": matmul_tma(inputs["a"], inputs["b"], p.get("precision"))}


_BASE = _PLAIN[0]  # same math, inputs and tolerances as the pointer matmul; only the memory path differs

# everything but the kernel, its launcher and where it can run is the pointer matmul's
SPECS = [
    dataclasses.replace(
        _BASE,
        name="matmul_tma",
        kernel=matmul_tma_kernel,
        launch=_launch,
        unavailable=device_info.descriptors_unavailable,
        doc="tensor-descriptor (TMA) matmul with grouped tile order; autotuned over Hopper's fast tiles",
    ),
]
