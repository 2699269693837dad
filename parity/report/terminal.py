"""The terminal summary at the end of a run: the verdict, the counts, and the run-level notes, once."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from parity.report.backend_md import terminal_summary
from parity.report.notes import block_ptr_note
from parity.results import Record
from parity.results import dirs as rd


def read_env(results_dir: Path, backend: str) -> dict[str, Any]:
    """env.json beside REPORT.md (it names the arch the verdict speaks of); the backend alone without it."""
    try:
        env = json.loads((results_dir / rd.ENV).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"backend": backend}
    return env if isinstance(env, dict) else {"backend": backend}


def text(records: Sequence[Record], results_dir: Path, backend: str, specs: Iterable[Any]) -> str:
    note = block_ptr_note(specs)
    note = textwrap.fill(note, 100, break_long_words=False, break_on_hyphens=False) if note else None
    return terminal_summary(records, read_env(results_dir, backend)) + (f"\n{note}" if note else "")
