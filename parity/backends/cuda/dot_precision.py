"""The precision each fp32 tl.dot compiles with, read from the TTIR a cuda-compile compile already holds.

Upstream Triton's tl.dot defaults to input_precision="tf32" on NVIDIA: the TTIR prints `inputPrecision = tf32` on a
`tt.dot` whose operands are f32 (ieee prints no attribute; tf32x3 prints its name). triton-ascend computes the same
dot in ieee (or hf32 when asked), so the two targets differ by TF32's rounding by design. Pure over the TTIR text.
"""

from __future__ import annotations

import re
from typing import Any

# `%c = tt.dot %a, %b, %acc, inputPrecision = tf32 : tensor<16x32xf32> * tensor<32x16xf32> -> tensor<16x16xf32>`
_DOT = re.compile(r"tt\.dot\s[^:\n]*?(?:inputPrecision\s*=\s*(\w+)\s*)?:\s*tensor<([0-9x]+)xf32>\s*\*\s*"
                  r"tensor<[0-9x]+xf32>")


def tf32_dots(ttir: str | None) -> dict[str, Any] | None:
    """{"tf32": fp32 dots compiled as TF32, "fp32_dots": every fp32 dot, "block_k": their tiles' K, "line": the
    first TF32 one}; None where the TTIR has no fp32 dot."""
    dots = [(m.group(1) or "ieee", m.group(2), m.group(0)) for m in _DOT.finditer(ttir or "")]
    if not dots:
        return None
    tf32 = [(shape, line) for precision, shape, line in dots if precision == "tf32"]
    return {"tf32": len(tf32), "fp32_dots": len(dots),
            "block_k": sorted({int(shape.split("x")[-1]) for shape, _ in tf32}),
            "line": " ".join(tf32[0][1].split())[:200] if tf32 else None}
