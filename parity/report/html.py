"""HTML pieces for reports/index.html: escaping, tables, expandable sections. Pure functions, strings in and out.

Every piece of compiler, kernel or user text goes through `esc` (the standard library's html.escape, quotes
included), so a kernel named `<script>` is shown, never run. Links are relative paths only: the page fetches
nothing from the network.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from urllib.parse import quote


def esc(value: object) -> str:
    """Text safe inside an element or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def href(path: str) -> str:
    """A relative link, percent-encoded (case ids hold `=`, `,` and `<`); a scheme or an absolute path is
    refused, so the page never points at the network or at the machine that wrote it."""
    if "://" in path or path.startswith(("/", "\\")) or ":" in path.split("/")[0]:
        raise ValueError(f"index.html links only relative paths, got {path!r}")
    return esc(quote(path, safe="/.-_~"))


def link(path: str, text: str) -> str:
    return f'<a href="{href(path)}">{esc(text)}</a>'


def attrs(values: Mapping[str, str]) -> str:
    """` k="v"` pairs, escaped, in the given order."""
    return "".join(f' {esc(k)}="{esc(v)}"' for k, v in values.items())


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], row_attrs: Sequence[Mapping[str, str]] = (),
          table_id: str = "", classes: str = "") -> str:
    """A table whose cells are already HTML (escape text with `esc` first); headers are text. Each header is a
    button-like cell the page's script sorts by (`data-col`)."""
    head = "".join(f'<th data-col="{i}" tabindex="0">{esc(h)}</th>' for i, h in enumerate(headers))
    body = []
    for i, row in enumerate(rows):
        extra = attrs(row_attrs[i]) if i < len(row_attrs) else ""
        body.append(f"<tr{extra}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    ident = (f' id="{esc(table_id)}"' if table_id else "") + (f' class="{esc(classes)}"' if classes else "")
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(body) + "\n</tbody></table>"


def select(name: str, label: str, options: Sequence[str]) -> str:
    """A filter: `data-filter` names the row attribute it matches; the empty option shows every row."""
    opts = "".join(f'<option value="{esc(o)}">{esc(o)}</option>' for o in options)
    return (f'<label>{esc(label)} <select data-filter="{esc(name)}"><option value="">all</option>{opts}'
            "</select></label>")


def details(summary: str, body: str, ident: str = "") -> str:
    """An expandable section: `summary` and `body` are HTML."""
    anchor = f' id="{esc(ident)}"' if ident else ""
    return f"<details{anchor}><summary>{summary}</summary>\n{body}\n</details>"


def pre(text: str) -> str:
    return f"<pre>{esc(text)}</pre>"


def code(text: str) -> str:
    return f"<code>{esc(text)}</code>"


def dl(items: Sequence[tuple[str, str]]) -> str:
    """A definition list of (term, HTML) pairs, the empty ones left out."""
    rows = "".join(f"<dt>{esc(term)}</dt><dd>{value}</dd>" for term, value in items if value)
    return f"<dl>{rows}</dl>" if rows else ""


def page(title: str, style: str, script: str, body: str) -> str:
    """One self-contained document: the style and the script inline, nothing loaded from elsewhere."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"<style>{style}</style></head>\n<body>\n{body}\n<script>{script}</script>\n</body></html>\n")
