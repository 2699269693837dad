"""row_gather: rows picked by index from a matrix of more than 2^31 elements.

`row * stride_row` overflows int32 once a tensor holds 2^31 elements: the indexing bug
long-sequence kernels hit when B·T·H·K passes 2^31. The kernel widens the row index to
int64 before multiplying. The full level gathers the last row of a 2^31 + 1024-element
int8 matrix; it needs a device with the memory, and is skipped elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, Tolerance, nan_empty
from parity.cases import by_level, product
from reference import basics as ref

BN = 1024


@triton.jit
def row_gather_kernel(x, rows, out, N, stride_row, BN: tl.constexpr):
    i_r, i_n = tl.program_id(0), tl.program_id(1)
    row = tl.load(rows + i_r).to(tl.int64)  # int32 row · stride wraps past 2^31 elements
    o_n = i_n * BN + tl.arange(0, BN)
    m_n = o_n < N
    b_x = tl.load(x + row * stride_row + o_n, mask=m_n, other=0)
    tl.store(out + i_r * N + o_n, b_x.to(tl.float32), mask=m_n)


def row_gather(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    N = x.shape[1]
    out = nan_empty((len(rows), N), torch.float32, x.device)
    if len(rows):
        row_gather_kernel[(len(rows), triton.cdiv(N, BN))](x, rows, out, N, x.stride(0), BN=BN)
    return out


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    # zeros cost a memset, not 2 GiB of random numbers; only the gathered rows (and their
    # neighbours, which a wrong offset would hit) hold data
    M, N = p["M"], p["N"]
    x = torch.zeros((M, N), dtype=torch.int8)
    rows = torch.tensor(sorted({0, 1, M // 2, M - 2, M - 1}), dtype=torch.int32)
    for r in rows.tolist():
        x[r] = torch.randint(-100, 100, (N,), generator=gen, dtype=torch.int8)
    return {"x": x, "rows": rows}


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": row_gather(inputs["x"], inputs["rows"])}


def _device_gib(p: Mapping[str, Any]) -> float | None:
    n = p["M"] * p["N"]
    return n / 2**30 + 1.0 if n >= 2**31 else None


SPECS = [
    KernelSpec(
        name="row_gather",
        family="basics",
        kernel=row_gather_kernel,
        launch=_launch,
        reference=ref.row_gather,
        cases=by_level(product(M=[64], N=[1000]), product(M=[(1 << 21) + 1], N=[BN])),
        make_inputs=_inputs,
        tolerance_key=lambda p: "fp32",
        tolerance={"fp32": Tolerance(rtol=0.0, atol=0.0, reason="a gather of int8 into fp32 is exact")},
        device_gib=_device_gib,
        out_dims={"out": ("row", "col")},
        baseline=lambda inputs, p: inputs["x"][inputs["rows"].long()].float(),
        bytes=lambda p: 5 * 5 * p["N"],
    ),
]
