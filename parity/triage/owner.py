"""How an owner reads: the rules over a decided `record["owner"]` that the drafts and the report ask.

Every owner rule lives in parity.triage; the repro stage and the report only read `record["owner"]` and ask
these predicates, never restate them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

VENDORS = ("triton", "triton-ascend")
# a vendor owner's evidence starts so when a newer release of the same tier passes the case (decide.fixed_later)
FIXED = "fixed in {fixed}; upgrade"
_FIXED = re.compile(r"^fixed in (\S+); upgrade")


def fixed_in(owner: Mapping[str, Any] | None) -> str | None:
    """The release that already fixes a vendor owner's bug, else None."""
    found = _FIXED.match(str((owner or {}).get("evidence") or ""))
    return found.group(1) if found and (owner or {}).get("who") in VENDORS else None


def reported_upstream(owner: Mapping[str, Any] | None) -> bool:
    """A vendor owner's bug already reported upstream (a limit entry of parity.triage.limits with its link)."""
    return bool((owner or {}).get("limit")) and (owner or {}).get("who") in VENDORS


def vendor_note(owner: Mapping[str, Any] | None) -> bool:
    """A vendor's bug that gets a note (TIER.md), not a new draft: fixed in a later release, or reported."""
    return bool(fixed_in(owner)) or reported_upstream(owner)
