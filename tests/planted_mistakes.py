"""User kernels with the classic first-contact mistakes, and two correct controls.

Each `mistake_*` kernel carries one mistake that parity.run.mistakes must name, with its
line and fix, on every tier; `control_*` kernels are correct Triton whose failures (here,
wrong numbers) must keep their own message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.spec import Case

N = 16


@triton.jit
def mistake_index_kernel(x, out, B: tl.constexpr):
    o = tl.arange(0, B)
    b_x = tl.load(x + o)  # [B]
    tl.store(out + o, b_x + b_x[2])  # MISTAKE: indexing a register tile


@triton.jit
def mistake_slice_kernel(x, out, B: tl.constexpr):
    o = tl.arange(0, B)
    b_x = tl.load(x + o)  # [B]
    tl.store(out + o, tl.join(b_x[:B // 2], b_x[B // 2:]).reshape(B))  # MISTAKE: slicing a register tile


@triton.jit
def mistake_arange_kernel(x, out, n):
    o = tl.arange(0, n)  # MISTAKE: a runtime bound
    tl.store(out + o, tl.load(x + o))


@triton.jit
def mistake_typo_kernel(x, out, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(out + o, tl.laod(x + o))  # MISTAKE: misspelt tl.load


@triton.jit
def control_copy_kernel(x, out, B: tl.constexpr):
    o = tl.arange(0, B)
    b_x = tl.load(x + o)  # [B]
    tl.store(out + o, b_x * 2.0)  # correct Triton, wrong numbers (the reference copies)


# host code in a decorator indexes dicts: never a tile-index suspect (library kernels do this)
@triton.heuristics({"EVEN": lambda args: args["B"] % 2 == 0})
@triton.jit
def control_heuristic_kernel(x, out, B: tl.constexpr, EVEN: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(out + o, tl.load(x + o))


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((N,), "fp32", gen)}


def _copy(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"].clone()}


def _launcher(kernel: Any, **kwargs: Any) -> Any:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        out = nan_empty((N,), inputs["x"].dtype, inputs["x"].device)
        kernel[(1,)](inputs["x"], out, **kwargs)
        return {"out": out}
    return launch


def _one_case(level: str) -> list[Case]:
    return [Case({"N": N, "dtype": "fp32"})]


def _spec(name: str, kernel: Any, **kwargs: Any) -> KernelSpec:
    return KernelSpec(name=name, family="planted_mistakes", kernel=kernel, launch=_launcher(kernel, **kwargs),
                      reference=_copy, cases=_one_case, make_inputs=_inputs)


SPECS = [
    _spec("mistake_index", mistake_index_kernel, B=N),
    _spec("mistake_slice", mistake_slice_kernel, B=N),
    _spec("mistake_arange", mistake_arange_kernel, n=N),
    _spec("mistake_typo", mistake_typo_kernel, B=N),
    _spec("control_wrong_numbers", control_copy_kernel, B=N),
]
