"""One Finding per failing record: whose it is, which draft its repro folder gets, the trackers a vendor draft goes
to, its title, the owner in words and the evidence lines. parity.triage.drafts.finding_of computes it once from the
owner triage decided; ISSUE.md, AUTHOR.md, TIER.md, REPORT.md, DIVERGENCE.md and index.html render it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from parity.findings.tracker import Tracker
from parity.results import Owner


class Draft(str, Enum):
    """What a failing case's folder gets beside its repro (str-valued: each equals its word)."""

    VENDOR = "vendor"  # ISSUE.md to the compiler's tracker, ISSUE-<owner>.md to each further one
    LIBRARY = "library"  # ISSUE.md to the library's tracker
    AUTHOR = "author"  # AUTHOR.md: the kernel's (or the spec's) to change
    TIER = "tier"  # TIER.md: a note, never a bug report
    BUNDLE = "bundle"  # BUNDLE.md: the replay bundle is damaged, re-record it
    NONE = "none"  # nothing beyond the repro

    def __str__(self) -> str:
        return str(self.value)


def draft_file(draft: Draft) -> str:
    return "ISSUE.md" if draft in (Draft.VENDOR, Draft.LIBRARY) else f"{draft.value.upper()}.md"


@dataclass(frozen=True)
class Finding:
    """What one failing record asks of whom."""

    owner: Owner | None  # as triage decided it (None: no verdict)
    draft: Draft  # the draft its repro folder gets
    trackers: tuple[Tracker, ...] = ()  # a vendor draft's trackers, the primary first
    note: Draft | None = None  # the note a case whose input failed before the kernel was judged gets instead
    title: str = ""  # what failed, in a draft title's words: the error's key line, clipped
    words: str = ""  # the owner in a report row's words
    evidence: tuple[str, ...] = ()  # why it is the vendor's, as its draft says it
    why: str = ""  # AUTHOR.md's reason, from the owner's evidence
    fit: tuple[str, ...] = ()  # the fit advisor's lines its draft carries (parity.fit.words), for an overflow

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
