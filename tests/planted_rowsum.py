"""A row sum whose block is the whole row, and its clean twin that loops over the row (issue 39).

`row_sum_whole_row`: one program per row loads the row in one block of BLOCK = next_power_of_2(N) and
sums it. At N = 65,536 fp32 that block needs 2,097,152 bits of Ascend's 1,572,864-bit unified buffer,
so ascend-compile overflows, and a smaller BLOCK fits; but this kernel then sums only the row's first
BLOCK elements. Advice that only compiles the smaller block calls it a fix; advice that computes it
must say the kernel needs a loop over the row.

`row_sum_looped`: the same launcher, a kernel that walks the row in steps of BLOCK. It overflows alike
at BLOCK = 65,536, and there a smaller BLOCK is a real fix: the proof computes the fp64 answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product
from parity.spec import Tolerance

ROW = 65536


@triton.jit
def row_sum_whole_row_kernel(x, out, N, BLOCK: tl.constexpr):
    i_m = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    b_x = tl.load(x + i_m * N + o, mask=o < N, other=0.0)  # [BLOCK]: the whole row, if BLOCK >= N
    tl.store(out + i_m, tl.sum(b_x, axis=0))


@triton.jit
def row_sum_looped_kernel(x, out, N, BLOCK: tl.constexpr):
    i_m = tl.program_id(0)
    b_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        o = start + tl.arange(0, BLOCK)
        b_acc += tl.load(x + i_m * N + o, mask=o < N, other=0.0)
    tl.store(out + i_m, tl.sum(b_acc, axis=0))


def _launcher(kernel: Any) -> Any:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        x = inputs["x"]
        out = nan_empty((p["M"],), x.dtype, x.device)
        kernel[(p["M"],)](x, out, p["N"], BLOCK=triton.next_power_of_2(p["N"]))
        return {"out": out}
    return launch


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["M"], p["N"]), p["dtype"], gen)}


def _reference(i: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": i["x"].sum(dim=1)}


# fp32 rounding of a sum grows with its length: about sqrt(N)·eps·rms(x), ~1e-4 at N = 65,536
LONG_SUM = Tolerance(rtol=1e-5, atol=2e-3, reason="a sum of 65,536 fp32 values rounds by about sqrt(N)·eps")


def _spec(name: str, kernel: Any) -> KernelSpec:
    return KernelSpec(name=name, family="planted_rowsum", kernel=kernel, launch=_launcher(kernel),
                      reference=_reference, cases=by_level(product(M=[4], N=[ROW], dtype=["fp32"])),
                      make_inputs=_inputs, tolerance={"fp32": LONG_SUM})


SPECS = [_spec("row_sum_whole_row", row_sum_whole_row_kernel), _spec("row_sum_looped", row_sum_looped_kernel)]
