"""The production envelope section of `parity report`: the rows `parity envelope --results-dir DIR` left in DIR.

`parity envelope` writes DIR/envelope.jsonl (parity.results.dirs.ENVELOPE): one JSON row per kernel, target and
axis, each with the UTC time the envelope was taken. A tier's run leaves that file alone (it is no RUN_FILES
name), so the section says when the envelope was taken: it may be older than the records beside it. The report
only reads it; the markdown and the HTML say the same table and sentences (parity.report.envelope_text). A
report whose dirs hold no envelope says so in one line, never an empty table.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import parity.report.envelope_text as text
from parity.report import html as h
from parity.results.dirs import ENVELOPE, ResultsDir

TITLE = "Production envelope (`parity envelope`)"
NOT_RUN = ("Not run: none of these results dirs holds an envelope.jsonl (`parity envelope --results-dir DIR` "
           "writes one: per kernel and target, the largest sizes that still port and the first limit beyond).")


@dataclass(frozen=True)
class Envelope:
    """The envelope one results dir holds: its column label and rows."""

    label: str
    rows: list[dict[str, Any]]

    @property
    def taken(self) -> str:
        """When the envelope was taken (its rows' times; several when rows of several runs were written)."""
        times = sorted({str(r["taken"]) for r in self.rows if r.get("taken")})
        return " to ".join(dict.fromkeys([times[0], times[-1]])) if times else "at an unknown time"


def dumps(rows: Sequence[Mapping[str, Any]], taken: str) -> str:
    """envelope.jsonl's text: one row a line, each stamped with `taken` (UTC, ISO 8601)."""
    return "".join(json.dumps({**row, "taken": taken}) + "\n" for row in rows)


def loads(content: str, where: str) -> list[dict[str, Any]]:
    """The rows of an envelope.jsonl; a line that is no row is a warning naming the file, not a lost report."""
    rows = []
    for n, line in enumerate(content.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            warnings.warn(f"{where}:{n}: skipped, not JSON ({exc})", stacklevel=2)
            continue
        if isinstance(row, dict) and isinstance(row.get("kernel"), str) and row.get("target"):
            rows.append(row)
        else:
            warnings.warn(f"{where}:{n}: skipped, not an envelope row (no kernel and target)", stacklevel=2)
    return rows


def gather(where: Mapping[str, Path]) -> list[Envelope]:
    """The envelope of each results dir (column label -> dir) that holds one, in the columns' order."""
    found = []
    for label, d in where.items():
        path = ResultsDir(d).envelope
        if path.is_file():
            rows = loads(path.read_text(encoding="utf-8", errors="replace"), str(path))
            found.append(Envelope(label, sorted(rows, key=_order)))
    return found


def _order(row: Mapping[str, Any]) -> tuple[str, str, str]:
    return str(row["kernel"]), str(row["target"]), str((row.get("axis") or {}).get("name", ""))


NO_AXIS = "no axis to grow"  # parity.envelope.tier's words for a spec without dynamic_args


def _split(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The rows to show, and one line naming the kernels with no axis to grow (a row each would fill the table)."""
    idle = sorted({str(r["kernel"]) for r in rows if str(r.get("skipped") or "").startswith(NO_AXIS)})
    shown = [r for r in rows if not str(r.get("skipped") or "").startswith(NO_AXIS)]
    line = (f"{len(idle)} kernel(s) have no axis to grow (no dynamic_args; `--grow` names one): "
            f"{', '.join(idle)}." if idle else "")
    return shown, line


def _head(env: Envelope) -> str:
    kernels = len({r["kernel"] for r in env.rows})
    return (f"{ENVELOPE} of {env.label}: {kernels} kernel(s), {len(env.rows)} row(s), taken {env.taken} "
            "(compile-only: meta tensors, no memory; a tier's later run does not renew it).")


def markdown(found: Sequence[Envelope]) -> str:
    """The section for DIVERGENCE.md: per results dir, the table and one sentence per row."""
    parts = [f"## {TITLE}", ""]
    if not found:
        return "\n".join([*parts, NOT_RUN, ""])
    for env in found:
        rows, idle = _split(env.rows)
        parts += [_head(env), "", text.table(rows), "", *(f"- {text.said(r)}" for r in rows), ""]
        parts += [idle, ""] if idle else []
    return "\n".join(parts)


def html(found: Sequence[Envelope]) -> str:
    """The same section for index.html."""
    parts = [f"<h2>{h.esc(TITLE)}</h2>"]
    if not found:
        return "\n".join([*parts, f'<p class="note">{h.esc(NOT_RUN)}</p>'])
    for env in found:
        rows, idle = _split(env.rows)
        parts += [f"<p>{h.esc(_head(env))}</p>",
                  h.table(text.HEADERS, [[h.esc(c) for c in text.cells(r)] for r in rows], classes="sortable"),
                  "<ul>", *(f"<li>{h.esc(text.said(r))}</li>" for r in rows), "</ul>"]
        parts += [f'<p class="note">{h.esc(idle)}</p>'] if idle else []
    return "\n".join(parts)
