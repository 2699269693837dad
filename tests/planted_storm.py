"""A specialized twin of vector_add: without do_not_specialize, N recompiles by value class."""

from __future__ import annotations

from dataclasses import replace

import triton
import triton.language as tl

from kernels.basics import vector_add as shared
from parity import nan_empty


@triton.jit
def vector_add_specialized_kernel(x, y, out, n_elements, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n_elements
    tl.store(out + o, tl.load(x + o, mask=m) + tl.load(y + o, mask=m), mask=m)


def _launch(inputs, p):
    x, y = inputs["x"], inputs["y"]
    out = nan_empty(x.shape, x.dtype, x.device)
    vector_add_specialized_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, n_elements=x.numel(), BLOCK=1024)
    return {"out": out}


SPECS = [replace(shared.SPECS[0], name="vector_add_specialized", family="planted",
                 kernel=vector_add_specialized_kernel, launch=_launch)]


# claims the inclusive variant's IR lacks the comparison it needs: the dead-branch check must object
from kernels.basics import tril_mask as shared_tril  # noqa: E402

SPECS.append(replace(shared_tril.SPECS[0], name="tril_mask_wrong_ir_claim", family="planted",
                     ir_absent={("INCLUSIVE", True): (r"arith\.cmpi sge",)}))
