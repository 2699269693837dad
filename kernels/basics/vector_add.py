"""vector_add: masked 1-D loads and stores over a tl.cdiv grid."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels.basics import MEMORY_BOUND_TARGET
from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product
from reference import basics as ref


@triton.jit(do_not_specialize=["n_elements"])
def vector_add_kernel(x, y, out, n_elements, BLOCK: tl.constexpr):
    i_b = tl.program_id(0)
    o_x = i_b * BLOCK + tl.arange(0, BLOCK)
    # n_elements is not specialized (no recompile per length), so a mask on it hides its alignment and
    # the loads go scalar: full blocks take an unmasked path, only the last block is masked
    if (i_b + 1) * BLOCK <= n_elements:
        b_x = tl.load(x + o_x)
        b_y = tl.load(y + o_x)
        # add in fp32: bf16 arithmetic is not native everywhere (the interpreter adds raw bf16 bits)
        tl.store(out + o_x, (b_x.to(tl.float32) + b_y.to(tl.float32)).to(out.dtype.element_ty))
    else:
        m_x = o_x < n_elements
        b_x = tl.load(x + o_x, mask=m_x)
        b_y = tl.load(y + o_x, mask=m_x)
        tl.store(out + o_x, (b_x.to(tl.float32) + b_y.to(tl.float32)).to(out.dtype.element_ty), mask=m_x)


def vector_add(x: torch.Tensor, y: torch.Tensor, block: int = 1024) -> torch.Tensor:
    out = nan_empty(x.shape, x.dtype, x.device)
    n = x.numel()
    if n == 0:
        return out  # an empty grid kills the process on Ascend (coreDim=0), so never launch one
    vector_add_kernel[(triton.cdiv(n, block),)](x, y, out, n_elements=n, BLOCK=block)
    return out


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    x, y = randn((p["N"],), p["dtype"], gen), randn((p["N"],), p["dtype"], gen)
    if p.get("special") and p["N"] > 9:
        # NaN and both infinities, alone and against each other (inf + -inf is NaN)
        x[3], x[5], x[7], x[9], y[9] = float("nan"), float("inf"), -float("inf"), float("inf"), -float("inf")
    return {"x": x, "y": y}


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": vector_add(inputs["x"], inputs["y"])}


DTYPES = ["fp16", "bf16", "fp32"]

SPECS = [
    KernelSpec(
        name="vector_add",
        family="basics",
        kernel=vector_add_kernel,
        launch=_launch,
        reference=ref.vector_add,
        # edge cases: N=0 (nothing to launch), N=1, and NaN/Inf inputs whose positions must survive
        cases=by_level(product(N=[1, 1000, 4097], dtype=DTYPES) + product(N=[0], dtype=["fp32"])
                       + product(N=[1000], dtype=DTYPES, special=[True]),
                       product(N=[1, 17, 1000, 1024, 4097, 65537, 1 << 20 | 3], dtype=DTYPES)),
        make_inputs=_inputs,
        dynamic_args=("N",),
        bytes=lambda p: 3 * p["N"] * (4 if p["dtype"] == "fp32" else 2),
        flops=lambda p: p["N"],
        out_dims={"out": ("i",)},
        perf_cases=product(N=[1 << 28], dtype=["bf16"]),
        bound="memory",
        perf_target=MEMORY_BOUND_TARGET,
        baseline=lambda inputs, p: inputs["x"] + inputs["y"],
    ),
]
