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

from parity.results import Owner, OwnerKind, Record

VENDORS = (OwnerKind.TRITON, OwnerKind.TRITON_ASCEND)



def make_owner(who: OwnerKind, name: str, evidence: str, *, provisional: bool = False, settle: str | None = None,
               limit: str | None = None, also: Sequence[str] | None = None) -> Owner:
    """The owner, its evidence on one line of at most 400 characters (a caller's plain word is checked)."""
    return Owner(OwnerKind(who), name, " ".join(evidence.split())[:400], provisional, settle, limit,
                 tuple(also or ()))


# the author owner's name where the spec's reference raised: the spec's code, not the kernel, needs the change
SPEC_AUTHOR = "spec author"
# a vendor owner's evidence starts so when a newer release of the same tier passes the case (later_release.fixed_later)
FIXED = "fixed in {fixed}; upgrade"
_FIXED = re.compile(r"^fixed in (\S+); upgrade")
# a vendor owner's evidence starts so when a spec's known divergence links the vendor's report (rules.known_divergence)
LINKED = "a known divergence, linked: {link}"
_LINKED = re.compile(r"^a known divergence, linked: (\S+)")


def as_owner(owner: Owner | Mapping[str, Any] | None) -> Owner | None:
    """The owner as an Owner: a caller's plain mapping (a record not read through parity.results.files, a report's
    stand-in) is read as results.jsonl's object is, a missing name or evidence as empty; None, {} or an owner
    whose `who` is None (undecided) is no owner."""
    if isinstance(owner, Owner):
        return owner
    if not owner or owner.get("who") is None:
        return None
    return Owner.from_json({"name": "", "evidence": "", **owner})


def owner_of(record: Record) -> Owner | None:
    """The owner a record carries, as an Owner (as_owner), or None."""
    return as_owner(record.get("owner"))


def _vendor(owner: Owner | None) -> Owner | None:
    """The owner where it is a vendor's, else None."""
    if owner is not None and not isinstance(owner, Owner):  # a caller's plain mapping, of any owner kind
        owner = as_owner(owner) if owner.get("who") in VENDORS else None
    return owner if owner is not None and owner.who in VENDORS else None


def fixed_in(owner: Owner | None) -> str | None:
    """The release that already fixes a vendor owner's bug, else None."""
    vendor = _vendor(owner)
    found = _FIXED.match(vendor.evidence or "") if vendor is not None else None
    return found.group(1) if found else None


def linked_known(owner: Owner | None) -> str | None:
    """The upstream link of a vendor owner that a spec's known divergence names, else None."""
    vendor = _vendor(owner)
    found = _LINKED.match(vendor.evidence or "") if vendor is not None else None
    return found.group(1) if found else None


def reported_upstream(owner: Owner | None) -> bool:
    """A vendor owner's bug already reported upstream: a limit entry of parity.triage.limits, or a spec's known
    divergence, each with its link."""
    vendor = _vendor(owner)
    return vendor is not None and (bool(vendor.limit) or linked_known(vendor) is not None)


def vendor_note(owner: Owner | None) -> bool:
    """A vendor's bug that gets a note (TIER.md), not a new draft: fixed in a later release, or reported."""
    return bool(fixed_in(owner)) or reported_upstream(owner)
