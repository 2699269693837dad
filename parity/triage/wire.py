"""Triage where drafts are chosen: one call per failing record, which never raises."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import parity.triage.evidence as evidence
import parity.triage.interrupt as interrupt
from parity.triage.decide import decide
from parity.triage.libraries import library_for, library_rule


def settle_interrupted(record: dict[str, Any], results_dir: Path | None = None) -> bool:
    """interrupt.settle; with `results_dir`, a draft the case got before the interruption settled it is removed
    (an interrupted case has no finding, so no AUTHOR.md or ISSUE.md may speak for it)."""
    if not interrupt.settle(record):
        return False
    if results_dir is not None:
        interrupt.drop_drafts(record, results_dir)
    return True


def triage_record(record: dict[str, Any], *, family: str | None, kernels: Iterable[Any], results_dir: Path | None,
                  others: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any] | None:
    """Decide and record `owner` (None for a record that did not fail). Keeps `finding_of`, the library
    drafts' input, in step with it. A raise here leaves the record as it was, with `repro_error`."""
    kernels = list(kernels)
    try:
        version, versions = None, {}
        if others is None:
            dirs = evidence.sibling_dirs(results_dir) if results_dir else []
            version = evidence.installed_version()
            others = evidence.others_for(record, dirs, version)
            versions = evidence.versions_for(record, version, dirs)  # the version matrix's dirs of this tier
        library = library_for(family, kernels)
        verdict = decide(record, others, evidence.kernel_source(kernels), library,
                         library_rule(record) if library is not None else None, version=version, versions=versions)
    except Exception as exc:  # triage must never cost a record
        record["repro_error"] = f"triage: {type(exc).__name__}: {exc}"[:600]
        return None
    if verdict is None:
        return None
    record["owner"] = verdict
    if verdict["who"] != "library":
        record.pop("finding_of", None)  # today's rule named the library; the evidence names someone else
    return verdict


def retriage(records: list[dict[str, Any]],
             tagged: list[tuple[str, str | None, dict[str, Any]]] | None = None) -> int:
    """The report step: every failing record's owner again, now with every merged dir's records as
    evidence (`tagged`: each record with its dir's label and compiler release, so that tiers are compared
    at one release and a release's bug that a newer one fixes says so). A tier limit found with the
    kernel's source at run time is kept unless other tiers show the kernel fails the same way. Returns how
    many owners changed."""
    from parity.triage.decide import make_owner, same_way_elsewhere

    tagged = tagged if tagged is not None else [(str(r.get("backend")), None, r) for r in records]
    release = {id(r): v for _, v, r in tagged}
    by_release = [(v, r) for _, v, r in tagged]
    changed = 0
    for record in records:
        before = record.get("owner")
        if not before or record.get("status") == "interrupted":
            continue
        version = release.get(id(record))
        others = evidence.others_in_dirs(record, version, tagged)
        versions = evidence.versions_in(record, version, by_release)
        if not others and not versions:
            continue
        if before.get("limit"):  # found with the kernel's source at run time, which the merged dirs lack
            same = same_way_elsewhere(record, others) if before.get("who") == "tier" else []
            if not same:
                continue
            verdict = make_owner("author", "kernel author", f"{record.get('backend')} and {', '.join(same)} fail "
                                 f"the same way; the kernel is wrong beyond the tier's own limit ({before['limit']})")
        else:
            verdict = decide(record, others, "", None, version=version, versions=versions)
        if verdict is None:
            continue
        if before.get("who") == "library" and verdict["who"] == "author":
            verdict = {**verdict, "who": "library", "name": before.get("name")}
        if before.get("who") == "library" and verdict.get("provisional"):
            continue
        if verdict != before:
            record["owner"] = verdict
            changed += 1
    return changed

def retriage_dirs(records: Mapping[str, list[dict[str, Any]]], where: Mapping[str, Path]) -> int:
    """retriage over every merged dir's records; a dir whose owners changed gets its results.jsonl rewritten."""
    from parity.results import write_results

    before = {label: [dict(r.get("owner") or {}) for r in recs] for label, recs in records.items()}
    tagged = [(label, evidence.dir_version(where[label]), r) for label, recs in records.items() for r in recs]
    changed = retriage([r for recs in records.values() for r in recs], tagged)
    for label, recs in records.items():
        if [dict(r.get("owner") or {}) for r in recs] != before[label]:
            try:
                write_results(where[label], recs)
            except OSError:  # a read-only copy of another machine's results: the report still has the owners
                continue
    return changed
