"""Which drafts a failing case's repro folder gets, from its owner; and TIER.md, the tier-limit note.

- the library: ISSUE.md to the library's tracker;
- Triton or triton-ascend with evidence that its tool is the odd one out: ISSUE.md to it, and a second
  draft ISSUE-<owner>.md only for an owner named in `owner.also`;
- the author, or an owner that is still provisional: AUTHOR.md (the provisional one says whose it most
  likely is and which run settles it);
- the tier or the environment: TIER.md, a note, never a vendor draft;
- a vendor bug that a newer release already fixes: TIER.md too, saying which release to upgrade to;
- a vendor bug already reported upstream (a limit entry, or a spec's known divergence linking it): TIER.md with
  the link, never a draft inviting a new report;
- bad input, before the kernel was judged (`input_note`): the spec's reference raised (AUTHOR.md to the spec's
  author, saying so) or a replay bundle is damaged (BUNDLE.md: re-record it); no repro of the kernel, no draft.

`finding_of` computes a failing record's Finding once (parity.findings.finding): these drafts, the trackers a vendor
draft goes to, the owner in words; the repro's drafts and the reports render it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from parity.backends import backend_class, registered
from parity.compile.tools import trim_message
from parity.findings.finding import Draft, Finding
from parity.findings.markdown import title_text
from parity.findings.tracker import Tracker
from parity.fit.words import author_lines, issue_paragraph
from parity.results import Owner, OwnerKind, Record, Status
from parity.triage.limits import LIMITS
from parity.triage.owner import SPEC_AUTHOR, VENDORS, fixed_in, linked_known, reported_upstream, vendor_note
from parity.triage.precision import LIMIT as PRECISION_LIMIT

# owners whose failure is nobody's code: a note ("tolerance": the values lie within rounding; "random": a stream that
# differs by design)
NOTE_OWNERS = (OwnerKind.TIER, OwnerKind.ENVIRONMENT, OwnerKind.TOLERANCE, OwnerKind.RANDOM)
INPUT_KINDS = ("inputs",)  # the error_kind of a spec's make_inputs that raised (else its reference did)


@dataclass(frozen=True)
class DraftPlan:
    kind: Draft
    trackers: list[OwnerKind] = field(default_factory=list)  # vendor: the owners whose trackers get one, primary first


def owner_in(record: Record | Mapping[str, Any]) -> Owner | None:
    """The record's owner, typed (a mapping from an older caller is converted, a key it lacks read as before: a
    missing name as "None", missing evidence as none)."""
    owner = record.get("owner")
    if isinstance(owner, Owner) or not owner:
        return owner or None
    return Owner(OwnerKind(owner["who"]), str(owner.get("name")), str(owner.get("evidence") or ""),
                 bool(owner.get("provisional")), owner.get("settle"), owner.get("limit"),
                 tuple(owner.get("also") or ()))


def plan_drafts(record: Record | Mapping[str, Any]) -> DraftPlan:
    known = record.get("known_divergence") or {}
    if record.get("status") == Status.XFAILED and known.get("expected_by"):  # a plain word from an engine record too
        return DraftPlan(Draft.NONE)  # the kernel's own author documents the case: they know; its repro is enough
    owner = owner_in(record)
    if owner is None:  # no verdict (triage raised, or a caller that never asked): only today's library rule drafts
        return DraftPlan(Draft.LIBRARY if record.get("finding_of") else Draft.NONE)
    if owner.who is OwnerKind.LIBRARY:
        return DraftPlan(Draft.LIBRARY)
    if owner.who in NOTE_OWNERS or vendor_note(owner):  # or fixed in a later release, or already reported: a note
        return DraftPlan(Draft.TIER)
    if owner.who in VENDORS and not owner.provisional:
        also = [OwnerKind(t) for t in owner.also if t in VENDORS and t != owner.who]
        return DraftPlan(Draft.VENDOR, [owner.who, *also])
    return DraftPlan(Draft.AUTHOR)


def author_why(record: Record | Mapping[str, Any]) -> str:
    """AUTHOR.md's one-line reason, from the owner's evidence."""
    owner = owner_in(record)
    if owner is None:
        return "the failure is the kernel's own"
    if owner.who not in (OwnerKind.AUTHOR, OwnerKind.LIBRARY) and owner.provisional:
        return (f"parity cannot yet tell whose failure this is; the most likely owner is {owner.name} "
                f"({owner.evidence}). Before filing anything upstream, settle it: run {owner.settle}")
    why = str(owner.evidence or "the failure is the kernel's own")
    if owner.provisional:
        why += f" (provisional: run {owner.settle} to settle it)"
    return why


def retired_by(limit_id: str) -> str:
    """How a limit entry stops matching, as the entry has it: only one with a probe retires itself."""
    entry = next((limit for limit in LIMITS if limit.id == limit_id), None)
    if entry is not None and entry.probe is not None:
        return "its probe retires it once the installed version no longer has it"
    return "it has no probe: it stays until the entry is edited, whatever the installed version does"


def _limit_of(owner: Owner) -> str:
    """What TIER.md names as the limit: the environment, a random stream, else the tier itself."""
    if owner.who is OwnerKind.ENVIRONMENT:
        return "the environment"
    if owner.who is OwnerKind.RANDOM:
        return "the random stream (tl.rand), by design"
    return f"the tier itself ({owner.name})"


def tier_head(owner: Owner) -> str:
    """TIER.md's title after the case: what kind of note it is."""
    fixed = fixed_in(owner)
    reported = reported_upstream(owner) and not fixed
    return (f"a {owner.name} bug already fixed in {fixed}: upgrade" if fixed else
            f"a known {owner.name} divergence, linked upstream" if reported and linked_known(owner) else
            f"a {owner.name} bug already reported upstream" if reported else
            "a tolerance tighter than a correct kernel's rounding" if owner.who is OwnerKind.TOLERANCE else
            f"a limit of {_limit_of(owner)}")


def render_tier(record: Record | Mapping[str, Any], backend: str, command: str | None) -> str:
    """TIER.md: a limit of the tier (or a gap of the environment), not a bug of the kernel or a vendor."""
    owner = owner_in(record) or Owner(OwnerKind.TIER, "None", "None")  # as an absent owner always read
    fixed = fixed_in(owner)
    reported = reported_upstream(owner) and not fixed
    link = linked_known(owner)
    parts = [f"# `{record['kernel']}` [{record['case']}] on {backend}: {tier_head(owner)}", "",
             "This is a note, not a new bug report: upstream knows this divergence already (the link below, which "
             "the spec names); add this case there if it shows something the link lacks." if reported and link else
             "This is a note, not a new bug report: the bug is filed upstream already (the link below); add this "
             "case there if it shows something the report lacks." if reported else
             "This is a note, not a bug report: do not file it with a vendor or the kernel's author.", "",
             f"Evidence: {owner.evidence}", ""]
    if link and not fixed:
        parts += [f"Known upstream: {link} (the spec's known divergence names it).", ""]
    if owner.limit:
        kind = "Known bug" if reported else "Random stream" if owner.who is OwnerKind.RANDOM else "Tier limit"
        parts += [f"{kind}: `{owner.limit}` (parity.triage.limits; {retired_by(owner.limit)}).", ""]
    if owner.provisional:
        parts += [f"To check the kernel itself, run {owner.settle}.", ""]
    parts += ["## What failed", "", "```text", str(record.get("reason") or "").strip(), "```", ""]
    if command:
        parts += ["## Re-run it", "", "```bash", command, "```", ""]
    return "\n".join(parts)


def input_note_kind(record: Record | Mapping[str, Any]) -> Draft | None:
    """The note a case whose input failed before the kernel was judged gets (BUNDLE.md, or AUTHOR.md to the spec's
    author), else None."""
    owner = owner_in(record)
    if owner is not None and owner.who is OwnerKind.BUNDLE:
        return Draft.BUNDLE
    if owner is not None and owner.who is OwnerKind.AUTHOR and owner.name == SPEC_AUTHOR:
        return Draft.AUTHOR
    return None


def input_note(record: Record | Mapping[str, Any], backend: str) -> tuple[str, str] | None:
    """(file name, text) of the note for a case whose input failed before the kernel was judged, else None."""
    kind = input_note_kind(record)
    if kind is Draft.BUNDLE:
        name, head, act = "BUNDLE.md", "the replay bundle is damaged", (
            "Nothing here says anything about the kernel or any compiler: the bundle's files are missing, altered "
            "or truncated since `parity record` wrote them. Record the workload again (`parity record --out DIR -- "
            "CMD`) and replay the new bundle; do not file this with anyone.")
    elif kind is Draft.AUTHOR:
        part = "make_inputs" if record.get("error_kind") in INPUT_KINDS else "reference"
        name, head, act = "AUTHOR.md", f"the spec's {part} raised", (
            f"The kernel was not launched: the spec's {part} raised first, so this is a fix to the spec's "
            f"{part} (where it raised is below), not to the kernel. Fix it and run the case again.")
    else:
        return None
    return name, "\n".join([f"# `{record['kernel']}` [{record['case']}] on {backend}: {head}", "", act, "",
                            "## What failed", "", "```text", str(record.get("reason") or "").strip(), "```", ""])


# ---------------------------------------------------------------- the Finding

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


def tracker_for(who: OwnerKind, tier: str | None = None) -> Tracker | None:
    """The tracker a draft for `who` goes to from `tier`: its family's own, else the one its family builds on,
    else the first registered tier's that takes `who`'s bugs."""
    found: Tracker | None = backend_class(tier).tracker if tier else None
    while found is not None and found.owner is not who:  # read here, not asked: one walk, no call per step
        found = found.base
    return found or next((cls.tracker for cls in registered() if cls.tracker.owner is who), None)


def library_finding(record: Record | Mapping[str, Any]) -> dict[str, Any] | None:
    """The library's finding a draft goes to: today's library rule's (`finding_of`), or the record's library
    where the cross-tier evidence made the library its owner."""
    found = record.get("finding_of")
    if found:
        return dict(found)
    owner, lib = owner_in(record), record.get("library") or {}
    if owner is None or owner.who is not OwnerKind.LIBRARY or not lib:
        return None
    return {**lib, "why": owner.evidence}


@dataclass(frozen=True)
class ShownOwner:
    """The owner a report row and a draft name: the record's decided Owner, or where triage decided none, what the
    record says (a library's finding, a diagnosed mistake with its line), else undecided (`who` None)."""

    who: OwnerKind | None
    name: str = ""
    evidence: str = ""
    provisional: bool = False
    settle: str | None = None
    limit: str | None = None
    also: tuple[str, ...] = ()
    line: str | None = None  # a diagnosed kernel mistake's file:line (parity.run.mistakes)

    def decided(self) -> Owner | None:
        """The Owner it stands for, where it names one (the predicates of parity.triage.owner read that)."""
        if self.who is None:
            return None
        return Owner(self.who, self.name, self.evidence, self.provisional, self.settle, self.limit, self.also)


def shown(owner: Owner | ShownOwner) -> ShownOwner:
    """A decided Owner as a row shows it (a ShownOwner as it is)."""
    if isinstance(owner, ShownOwner):
        return owner
    return ShownOwner(owner.who, owner.name, owner.evidence, owner.provisional, owner.settle, owner.limit, owner.also)


def owner_of(record: Record | Mapping[str, Any]) -> ShownOwner:
    """The record's owner as a row shows it; without one, what parity.triage.library_rule and the record say today:
    the library's finding, a diagnosed kernel mistake, else undecided."""
    owner = owner_in(record)
    if owner is not None:
        return shown(owner)
    lib = record.get("finding_of")
    if lib:
        return ShownOwner(OwnerKind.LIBRARY, lib.get("name", "the library"), lib.get("why", ""))
    diagnosis = record.get("diagnosis")
    if diagnosis:
        return ShownOwner(OwnerKind.AUTHOR, "kernel author", diagnosis.get("what", ""), line=diagnosis.get("line"))
    return ShownOwner(None, provisional=True)


def owner_words(decided: Owner | ShownOwner, tier: str | None = None) -> str:
    """The owner in a report row's words (a compiler's bug named after the tracker it goes to from `tier`)."""
    owner = shown(decided)
    kind = owner.who
    if kind is None:
        return "owner undecided"
    tracker = tracker_for(kind, tier) if kind not in OWNER_WORDS else None
    words = SPEC_WORDS if owner.name == SPEC_AUTHOR else PRECISION_WORDS if owner.limit == \
        PRECISION_LIMIT else f"{tracker.name} bug" if tracker else OWNER_WORDS.get(kind, str(kind)).format(
            name=owner.name or kind)
    fixed = fixed_in(owner.decided())
    if fixed:
        words += f", fixed in {fixed}; upgrade"
    if owner.line:
        words += f", {owner.line}"
    if owner.also:
        words += f" (drafts also for {', '.join(owner.also)})"
    if owner.provisional:
        words += " (provisional" + (f"; settled by {owner.settle}" if owner.settle else "") + ")"
    return words


def finding_of(record: Record | Mapping[str, Any]) -> Finding:
    """The record's Finding: its draft as its owner calls for, to which trackers, with which title, words and
    evidence. Computed once per record; every draft and report row renders it."""
    owner, plan = owner_in(record), plan_drafts(record)
    tier = str(record.get("backend") or "") or None
    draft, trackers = plan.kind, tuple(t for who in plan.trackers if (t := tracker_for(who, tier)) is not None)
    if draft is Draft.LIBRARY and library_finding(record) is None:  # no library to address: the author's
        draft = Draft.AUTHOR
    comp = record.get("compile") or {}
    failed = trim_message(str(comp.get("message") or record.get("reason") or ""))
    evidence = (f"**Why it is {owner.name}'s:** {owner.evidence}", "") if owner and owner.evidence else ()
    fit = author_lines(record) if draft is Draft.AUTHOR else issue_paragraph(record) if draft is Draft.LIBRARY else []
    return Finding(owner, draft, trackers, input_note_kind(record), title_text(failed),
                   owner_words(owner_of(record), tier), evidence, author_why(record), tuple(fit))
