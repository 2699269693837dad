"""A planted block that grows with N (BLOCK = next_power_of_2(N), one row per program): on Ascend its tiles stop
fitting the unified buffer just past a power of two; grown with `--grow N=..64K` (its own module: the default
1M-element block would cost CUDA's ptxas minutes, and the search, not the size, is what it tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product


@triton.jit(do_not_specialize=["N"])
def env_block_kernel(x, y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    m = o < N
    v = tl.load(x + row * N + o, mask=m, other=0.0)
    tl.store(y + row * N + o, v / tl.sum(v * v, axis=0), mask=m)


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["B"], p["N"]), "fp32", gen)}


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
    x = inputs["x"]
    y = nan_empty(x.shape, x.dtype, x.device)
    env_block_kernel[(p["B"],)](x, y, p["N"], BLOCK=triton.next_power_of_2(p["N"]))
    return {"y": y}


def _ref(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
    x = inputs["x"]
    return {"y": x / (x * x).sum(-1, keepdim=True)}


SPECS = [KernelSpec(name="env_block", family="planted", kernel=env_block_kernel, launch=_launch, reference=_ref,
                    cases=by_level(product(B=[1], N=[100, 1000])), make_inputs=_inputs, dynamic_args=("N",))]
