"""The owner as a typed value, and how it reads: the rules over a decided `record["owner"]` that the drafts
and the report ask.

Every owner rule lives in parity.triage; the repro stage and the report only read `record["owner"]` and ask
these predicates, never restate them. The owner is a `parity.results.Owner` in memory and in every record read back
(parity.results.files builds it from results.jsonl's object); `make_owner` cuts its evidence to one line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from parity.results import Owner, OwnerKind

VENDORS = (OwnerKind.TRITON, OwnerKind.TRITON_ASCEND)


# the author owner's name where the spec's reference raised: the spec's code, not the kernel, needs the change
def make_owner(who: str, name: str, evidence: str, *, provisional: bool = False, settle: str | None = None,
               limit: str | None = None, also: Sequence[str] | None = None) -> Owner:
    """The owner, its evidence on one line of at most 400 characters."""
    return Owner(OwnerKind(who), name, " ".join(evidence.split())[:400], provisional, settle, limit,
                 tuple(also or ()))


SPEC_AUTHOR = "spec author"
# a vendor owner's evidence starts so when a newer release of the same tier passes the case (later_release.fixed_later)
FIXED = "fixed in {fixed}; upgrade"
_FIXED = re.compile(r"^fixed in (\S+); upgrade")
# a vendor owner's evidence starts so when a spec's known divergence links the vendor's report (decide)
LINKED = "a known divergence, linked: {link}"
_LINKED = re.compile(r"^a known divergence, linked: (\S+)")


def fixed_in(owner: Mapping[str, Any] | None) -> str | None:
    """The release that already fixes a vendor owner's bug, else None."""
    found = _FIXED.match(str((owner or {}).get("evidence") or ""))
    return found.group(1) if found and (owner or {}).get("who") in VENDORS else None


def linked_known(owner: Mapping[str, Any] | None) -> str | None:
    """The upstream link of a vendor owner that a spec's known divergence names, else None."""
    found = _LINKED.match(str((owner or {}).get("evidence") or ""))
    return found.group(1) if found and (owner or {}).get("who") in VENDORS else None


def reported_upstream(owner: Mapping[str, Any] | None) -> bool:
    """A vendor owner's bug already reported upstream: a limit entry of parity.triage.limits, or a spec's known
    divergence, each with its link."""
    if (owner or {}).get("who") not in VENDORS:
        return False
    return bool((owner or {}).get("limit")) or linked_known(owner) is not None


def vendor_note(owner: Mapping[str, Any] | None) -> bool:
    """A vendor's bug that gets a note (TIER.md), not a new draft: fixed in a later release, or reported."""
    return bool(fixed_in(owner)) or reported_upstream(owner)
