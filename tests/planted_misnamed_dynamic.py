"""A spec whose dynamic_args names the kernel's argument (`n`) instead of the case parameter (`N`), issue 39.

The specialization sweep varies case parameters; with `("n",)` it had no base case to sweep and read
`base cases 0 | compiles 0 | verdict ok`. It is a spec error now, naming the case parameters there are.
`SPECS_FIXED` is the clean twin, `("N",)`, whose sweep finds the recompile storm the kernel has (its `n`
is specialized on value classes: no do_not_specialize).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

BLOCK = 256


@triton.jit
def scale_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out + o, 2.0 * tl.load(x + o, mask=m), mask=m)


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = nan_empty(x.shape, x.dtype, x.device)
    scale_kernel[(triton.cdiv(p["N"], BLOCK),)](x, out, p["N"], BLOCK=BLOCK)
    return {"out": out}


FIXED = KernelSpec(name="scale_dynamic_n", family="planted_dynamic", kernel=scale_kernel, launch=_launch,
                   reference=lambda i, p: {"out": 2.0 * i["x"]},
                   cases=by_level(product(N=[1000, 4096], dtype=["fp32"])),
                   make_inputs=lambda p, g: {"x": randn((p["N"],), p["dtype"], g)}, dynamic_args=("N",))
MISNAMED = replace(FIXED, name="scale_misnamed_dynamic", dynamic_args=("n",))

SPECS = [MISNAMED]
SPECS_FIXED = [FIXED]
