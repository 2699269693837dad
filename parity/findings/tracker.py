"""Where a compiler family's bugs go: its tracker as data (parity.backends.trackers declares the ones parity knows,
and each tier's Backend holds its family's as `Backend.tracker`).

A vendor draft (ISSUE.md) is shaped by the tracker it goes to: the page to file it at, the bug form's title
prefix and environment block, what a run repro needs beyond torch, triton and numpy. A newer release that
fixes a vendor bug is looked up where the tracker says its release is recorded (env.json's key, the installed
distribution). A vendor with its own tracker declares one `Tracker` beside its Backend class: no table
elsewhere names it (tests/test_third_vendor_tracker.py counts the files such a vendor touches).
"""

from __future__ import annotations

from dataclasses import dataclass

from parity.results.kinds import OwnerKind


@dataclass(frozen=True)
class IssueForm:
    """The bug form of a tracker, as ISSUE.md fills it."""

    title_prefix: str  # what the form puts before a title ("[Bug]: "), "" for none
    environment: tuple[tuple[str, str], ...]  # its environment block: (label, env.json key), in order
    run_needs: str  # packages beyond torch, triton and numpy that a run repro needs, as a parenthesis ("" for none)


@dataclass(frozen=True, eq=False)
class Tracker:
    """One compiler family's tracker: who owns its bugs, where they are filed, and where its releases are read."""

    owner: OwnerKind  # the owner triage names for this compiler's bugs (Owner.who)
    name: str  # the compiler as drafts and evidence name it ("Triton", "triton-ascend")
    new_issue: str  # the page a draft says to file it at
    form: IssueForm  # the draft template: the tracker's bug form
    # "fixed in": env.json's key of the compiler's release and the distribution that installs it, where
    # parity.triage.later_release looks for a later release that passes the case
    release_key: str
    dist: str
    base: Tracker | None = None  # the compiler this one builds on: a bug of that one goes to its tracker
