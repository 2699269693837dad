"""The replay provenance every record of a --replay run carries (`replay`: the bundle, the tier that recorded it,
where the kernel came from), stamped before triage reads it: whose recording a value came from decides owners
(parity.triage.inputs, parity.triage.replay_order, parity.triage.evidence.self_replay)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parity.results import Record


def stamp_replay(record: Record, replay: Mapping[str, Any] | None) -> None:
    """Put the run's replay provenance on the record, once (a no-op outside a --replay run)."""
    if replay is not None:
        record.setdefault("replay", dict(replay, kernel_from=(replay.get("kernel_from") or {}).get(record["kernel"])))
