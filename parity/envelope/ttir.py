"""The width of a kernel's pointer offsets, read from the TTIR its compile left in the tier's Triton cache.

`tt.addptr %ptr, %offset : <pointer type>, <offset type>`: Triton adds offsets in the type the kernel computed
them in, i32 unless an operand was int64 (a cast, an int64 argument). triton-ascend requires i32 offsets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

_ADDPTR = re.compile(r"tt\.addptr\s+%[\w#]+,\s*%[\w#]+\s*:\s*[^\n]*?,\s*(?:tensor<[^>]*?x)?(i\d+)>?")


def offset_width(text: str) -> str | None:
    """"i32", "i64" or "mixed" over every tt.addptr of one TTIR; None when it adds no offset to a pointer."""
    widths = set(_ADDPTR.findall(text))
    if not widths:
        return None
    return widths.pop() if len(widths) == 1 else "mixed"


def kernel_ttirs(cache_dir: Path, kernels: Iterable[str], newer_than: float = 0.0) -> list[str]:
    """The TTIR texts the cache holds for these kernel names (every specialization compiled so far), written after
    `newer_than` (the kernels' source files' last change: an entry from before an edit is another kernel)."""
    texts = []
    for name in kernels:
        for path in sorted(cache_dir.glob(f"*/{name}.ttir")):
            if path.stat().st_mtime < newer_than:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if f"@{name}(" in text:
                texts.append(text)
    return texts


def widest(texts: Iterable[str]) -> str | None:
    """One answer over several TTIRs: "i32" only when every pointer offset of every one is i32."""
    widths = {w for w in (offset_width(t) for t in texts) if w}
    if not widths:
        return None
    return widths.pop() if len(widths) == 1 else "mixed"
