"""The owner of one failing record, from its own evidence and the same case's records on other tiers.

First the inputs (parity.triage.inputs): a spec's reference or make_inputs that raised → the spec's author, a
damaged replay bundle → the bundle; nothing ran that says anything about the kernel or any tool, so nothing
below applies. Then the rules of parity.triage.rules, in their order: the first that answers decides.
Then two restatements of the verdict:
- a vendor verdict whose case passes on a newer release of the same tier (the version matrix's dirs) is
  "fixed in <release>; upgrade": a note, never a fresh upstream draft for a bug already fixed;
- a kernel shipped by a library hands the author's verdicts (and today's library rule) to the library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import parity.triage.rules as rules
from parity.results import Owner, OwnerKind, Record, Status
from parity.triage.case import CaseEvidence, is_failing
from parity.triage.inputs import input_owner
from parity.triage.later_release import fixed_later
from parity.triage.owner import VENDORS, make_owner


def decide(record: Record, others: Mapping[str, Record], source: str = "", library: Any = None,
           library_why: str | None = None, *, version: str | None = None,
           versions: Mapping[str, Record] | None = None) -> Owner | None:
    """The owner of a failing record, or None for one that did not fail. `others` maps each other tier
    to its record of the same case; `library` is the library that ships the kernel (or None), and
    `library_why` today's library rule's reason for this record (parity.triage.library_rule), if any. `versions`
    maps another release of the record's own compiler (`version`) to this tier's record of the same case
    built with it: a vendor bug that a newer release passes is already fixed there."""
    if not is_failing(record) or record.get("status") == Status.INTERRUPTED:
        return None
    bad_input = input_owner(record)
    if bad_input is not None:  # nothing ran that says anything about the kernel, or any tool: no rule applies
        return bad_input
    verdict = first_answer(record, CaseEvidence.of(record, others, source))
    if verdict.who in VENDORS and record.get("status") != Status.XFAILED:
        verdict = fixed_later(record, verdict, version, versions or {}) or verdict
    if library is not None:
        if verdict.who is OwnerKind.AUTHOR:
            verdict = replace(verdict, who=OwnerKind.LIBRARY, name=library.name)
        elif verdict.provisional and library_why and verdict.who is not OwnerKind.TIER:
            verdict = make_owner(OwnerKind.LIBRARY, library.name, f"{library_why} (parity's library rule)",
                                 provisional=True, settle=verdict.settle)
    return verdict


def first_answer(record: Record, seen: CaseEvidence) -> Owner:
    """The owner the first rule of the table that answers gives (the last, `provisional`, always does)."""
    for rule in rules.RULES:
        owner = rule(record, seen)
        if owner is not None:
            return owner
    raise AssertionError("RULES ends with a rule that always answers")
