"""One repro per kernel and named limit in a results dir.

A case that a named limit explains (parity.triage.limits: an API upstream removed, a language rule, a
tier's own gap) fails for that limit's documented reason whatever its shape: at triton 3.9 every case of a
block-pointer kernel raises the same NotImplementedError. The first such case of a kernel gets the full
repro (shrink, capture, the fresh-process check); the others link that folder and say so in `repro_note`
and `repro_of`, rather than paying seconds each for a copy of it. A failure no limit explains keeps a
repro of its own: its cause may depend on the shape.

The marks live in the results dir (repros/.by-limit/), so every xdist worker of the run sees them, and a
mark counts only while the folder it names still exists (a repro the check dropped is not linked).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from parity.results import Record
from parity.results import dirs as rd
from parity.results.outputs_store import case_filename
from parity.triage.drafts import owner_in

MARKS = Path(rd.REPROS) / ".by-limit"
SHARED_STATUSES = ("failed", "error")


def limit_of(record: Record) -> str | None:
    """The named limit that owns this failure, or None where none does (or the case did not fail)."""
    if record.get("status") not in SHARED_STATUSES:
        return None
    owner = owner_in(record)
    return str(owner.limit) if owner is not None and owner.limit else None


def _mark(results_dir: Path, kernel: str, limit: str) -> Path:
    return results_dir / MARKS / f"{case_filename(kernel, limit)}.json"


def link(record: Record, results_dir: Path) -> bool:
    """Point the record at the repro an earlier case of its kernel got for the same limit; False where none
    exists yet (the caller writes one)."""
    limit = limit_of(record)
    if limit is None:
        return False
    try:
        mark = json.loads(_mark(results_dir, str(record["kernel"]), limit).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(mark, dict) or not (results_dir / str(mark.get("repro"))).is_dir():
        return False
    record["repro"] = mark["repro"]
    record["repro_of"] = {"case": mark["case"], "limit": limit}
    record["repro_note"] = (f"the repro of case {mark['case']}: the same kernel fails there for the same limit "
                            f"({limit}), which holds whatever the shape, so one repro per kernel and limit is kept")
    return True


def remember(record: Record, results_dir: Path) -> None:
    """After a repro was written and kept: the later cases of this kernel and limit link it."""
    limit = limit_of(record)
    if limit is None or not record.get("repro") or record.get("repro_of"):
        return
    path = _mark(results_dir, str(record["kernel"]), limit)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")  # two workers may race: each rename is whole
    tmp.write_text(json.dumps({"case": record["case"], "repro": record["repro"]}), encoding="utf-8")
    os.replace(tmp, path)
