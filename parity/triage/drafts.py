"""Which drafts a failing case's repro folder gets, from its owner; and TIER.md, the tier-limit note.

- the library: ISSUE.md to the library's tracker;
- Triton or triton-ascend with evidence that its tool is the odd one out: ISSUE.md to it, and a second
  draft ISSUE-<tracker>.md only for a tracker named in owner["also"];
- the author, or an owner that is still provisional: AUTHOR.md (the provisional one says whose it most
  likely is and which run settles it);
- the tier or the environment: TIER.md, a note, never a vendor draft;
- a vendor bug that a newer release already fixes: TIER.md too, saying which release to upgrade to;
- a vendor bug already reported upstream (a limit entry, or a spec's known divergence linking it): TIER.md with
  the link, never a draft inviting a new report;
- bad input, before the kernel was judged (`input_note`): the spec's reference raised (AUTHOR.md to the spec's
  author, saying so) or a replay bundle is damaged (BUNDLE.md: re-record it); no repro of the kernel, no draft.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from parity.triage.limits import LIMITS
from parity.triage.owner import SPEC_AUTHOR, fixed_in, linked_known, reported_upstream, vendor_note

VENDORS = ("triton", "triton-ascend")


@dataclass(frozen=True)
class DraftPlan:
    kind: str  # "library" | "vendor" | "author" | "tier" | "none"
    trackers: list[str] = field(default_factory=list)  # vendor: the primary first


def plan_drafts(record: Mapping[str, Any]) -> DraftPlan:
    known = record.get("known_divergence") or {}
    if record.get("status") == "xfailed" and known.get("expected_by"):
        return DraftPlan("none")  # the kernel's own author documents the case: they know; its repro is enough
    owner = record.get("owner")
    if not owner:  # no verdict (triage raised, or a caller that never asked): only today's library rule drafts
        return DraftPlan("library" if record.get("finding_of") else "none")
    who = owner.get("who")
    if who == "library":
        return DraftPlan("library")
    # a note: nobody's code is wrong ("tolerance": the values lie within rounding; "random": a stream that differs
    # by design)
    if who in ("tier", "environment", "tolerance", "random"):
        return DraftPlan("tier")
    if vendor_note(owner):  # fixed in a later release, or already reported upstream: a note
        return DraftPlan("tier")
    if who in VENDORS and not owner.get("provisional"):
        return DraftPlan("vendor", [who, *[t for t in owner.get("also") or [] if t in VENDORS and t != who]])
    return DraftPlan("author")


def author_why(record: Mapping[str, Any]) -> str:
    """AUTHOR.md's one-line reason, from the owner's evidence."""
    owner = record.get("owner") or {}
    if owner.get("who") not in ("author", "library") and owner.get("provisional"):
        return (f"parity cannot yet tell whose failure this is; the most likely owner is {owner.get('name')} "
                f"({owner.get('evidence')}). Before filing anything upstream, settle it: run {owner.get('settle')}")
    why = str(owner.get("evidence") or "the failure is the kernel's own")
    if owner.get("provisional"):
        why += f" (provisional: run {owner.get('settle')} to settle it)"
    return why


def retired_by(limit_id: str) -> str:
    """How a limit entry stops matching, as the entry has it: only one with a probe retires itself."""
    entry = next((limit for limit in LIMITS if limit.id == limit_id), None)
    if entry is not None and entry.probe is not None:
        return "its probe retires it once the installed version no longer has it"
    return "it has no probe: it stays until the entry is edited, whatever the installed version does"


def render_tier(record: Mapping[str, Any], backend: str, command: str | None) -> str:
    """TIER.md: a limit of the tier (or a gap of the environment), not a bug of the kernel or a vendor."""
    owner = record.get("owner") or {}
    what = {"environment": "the environment", "random": "the random stream (tl.rand), by design"}.get(
        str(owner.get("who")), f"the tier itself ({owner.get('name')})")
    fixed = fixed_in(owner)
    reported = reported_upstream(owner) and not fixed
    link = linked_known(owner)
    head = (f"a {owner.get('name')} bug already fixed in {fixed}: upgrade" if fixed else
            f"a known {owner.get('name')} divergence, linked upstream" if reported and link else
            f"a {owner.get('name')} bug already reported upstream" if reported else
            "a tolerance tighter than a correct kernel's rounding" if owner.get("who") == "tolerance" else
            f"a limit of {what}")
    parts = [f"# `{record['kernel']}` [{record['case']}] on {backend}: {head}", "",
             "This is a note, not a new bug report: upstream knows this divergence already (the link below, which "
             "the spec names); add this case there if it shows something the link lacks." if reported and link else
             "This is a note, not a new bug report: the bug is filed upstream already (the link below); add this "
             "case there if it shows something the report lacks." if reported else
             "This is a note, not a bug report: do not file it with a vendor or the kernel's author.", "",
             f"Evidence: {owner.get('evidence')}", ""]
    if link and not fixed:
        parts += [f"Known upstream: {link} (the spec's known divergence names it).", ""]
    if owner.get("limit"):
        kind = "Known bug" if reported else "Random stream" if owner.get("who") == "random" else "Tier limit"
        parts += [f"{kind}: `{owner['limit']}` (parity.triage.limits; {retired_by(str(owner['limit']))}).", ""]
    if owner.get("provisional"):
        parts += [f"To check the kernel itself, run {owner.get('settle')}.", ""]
    parts += ["## What failed", "", "```text", str(record.get("reason") or "").strip(), "```", ""]
    if command:
        parts += ["## Re-run it", "", "```bash", command, "```", ""]
    return "\n".join(parts)


def input_note(record: Mapping[str, Any], backend: str) -> tuple[str, str] | None:
    """(file name, text) of the note for a case whose input failed before the kernel was judged, else None."""
    owner = record.get("owner") or {}
    if owner.get("who") == "bundle":
        name, head, act = "BUNDLE.md", "the replay bundle is damaged", (
            "Nothing here says anything about the kernel or any compiler: the bundle's files are missing, altered "
            "or truncated since `parity record` wrote them. Record the workload again (`parity record --out DIR -- "
            "CMD`) and replay the new bundle; do not file this with anyone.")
    elif owner.get("who") == "author" and owner.get("name") == SPEC_AUTHOR:
        part = "make_inputs" if record.get("error_kind") == "inputs" else "reference"
        name, head, act = "AUTHOR.md", f"the spec's {part} raised", (
            f"The kernel was not launched: the spec's {part} raised first, so this is a fix to the spec's "
            f"{part} (where it raised is below), not to the kernel. Fix it and run the case again.")
    else:
        return None
    return name, "\n".join([f"# `{record['kernel']}` [{record['case']}] on {backend}: {head}", "", act, "",
                            "## What failed", "", "```text", str(record.get("reason") or "").strip(), "```", ""])
