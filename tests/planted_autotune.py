"""An autotuned kernel with one broken config: the accuracy pass must catch it when pinned there,
and the repro must replay that config (an unpinned run would autotune and might pick the good one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

CONFIGS = [triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit(do_not_specialize=["n"])
def twice_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    limit = n - 1 if BLOCK == 32 else n  # planted: the BLOCK=32 config drops the last element
    tl.store(out + o, 2 * tl.load(x + o, mask=o < limit), mask=o < limit)


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = nan_empty(x.shape, x.dtype, x.device)
    twice_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
    return {"out": out}


@triton.autotune(configs=[triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})],
                 key=["n"])
@triton.jit
def peer_twice_kernel(x, out, n, BLOCK: tl.constexpr):  # a library's own version of the op, autotuned too
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, 2 * tl.load(x + o, mask=o < n), mask=o < n)


def peer_prepare(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> Any:
    x = inputs["x"]
    out = torch.empty_like(x)
    return lambda: peer_twice_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())


twice = KernelSpec(
    name="autotuned_twice", family="planted", kernel=twice_kernel, launch=_launch,
    reference=lambda inputs, p: {"out": 2 * inputs["x"]},
    cases=by_level(product(N=[100], variant=list(range(6)), dtype=["fp32"])),
    make_inputs=lambda p, gen: {"x": randn((p["N"],), p["dtype"], gen)},
    out_dims={"out": ("i",)},
)

SPECS = [twice]
