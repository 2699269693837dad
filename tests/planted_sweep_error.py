"""A kernel whose fixed-length path reads a name assigned only on its varlen path (the GDN NPU
port's recompute_w_u bug, in small): every launch of the sweep fails to compile."""

from __future__ import annotations

from dataclasses import replace

import triton
import triton.language as tl

from kernels.basics import vector_add as shared
from parity import nan_empty


@triton.jit(do_not_specialize=["n_elements"])
def add_unbound_kernel(x, y, out, n_elements, BLOCK: tl.constexpr, IS_VARLEN: tl.constexpr):
    if IS_VARLEN:
        i_t = tl.program_id(0)
    o = i_t * BLOCK + tl.arange(0, BLOCK)  # the planted bug: i_t is unbound when not IS_VARLEN
    m = o < n_elements
    tl.store(out + o, tl.load(x + o, mask=m) + tl.load(y + o, mask=m), mask=m)


def _launch(inputs, p):
    x, y = inputs["x"], inputs["y"]
    out = nan_empty(x.shape, x.dtype, x.device)
    add_unbound_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, n_elements=x.numel(), BLOCK=1024, IS_VARLEN=False)
    return {"out": out}


SPECS = [replace(shared.SPECS[0], name="vector_add_unbound_name", family="planted", kernel=add_unbound_kernel,
                 launch=_launch)]
