"""An autotuned kernel that caches its tuning results on disk (`cache_results=True`, as fla's do):
a compile tier must neither write them into the user's ~/.triton nor reuse a fake winner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

CONFIGS = [triton.Config({"BLOCK": 32}, num_warps=1), triton.Config({"BLOCK": 64}, num_warps=2),
           triton.Config({"BLOCK": 128}, num_warps=4)]


@triton.autotune(configs=CONFIGS, key=["n"], cache_results=True)
@triton.jit
def cached_tuning_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n) + 1, mask=o < n)


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = nan_empty(x.shape, x.dtype, x.device)
    cached_tuning_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
    return {"out": out}


SPECS = [KernelSpec(
    name="cached_tuning", family="planted", kernel=cached_tuning_kernel, launch=_launch,
    reference=lambda inputs, p: {"out": inputs["x"] + 1},
    cases=by_level(product(N=[256], dtype=["fp32"])),
    make_inputs=lambda p, gen: {"x": randn((p["N"],), p["dtype"], gen)},
)]
