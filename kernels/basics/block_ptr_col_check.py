"""block_ptr_col_check: a block pointer checked on its column axis only, walked along the row.

Each program owns BM full rows of an [M, N] matrix (M is a multiple of BM, so rows need no
check) and steps across the columns with tl.advance; only the last step is ragged, so only
axis 1 is boundary-checked. This is the "non-prefix axis" form of boundary_check: a backend
that rebuilds the column bound from the flattened offset without taking the row part out
drops or misplaces every program's columns but the first.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from parity import KernelSpec, KnownDivergence, nan_empty, randn
from parity.cases import by_level, product
from reference import basics as ref


@triton.jit
def block_ptr_col_check_kernel(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    i_m = tl.program_id(0)
    p_x = tl.make_block_ptr(x, (M, N), (N, 1), (i_m * BM, 0), (BM, BN), (1, 0))
    p_y = tl.make_block_ptr(y, (M, N), (N, 1), (i_m * BM, 0), (BM, BN), (1, 0))
    for _ in range(0, tl.cdiv(N, BN)):
        b_x = tl.load(p_x, boundary_check=(1,), padding_option="zero")  # [BM, BN]
        tl.store(p_y, (b_x.to(tl.float32) * 2).to(p_y.dtype.element_ty), boundary_check=(1,))
        p_x = tl.advance(p_x, (0, BN))
        p_y = tl.advance(p_y, (0, BN))


def block_ptr_col_check(x: torch.Tensor, bm: int = 8, bn: int = 16) -> torch.Tensor:
    M, N = x.shape
    y = nan_empty(x.shape, x.dtype, x.device)
    if M:
        block_ptr_col_check_kernel[(M // bm,)](x, y, M=M, N=N, BM=bm, BN=bn)
    return y


DTYPES = ["fp16", "fp32"]

SPECS = [
    KernelSpec(
        name="block_ptr_col_check",
        family="basics",
        kernel=block_ptr_col_check_kernel,
        launch=lambda inputs, p: {"y": block_ptr_col_check(inputs["x"])},
        reference=ref.block_ptr_col_check,
        cases=by_level(product(M=[8, 24], N=[16, 40], dtype=DTYPES),
                       product(M=[8, 24, 64], N=[16, 40, 100, 1000], dtype=DTYPES)),
        make_inputs=lambda p, gen: {"x": randn((p["M"], p["N"]), p["dtype"], gen)},
        bytes=lambda p: 2 * p["M"] * p["N"] * (4 if p["dtype"] == "fp32" else 2),
        baseline=lambda inputs, p: 2 * inputs["x"],
        out_dims={"y": ("m", "n")},
        known_divergences=(
            # seen in the ttadapter MLIR: the column bound is `N - flat offset` (the row offset is never
            # divided out), so every program but the first stores nothing; boundary_check=(0, 1) is right
            KnownDivergence(backend="ascend-lowered", applies=lambda p: p["M"] > 8,
                            reason="triton-adapter (triton-ascend 3.2.0) rebuilds the bound of a checked column "
                                   "axis from the block pointer's flattened offset without removing the row part, "
                                   "so programs with a non-zero row offset store nothing when only axis 1 is "
                                   "checked. The fix (PR #740) was reverted for release/3.2.2 (PR #824)",
                            link="https://github.com/triton-lang/triton-ascend/pull/824"),
        ),
    ),
]
