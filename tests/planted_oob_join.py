"""Red zone findings joined with the kernel's unmasked accesses (AUTHOR.md names the line that touches the argument
the red zone caught). BLOCK 1024 over N = 1000: one program, 24 lanes past each tensor of N elements.

- `join_masked_and_unmasked_load`: `x` loaded with a mask, `y` without: only `y`'s load may be named;
- `join_two_unmasked_loads`: both loads unmasked, but `w` holds BLOCK elements, so only `y` is read past: only
  `y`'s load is named (a list of every unmasked load would name `w`'s too);
- `join_store`: two unmasked stores, `aux` in bounds (BLOCK elements) and `out` past its end: only `out`'s store;
- `join_helper_store`: the stray store sits in a @triton.jit helper, whose source parity does not search: AUTHOR.md
  says no access in the kernel's own source touches `out`, rather than naming another line.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from parity import KernelSpec
from parity.cases import by_level, product
from parity.spec.inputs import nan_empty


@triton.jit
def masked_and_unmasked_kernel(x, y, out, N, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    b_x = tl.load(x + o, mask=o < N, other=0.0)
    b_y = tl.load(y + o)  # planted: no mask
    tl.store(out + tl.program_id(0), tl.sum(b_x + b_y, axis=0))


@triton.jit
def two_unmasked_kernel(w, y, out, N, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    b_w = tl.load(w + o)  # no mask, in bounds: w holds BLOCK elements
    p_y = y + o
    b_y = tl.load(p_y)  # planted: no mask
    tl.store(out + tl.program_id(0), tl.sum(b_w * 0.0 + b_y, axis=0))


@triton.jit
def store_kernel(x, aux, out, N, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    b_x = tl.load(x + o, mask=o < N, other=0.0)
    tl.store(aux + o, b_x)  # no mask, in bounds: aux holds BLOCK elements
    tl.store(out + o, b_x * 2.0)  # planted: no mask


@triton.jit
def _put(p, v):
    tl.store(p, v)  # planted: no mask, in a helper


@triton.jit
def helper_store_kernel(x, out, N, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    b_x = tl.load(x + o, mask=o < N, other=0.0)
    _put(out + o, b_x * 2.0)



def _sum_launch(kernel, first):
    def launch(inputs, p):
        out = nan_empty((1,), torch.float32, inputs["y"].device)
        kernel[(1,)](inputs[first], inputs["y"], out, p["N"], BLOCK=p["BLOCK"])
        return {"out": out}
    return launch


def _store_launch(inputs, p):
    out = torch.empty_like(inputs["x"])
    aux = torch.empty(p["BLOCK"], device=inputs["x"].device)
    store_kernel[(1,)](inputs["x"], aux, out, p["N"], BLOCK=p["BLOCK"])
    return {"out": out}


def _helper_launch(inputs, p):
    out = torch.empty_like(inputs["x"])
    helper_store_kernel[(1,)](inputs["x"], out, p["N"], BLOCK=p["BLOCK"])
    return {"out": out}


CASES = by_level(product(N=[1000], BLOCK=[1024], dtype=["fp32"]))


def _inputs(p, g):
    return {"x": torch.randn(p["N"], generator=g), "y": torch.randn(p["N"], generator=g),
            "w": torch.randn(p["BLOCK"], generator=g)}


def _spec(name, kernel, launch, reference):
    return KernelSpec(name=name, family="planted", kernel=kernel, launch=launch, reference=reference,
                      cases=CASES, make_inputs=_inputs)


def _sum_xy(i, p):
    return {"out": (i["x"] + i["y"]).sum().reshape(1)}


def _sum_y(i, p):
    return {"out": i["y"].sum().reshape(1)}


def _double_x(i, p):
    return {"out": i["x"] * 2}


SPECS = [
    _spec("join_masked_and_unmasked_load", masked_and_unmasked_kernel, _sum_launch(masked_and_unmasked_kernel, "x"),
          _sum_xy),
    _spec("join_two_unmasked_loads", two_unmasked_kernel, _sum_launch(two_unmasked_kernel, "w"), _sum_y),
    _spec("join_store", store_kernel, _store_launch, _double_x),
    _spec("join_helper_store", helper_store_kernel, _helper_launch, _double_x),
]
