"""A vendor verdict that a newer release of the same tier already answers: "fixed in <release>; upgrade"."""

from __future__ import annotations

from collections.abc import Mapping

from parity.reasons import key_line
from parity.results import Owner, OwnerKind, Record
from parity.seams.versions import version_key
from parity.triage.evidence import PASSING
from parity.triage.limit_fits import failure_text
from parity.triage.owner import FIXED, make_owner


def fixed_later(record: Record, verdict: Owner, version: str | None, versions: Mapping[str, Record]) -> Owner | None:
    """The vendor verdict restated as fixed, when a newer release of the same tier passes the same case
    (the oldest such release); None when none does (the newest fails too: still a live bug to report)."""
    if not version:
        return None
    passing = [v for v, r in versions.items() if r.get("status") in PASSING]
    newer = sorted((v for v in passing if version_key(v) > version_key(version)), key=version_key)
    if not newer:
        return None
    tier, fixed = str(record.get("backend")), newer[0]
    name = "triton-ascend" if verdict.who is OwnerKind.TRITON_ASCEND else "Triton"
    return make_owner(verdict.who, verdict.name,
                      f"{FIXED.format(fixed=fixed)}: {tier} with {name} {version} fails "
                      f"({key_line(failure_text(record))[:160]}); the same case passes with {name} {fixed}")
