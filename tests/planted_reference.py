"""A spec whose fp64 reference raises, and one whose make_inputs raises, beside a good twin: each case is an
`error` owned by the spec's author."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from parity import KernelSpec
from parity.spec import Case

RAISING_LINE = 'raise KeyError("scale")  # planted: the reference reads a key its inputs lack'
INPUTS_LINE = 'raise ValueError("N must be even")  # planted: make_inputs refuses its own case'


@triton.jit
def scale_kernel(x, y, N, BLOCK: tl.constexpr):
    o_x = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m_x = o_x < N
    tl.store(y + o_x, tl.load(x + o_x, mask=m_x) * 2.0, mask=m_x)


def _launch(inputs, p):
    x = inputs["x"]
    y = torch.full_like(x, float("nan"))
    scale_kernel[(triton.cdiv(p["N"], 64),)](x, y, p["N"], BLOCK=64)
    return {"y": y}


def _good_reference(inputs, p):
    return {"y": inputs["x"] * 2.0}


def _raising_reference(inputs, p):
    raise KeyError("scale")  # planted: the reference reads a key its inputs lack


def _inputs(p, g):
    return {"x": torch.rand(p["N"], generator=g)}


def _raising_inputs(p, g):
    raise ValueError("N must be even")  # planted: make_inputs refuses its own case


def _spec(name, reference, make_inputs=_inputs):
    return KernelSpec(name=name, family="planted", kernel=scale_kernel, launch=_launch, reference=reference,
                      cases=lambda level: [Case({"N": 100, "dtype": "fp32"})], make_inputs=make_inputs)


SPECS = [_spec("planted_reference_good", _good_reference), _spec("planted_reference_raises", _raising_reference),
         _spec("planted_inputs_raise", _good_reference, _raising_inputs)]
