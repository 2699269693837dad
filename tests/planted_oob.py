"""A user's unmasked tail, written afresh (issue 39): BLOCK 1024 over N = 1000, so the one program reads and
writes 24 elements past each tensor. Without red zones the comparison can pass while the heap is corrupted.

- `oob_tail_scale`: load and store both unmasked (what the user brought);
- `oob_tail_store`: the load is masked, the store is not: every value is right, only the write is wrong;
- `oob_tail_sum`: the load is unmasked, the store is in bounds: the stray read reaches the result;
- `oob_tail_scale_masked`: the clean twin, masked on both, which must pass.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from parity import KernelSpec
from parity.cases import by_level, product
from parity.spec.inputs import nan_empty


@triton.jit
def tail_scale_kernel(x, out, N, BLOCK: tl.constexpr):
    o_x = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    b_x = tl.load(x + o_x)  # planted: no mask
    tl.store(out + o_x, b_x * 2.0)  # planted: no mask


@triton.jit
def tail_store_kernel(x, out, N, BLOCK: tl.constexpr):
    o_x = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    b_x = tl.load(x + o_x, mask=o_x < N, other=0.0)
    tl.store(out + o_x, b_x * 2.0)  # planted: no mask


@triton.jit
def tail_sum_kernel(x, out, N, BLOCK: tl.constexpr):
    o_x = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    b_x = tl.load(x + o_x)  # planted: no mask
    tl.store(out + tl.program_id(0), tl.sum(b_x, axis=0))


@triton.jit
def tail_scale_masked_kernel(x, out, N, BLOCK: tl.constexpr):
    o_x = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m_x = o_x < N
    b_x = tl.load(x + o_x, mask=m_x, other=0.0)
    tl.store(out + o_x, b_x * 2.0, mask=m_x)


def _scale(kernel):
    def launch(inputs, p):
        x = inputs["x"]
        out = torch.empty_like(x)  # the launcher's own allocation, as a user writes it
        kernel[(triton.cdiv(p["N"], p["BLOCK"]),)](x, out, p["N"], BLOCK=p["BLOCK"])
        return {"out": out}
    return launch


def _sum(inputs, p):
    n_blocks = triton.cdiv(p["N"], p["BLOCK"])
    out = nan_empty((n_blocks,), torch.float32, inputs["x"].device)
    tail_sum_kernel[(n_blocks,)](inputs["x"], out, p["N"], BLOCK=p["BLOCK"])
    return {"out": out}


CASES = by_level(product(N=[1000], BLOCK=[1024], dtype=["fp32"]))


def _inputs(p, g):
    return {"x": torch.randn(p["N"], generator=g)}


def _spec(name, kernel, launch, reference):
    return KernelSpec(name=name, family="planted", kernel=kernel, launch=launch, reference=reference,
                      cases=CASES, make_inputs=_inputs)


SPECS = [
    _spec("oob_tail_scale", tail_scale_kernel, _scale(tail_scale_kernel), lambda i, p: {"out": i["x"] * 2}),
    _spec("oob_tail_store", tail_store_kernel, _scale(tail_store_kernel), lambda i, p: {"out": i["x"] * 2}),
    _spec("oob_tail_sum", tail_sum_kernel, _sum, lambda i, p: {"out": i["x"].sum().reshape(1)}),
    _spec("oob_tail_scale_masked", tail_scale_masked_kernel, _scale(tail_scale_masked_kernel),
          lambda i, p: {"out": i["x"] * 2}),
]
