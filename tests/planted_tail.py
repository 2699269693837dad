"""A planted missing tail mask (parity's own kernel): block sums whose last block reads past N."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from parity import KernelSpec
from parity.spec import Case

BUGGY_LOAD = "b_x = tl.load(x + o_x)  # planted: no mask"


@triton.jit
def block_sum_kernel(x, out, N, BLOCK: tl.constexpr):
    i_b = tl.program_id(0)
    o_x = i_b * BLOCK + tl.arange(0, BLOCK)
    b_x = tl.load(x + o_x)  # planted: no mask
    tl.store(out + i_b, tl.sum(b_x, axis=0))


def _launch(inputs, p):
    n_blocks = triton.cdiv(p["N"], p["BLOCK"])
    out = torch.empty(n_blocks, device=inputs["x"].device)
    block_sum_kernel[(n_blocks,)](inputs["x"], out, p["N"], BLOCK=p["BLOCK"])
    return {"out": out}


def _reference(inputs, p):
    x = inputs["x"][: p["N"]]
    pad = (-p["N"]) % p["BLOCK"]
    return {"out": torch.nn.functional.pad(x, (0, pad)).view(-1, p["BLOCK"]).sum(1)}


SPECS = [KernelSpec(name="planted_tail_sum", family="planted", kernel=block_sum_kernel, launch=_launch,
                    reference=_reference, cases=lambda level: [Case({"N": 1000, "BLOCK": 64, "dtype": "fp32"})],
                    # the buffer is longer than N, so the unmasked tail reads real values, not past the buffer
                    make_inputs=lambda p, g: {"x": torch.rand(p["N"] + 64, generator=g) + 1.0})]
