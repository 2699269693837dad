"""A library-like op outside parity's packages (top-level name `planted_lib`), as if pip-installed.

Its launcher raises in its own helper before any Triton launch, as mojo_opset's launchers do on CUDA: a
helper asks for an NPU-only device property on every target and fails with "TypeError: 'str' object
cannot be interpreted as an integer". It imports no parity, so its repro.py can run without parity.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x, y, n, alpha, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m) * alpha, mask=m)


def num_cores(device: str = "npu") -> int:
    """The planted bug: the device's name where a count belongs."""
    return len(range(device))  # type: ignore[arg-type]


def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    y = torch.empty_like(x)
    grid = (min(num_cores(), triton.cdiv(x.numel(), 256)),)
    scale_kernel[grid](x, y, x.numel(), alpha, BLOCK=256)
    return y


@triton.jit
def debug_kernel(x):
    tl.device_print("x", tl.load(x))  # the leftover-debugging scan's planted finding
