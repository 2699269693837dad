"""One Finding per failing record: whose it is, which draft its repro folder gets, the tracker a vendor draft goes
to, the owner in words and the evidence lines. Computed once (`finding_of`) from the owner triage decided; ISSUE.md,
AUTHOR.md, TIER.md, REPORT.md, DIVERGENCE.md and index.html render it and never restate a rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from parity.backends import backend_class, registered
from parity.backends.trackers import Tracker
from parity.results import Owner, OwnerKind, Record
from parity.triage import drafts
from parity.triage.drafts import Draft
from parity.triage.owner import SPEC_AUTHOR, fixed_in
from parity.triage.precision import LIMIT as PRECISION_LIMIT

# the owner in a report row's words, for the owners that are no compiler's (a compiler's: its tracker's name)
OWNER_WORDS = {
    OwnerKind.AUTHOR: "needs a change in the kernel",
    OwnerKind.LIBRARY: "{name} finding",
    OwnerKind.TIER: "limit of this tier ({name}), not the kernel's",
    OwnerKind.ENVIRONMENT: "environment ({name}), not the kernel's",
    OwnerKind.TOLERANCE: "tolerance tighter than a correct kernel's rounding, not the kernel's",
    OwnerKind.RANDOM: "a different random stream, by design: not a bug, not the kernel's",
    OwnerKind.BUNDLE: "damaged replay bundle, not the kernel's: re-record it",
}
SPEC_WORDS = "needs a change in the spec's reference, not the kernel"  # the author owner named SPEC_AUTHOR
# the author owner of a TF32 dot (the limit cuda-tf32-dot): a choice the kernel makes, not a fault in it
PRECISION_WORDS = "precision mode the kernel chose (fp32 dots as TF32 on NVIDIA)"


@dataclass(frozen=True)
class Finding:
    """What one failing record asks of whom."""

    owner: Owner | None  # as triage decided it (None: no verdict)
    draft: Draft  # the draft its repro folder gets (parity.triage.drafts.plan_drafts)
    trackers: tuple[Tracker, ...] = ()  # a vendor draft's trackers, the primary first
    note: Draft | None = None  # a note written instead of any repro: its input failed before the kernel was judged
    words: str = ""  # the owner in a report row's words
    evidence: tuple[str, ...] = ()  # why it is the owner's, as a vendor draft says it

    @property
    def files(self) -> tuple[str, ...]:
        """The draft files its repro folder gets."""
        if self.draft is Draft.VENDOR:
            return ("ISSUE.md", *(f"ISSUE-{t.owner.value}.md" for t in self.trackers[1:]))
        return () if self.draft is Draft.NONE else (draft_file(self.draft),)

    @property
    def link(self) -> str | None:
        """The one draft a report row links: the note where there is one, else the first draft."""
        return draft_file(self.note) if self.note else next(iter(self.files), None)


def draft_file(draft: Draft) -> str:
    return "ISSUE.md" if draft in (Draft.VENDOR, Draft.LIBRARY) else f"{draft.value.upper()}.md"


def tracker_for(who: OwnerKind, tier: str | None = None) -> Tracker | None:
    """The tracker a draft for `who` goes to from `tier`: its family's own, else the one its family builds on,
    else the first registered tier's that takes `who`'s bugs."""
    found = backend_class(tier).tracker.for_owner(who) if tier else None
    return found or next((cls.tracker for cls in registered() if cls.tracker.owner is who), None)


def library_finding(record: Record | Mapping[str, Any]) -> dict[str, Any] | None:
    """The library's finding a draft goes to: today's library rule's (`finding_of`), or the record's library
    where the cross-tier evidence made the library its owner."""
    found = record.get("finding_of")
    if found:
        return dict(found)
    owner, lib = drafts.owner_in(record), record.get("library") or {}
    if owner is None or owner.who is not OwnerKind.LIBRARY or not lib:
        return None
    return {**lib, "why": owner.evidence}


def owner_of(record: Record | Mapping[str, Any]) -> dict[str, Any]:
    """The record's owner (parity.triage's `owner` field) as a mapping; without one, what parity.triage.library_rule
    and the record say today: the library's finding, a diagnosed kernel mistake, else undecided."""
    owner = record.get("owner")
    if owner:
        return dict(owner)
    lib = record.get("finding_of")
    if lib:
        return {"who": OwnerKind.LIBRARY, "name": lib.get("name", "the library"), "evidence": lib.get("why", ""),
                "provisional": False, "settle": None}
    diagnosis = record.get("diagnosis")
    if diagnosis:
        return {"who": OwnerKind.AUTHOR, "name": "kernel author", "evidence": diagnosis.get("what", ""),
                "provisional": False, "settle": None, "line": diagnosis.get("line")}
    return {"who": None, "name": "", "evidence": "", "provisional": True, "settle": None}


def owner_words(owner: Mapping[str, Any], tier: str | None = None) -> str:
    """The owner in a report row's words (a compiler's bug named after the tracker it goes to from `tier`)."""
    who = owner.get("who")
    if who is None:
        return "owner undecided"
    kind = OwnerKind(who)
    tracker = tracker_for(kind, tier) if kind not in OWNER_WORDS else None
    words = SPEC_WORDS if owner.get("name") == SPEC_AUTHOR else PRECISION_WORDS if owner.get("limit") == \
        PRECISION_LIMIT else f"{tracker.name} bug" if tracker else OWNER_WORDS.get(kind, str(kind)).format(
            name=owner.get("name") or kind)
    if fixed_in(owner):
        words += f", fixed in {fixed_in(owner)}; upgrade"
    if owner.get("line"):
        words += f", {owner['line']}"
    if owner.get("also"):
        words += f" (drafts also for {', '.join(owner['also'])})"
    if owner.get("provisional"):
        words += " (provisional" + (f"; settled by {owner['settle']}" if owner.get("settle") else "") + ")"
    return words


def evidence_lines(owner: Owner | None) -> tuple[str, ...]:
    """Why a vendor draft's tracker: the owner's evidence across tiers (parity.triage), one line."""
    return (f"**Why it is {owner.name}'s:** {owner.evidence}", "") if owner is not None and owner.evidence else ()


def finding_of(record: Record | Mapping[str, Any]) -> Finding:
    """The record's Finding: its draft as its owner calls for, to which trackers, in which words."""
    typed = drafts.owner_in(record)
    plan = drafts.plan_drafts(record)
    tier = str(record.get("backend") or "") or None
    if plan.kind is Draft.VENDOR:
        found = (tracker_for(who, tier) for who in plan.trackers)
        draft, trackers = Draft.VENDOR, tuple(t for t in found if t is not None)
    elif plan.kind is Draft.LIBRARY and library_finding(record) is None:  # no library to address: the author's
        draft, trackers = Draft.AUTHOR, ()
    else:
        draft, trackers = plan.kind, ()
    return Finding(typed, draft, trackers, drafts.input_note_kind(record), owner_words(owner_of(record), tier),
                   evidence_lines(typed))
