"""The compiler's own key line in a long message: its `error:` text, not type dumps, warnings or arrays.

MLIR pass pipelines print the failing op with its full type signature, `linalg.yield` remarks and
notes around the one line that says what is wrong ("error: expected offsets to be non-negative, but got
-16"); a numpy comparison prints whole arrays. A reason keeps that line first.
"""

from __future__ import annotations

import re

_ERROR = re.compile(r"(?:^|\s)error:\s*(.+)", re.IGNORECASE)
_NOISE = re.compile(r"linalg\.yield|^\s*(?:note|warning|remark):|^\s*%[\w#]+ = |^\s*\^bb|^\s*[\[\]\d.,eE+\-\s]+$|"
                    r"^\s*(?:array|tensor)\(|tensor<[^>]*>.*tensor<[^>]*>.*tensor<", re.IGNORECASE)
_EXC = re.compile(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception))(?::\s*|\(\s*['\"]?)(\S.*?)(?:['\"]?\))?$")


def key_line(text: str) -> str:
    """The line that says what is wrong: the first `error:` message that is not a type dump, else the last
    exception line, else the first line that is not noise."""
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    for line in lines:
        found = _ERROR.search(line)
        if found and not _NOISE.search(found.group(1)):
            return found.group(1).strip()
    for line in reversed(lines):
        found = _EXC.match(line)
        if found and not _NOISE.search(line):
            return f"{found.group(1)}: {found.group(2).strip()}"
    clean = [line for line in lines if not _NOISE.search(line)]
    return (clean or lines or [""])[0]


def with_key_line(reason: str | None, limit: int = 600) -> str | None:
    """The reason led by its key line (when that line is not already its start), cut to `limit`."""
    if not reason:
        return reason
    key = key_line(reason)
    if not key or reason.lstrip().startswith(key) or key in reason[:200]:
        return reason
    return f"{key} — {reason}"[: limit + len(key) + 3]
