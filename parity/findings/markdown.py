"""Markdown cells, GFM tables and clipped text, shared by every draft and report."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from parity.reasons import key_line


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


# a cut that ends at an exception's name keeps its name and loses its text
_NAMES_ONLY = re.compile(r"\b\w*(?:Error|Exception)$")


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut after a sentence (or a clause, or a word), never mid-word."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    for stop in (". ", "; ", " / ", ": ", ", ", " ", ","):  # "," last: between a case id's parameters
        cut = head.rfind(stop)
        kept = head[: cut + (1 if stop.strip() in (".", ";") else 0)].rstrip(" ,:")
        if cut > limit // 3 and not _NAMES_ONLY.search(kept):  # "raised TypeError …" would drop what it says
            return kept + " …"
    return head + "…"


def title_text(text: str | None, limit: int = 90) -> str:
    """What a draft's title says of an error: its key line (the compiler's own verdict, never a bare "[Pass]
    encounters error:" when more follows), cut at a word."""
    text = str(text or "")
    key = key_line(text) or next((line for line in text.splitlines() if line.strip()), "")
    return clip(key, limit) or "an error"
