"""A long fp32 row sum whose launcher's block is not the only right one (issue 49), and a planted wrong block.

`row_sum_reordered`: tests.planted_rowsum's looped row sum, launched with BLOCK = 4096 (16 steps of a row of
65,536) under a tolerance chosen between that config's error and a smaller block's: BLOCK = 64 sums the
same row in another order, rounds a few times more (10.2x the launched config's error), and falls outside the
elementwise tolerance while it computes the fp64 answer within fp32's accumulation bound (parity.run.rounding).

The planted wrong block is tests.planted_rowsum's whole-row kernel: a smaller block drops the row's tail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from parity import KernelSpec, nan_empty
from parity.cases import by_level, product
from parity.spec import Tolerance
from tests import planted_rowsum

LAUNCHED_BLOCK = 4096
# measured at seed 0 under the interpreter (numpy's sums): BLOCK=4096 is off by 3.49e-5, BLOCK=64 by 3.55e-4
TIGHT = Tolerance(rtol=0.0, atol=1.5e-4, reason="planted: between the launched block's rounding and a smaller block's")


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = nan_empty((p["M"],), x.dtype, x.device)
    planted_rowsum.row_sum_looped_kernel[(p["M"],)](x, out, p["N"], BLOCK=LAUNCHED_BLOCK)
    return {"out": out}


SPECS = [KernelSpec(name="row_sum_reordered", family="planted_reorder", kernel=planted_rowsum.row_sum_looped_kernel,
                    launch=_launch, reference=planted_rowsum._reference,
                    cases=by_level(product(M=[4], N=[planted_rowsum.ROW], dtype=["fp32"])),
                    make_inputs=planted_rowsum._inputs, tolerance={"fp32": TIGHT})]
