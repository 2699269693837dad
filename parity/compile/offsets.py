"""The width of a kernel's pointer offsets, read from the TTIR of its compiled kernel.

`tt.addptr %ptr, %offset : <pointer type>, <offset type>`: Triton adds offsets in the type the kernel computed
them in, i32 unless an operand was int64 (a cast, an int64 argument). triton-ascend requires i32 offsets.

The compile tiers read it from the CompiledKernel that Triton's compile returns: a disk-cache hit returns one
too, with the TTIR it stored, so the answer never depends on whether this machine compiled the kernel before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_ADDPTR = re.compile(r"tt\.addptr\s+%[\w#]+,\s*%[\w#]+\s*:\s*[^\n]*?,\s*(?:tensor<[^>]*?x)?(i\d+)>?")


def offset_width(text: str | None) -> str | None:
    """"i32", "i64" or "mixed" over every tt.addptr of one TTIR; None when it adds no offset to a pointer."""
    widths = set(_ADDPTR.findall(text or ""))
    if not widths:
        return None
    return widths.pop() if len(widths) == 1 else "mixed"


def of_kernel(kernel: Any) -> str | None:
    """offset_width of a CompiledKernel's TTIR; None when it kept none."""
    asm = getattr(kernel, "asm", None) or {}
    text = asm.get("ttir") if isinstance(asm, dict) else None
    return offset_width(text if isinstance(text, str) else None)


def widest(widths: Iterable[str | None]) -> str | None:
    """One answer over several compiles: "i32" only when every pointer offset of every one is i32."""
    seen = {w for w in widths if w}
    if not seen:
        return None
    return seen.pop() if len(seen) == 1 else "mixed"
