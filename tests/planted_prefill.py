"""A library-like op that allocates its own output and leaves its tail unwritten (the prefill control)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from parity import KernelSpec
from parity.cases import by_level, product

TAIL = 3  # elements the planted bug never writes


@triton.jit
def relu_short_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n - 3  # the planted bug: the last three elements are never stored
    tl.store(y + o, tl.maximum(tl.load(x + o, mask=m), 0.0), mask=m)


def relu_short(x: torch.Tensor) -> torch.Tensor:
    """As a library launcher does: its own torch.empty_like output, no harness buffer."""
    y = torch.empty_like(x)
    relu_short_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y


def _inputs(p, gen: torch.Generator) -> dict[str, torch.Tensor]:
    x = torch.randn(p["N"], generator=gen)
    x[-TAIL:] = -x[-TAIL:].abs() - 1  # the true tail is 0, which zeroed memory would match by luck
    return {"x": x}


relu_own_output = KernelSpec(
    name="relu_own_output", family="controls", kernel=relu_short_kernel,
    launch=lambda i, p: {"y": relu_short(i["x"])},
    reference=lambda i, p: {"y": torch.relu(i["x"])},
    cases=by_level(product(N=[1000])), make_inputs=_inputs)
