"""Markdown cells and GFM tables, shared by every report and ISSUE.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabulate import tabulate


def md_escape(value: Any, limit: int = 160) -> str:
    """Make compiler or user text safe inside a GFM table cell."""
    text = "" if value is None else str(value)
    text = " ".join(text.split())  # newlines would end the row
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    for ch in ("\\", "|", "`", "*", "_", "<", ">", "[", "]"):
        text = text.replace(ch, "\\" + ch)
    return text


def md_code(value: Any, limit: int = 160) -> str:
    """Text as a code span inside a GFM table cell: a code span shows backslash escapes literally, so only
    the pipe (which GFM reads before the span) is escaped and backticks are dropped."""
    text = " ".join(str(value or "").replace("`", "'").split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text.replace('|', chr(92) + '|')}`" if text else ""


def fmt_num(value: Any, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    return str(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))
