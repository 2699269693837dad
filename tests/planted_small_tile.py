"""An element-wise kernel launched with a tile far smaller than the UB holds, and its twin (issue 43, UB use).

`scale_small_tile`: y = 2x + 1 over N fp32 values, BLOCK = 64 fixed by the launcher (256 bytes a tile): its
UB plan uses a sliver of Ascend's 192 KiB unified buffer while a tile 64 times larger fits and computes
the same answer, so ascend-compile says "larger tiles fit" once ascend-lowered has computed it.
`scale_large_tile`: the same kernel and launcher with BLOCK = 16384, whose plan already uses over a
quarter of the buffer: nothing to say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

N = 240 * 16384  # 240 programs of the twin: a multiple of every part's cube and vector cores


@triton.jit
def scale_tile_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + o, tl.load(x + o, mask=o < n, other=0.0) * 2.0 + 1.0, mask=o < n)


def _launcher(block: int) -> Any:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        x = inputs["x"]
        y = nan_empty(x.shape, x.dtype, x.device)
        scale_tile_kernel[lambda meta: (triton.cdiv(p["N"], meta["BLOCK"]),)](x, y, p["N"], BLOCK=block)
        return {"y": y}
    return launch


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["N"],), p["dtype"], gen)}


def _reference(i: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"y": i["x"] * 2 + 1}


def _spec(name: str, block: int) -> KernelSpec:
    return KernelSpec(name=name, family="planted_small_tile", kernel=scale_tile_kernel, launch=_launcher(block),
                      reference=_reference, cases=by_level(product(N=[N], dtype=["fp32"])), make_inputs=_inputs)


SPECS = [_spec("scale_small_tile", 64), _spec("scale_large_tile", 16384)]
