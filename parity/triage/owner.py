"""The owner as a typed value, and how it reads: the rules over a decided `record["owner"]` that the drafts
and the report ask.

Every owner rule lives in parity.triage; the repro stage and the report only read `record["owner"]` and ask
these predicates, never restate them. In the run's memory the owner is an `Owner`; results.jsonl holds its
`as_json()` (parity.results.files serialises it), which reads the same way (a Mapping of the same keys).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from parity.results import OwnerKind

VENDORS = (OwnerKind.TRITON, OwnerKind.TRITON_ASCEND)


@dataclass(frozen=True, eq=False)
class Owner(Mapping[str, Any]):
    """Who must act on a failing case, and on what evidence. Reads as the Mapping results.jsonl holds
    (`owner["who"]`, `owner.get("limit")`), so a reader never asks which of the two it has."""

    who: OwnerKind
    name: str  # e.g. "FlagGems", "Triton interpreter", "ascend-lowered host toolchain"
    evidence: str  # one line
    provisional: bool = False
    settle: str | None = None  # the run that would settle a provisional owner
    limit: str | None = None  # the tier-limit id (parity.triage.limits)
    also: tuple[str, ...] = ()  # other trackers that must get a draft (usually none)

    def __post_init__(self) -> None:
        object.__setattr__(self, "who", OwnerKind(self.who))  # a plain word is checked: ValueError names it
        object.__setattr__(self, "also", tuple(self.also))

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "who": self.who.value, "also": list(self.also)}

    def __getitem__(self, key: str) -> Any:
        if key not in self._names():
            raise KeyError(key)
        return list(self.also) if key == "also" else getattr(self, key)  # as results.jsonl reads

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))
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
