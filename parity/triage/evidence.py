"""The same case on other tiers: the records in sibling results dirs, and the kernel's source text."""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from parity.results import Record, Status, read_records
from parity.results import dirs as rd
from parity.seams.versions import package_version
from parity.triage.tiers import family

RESULTS = rd.RESULTS
STAGING = rd.STAGING  # parity.run.rundir's staging dir: the final dir is its parent
# the status a self-replay's pass stands as, as evidence only (as_evidence): never written, and no rule's pass
RAN = "ran"
PASSING = (Status.PASSED, Status.XPASSED)
# which of a case's records stands for it on a tier: the first by this order (a failing compile before a passing one)
_RANK: dict[str, int] = {Status.CRASHED: 0, Status.ERROR: 1, Status.FAILED: 2, Status.XFAILED: 3, Status.PASSED: 4,
                         Status.XPASSED: 5, RAN: 6}


def base_case(case: str) -> str:
    """A compile record's case id carries `;kernel,variant,config` after the case's own id."""
    return str(case).split(";", 1)[0]


def case_key(record: Record) -> tuple[str, str]:
    return str(record.get("kernel")), base_case(str(record.get("case")))


def final_dir(results_dir: Path) -> Path:
    return results_dir.parent if results_dir.name == STAGING else results_dir


def sibling_dirs(results_dir: Path) -> list[Path]:
    """reports/<tier>/ beside this run's own results dir, each holding a results.jsonl."""
    own = final_dir(Path(results_dir)).resolve()
    parent = own.parent
    if not parent.is_dir():
        return []
    return sorted(d for d in parent.iterdir() if d.is_dir() and d.resolve() != own and (d / RESULTS).is_file())


@functools.lru_cache(maxsize=16)
def _index(path: str, mtime: float) -> dict[tuple[str, str], list[Record]]:
    index: dict[tuple[str, str], list[Record]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for record in read_records(Path(path)):
            if record.get("suite") in (None, "accuracy", "compile"):
                index.setdefault(case_key(record), []).append(record)
    return index


def records_in(directory: Path) -> dict[tuple[str, str], list[Record]]:
    path = directory / RESULTS
    try:
        return _index(str(path), path.stat().st_mtime)
    except Exception:  # unreadable, or written by another parity's schema: evidence we cannot use, not a raise
        return {}


def worst(records: Iterable[Record]) -> Record | None:
    """One record standing for a case on a tier: a failing compile of it before a passing one."""
    ordered = sorted(records, key=lambda r: _RANK.get(str(r.get("status")), 9))
    return ordered[0] if ordered else None


def same_inputs(a: Record, b: Record) -> bool:
    da, db = a.get("input_digest"), b.get("input_digest")
    return da is None or db is None or da == db


def self_replay(record: Record) -> bool:
    """A --replay record on the tier that recorded the bundle: it compared that tier with itself, so its pass
    is no evidence about any other tier (parity.record.replay.provenance)."""
    replay = record.get("replay")
    return isinstance(replay, Mapping) and replay.get("recorded_on") == record.get("backend")


def as_evidence(record: Record) -> Record | None:
    """A record as evidence about another tier: as it is, except a self-replay (self_replay), whose values say
    nothing; one that passed still shows the launch ran to completion there (no crash, no hang, every tensor
    between its red zones), so it stands as status RAN, which no rule takes for a pass."""
    if not self_replay(record):
        return record
    if record.get("status") in PASSING:
        return cast(Record, {**record, "status": RAN})  # RAN is no Status: evidence only, never written
    return None


def others_for(record: Record, directories: Iterable[Path], version: str | None = None) -> dict[str, Record]:
    """tier → that tier's record of the same case (same inputs), from the given results dirs."""
    best: dict[str, tuple[tuple[bool, bool, str], Record]] = {}
    version = installed_version() if version is None else version
    for directory in directories:
        found = [e for r in records_in(directory).get(case_key(record), []) if same_inputs(record, r)
                 and (e := as_evidence(r)) is not None]
        picked = worst(found)
        if picked is None or picked.get("backend") == record.get("backend"):
            continue
        tier = str(picked.get("backend"))
        rank = (not _same_release(record, tier, version, dir_version(directory)), "@" in directory.name,
                directory.name)
        if tier not in best or rank < best[tier][0]:
            best[tier] = (rank, picked)
    return {tier: picked for tier, (_, picked) in best.items()}


def _same_release(record: Record, tier: str, version: str | None, other: str | None) -> bool:
    """Whether another tier's dir was built with this record's compiler release: per tier, that dir is the
    evidence, then the tier's default dir, then the version matrix's (a case compared across releases would
    blame the kernel for what a release changed). Only within one compiler family: triton-ascend 3.2.0 is
    not upstream Triton 3.2.0."""
    try:
        return bool(version) and version == other and family(tier) == family(str(record.get("backend")))
    except Exception:  # a tier this parity does not know: no preference
        return False


def others_in(record: Record, all_records: Iterable[Record]) -> dict[str, Record]:
    """As others_for, over records already loaded (the report step's merged dirs)."""
    groups: dict[str, list[Record]] = {}
    key = case_key(record)
    for r in all_records:
        if r.get("backend") != record.get("backend") and case_key(r) == key and same_inputs(record, r) \
                and r.get("suite") in (None, "accuracy", "compile") and (e := as_evidence(r)) is not None:
            groups.setdefault(str(r.get("backend")), []).append(e)
    return {tier: picked for tier, rs in groups.items() if (picked := worst(rs)) is not None}


def others_in_dirs(record: Record, version: str | None,
                   tagged: Iterable[tuple[str, str | None, Record]]) -> dict[str, Record]:
    """As others_in over (dir label, release, record): per tier, only the records of its dir built with this
    record's release, else of its default dir (labelled by the tier alone), else of all its dirs."""
    key = case_key(record)
    per: dict[str, list[tuple[str, str | None, Record]]] = {}
    for label, other, r in tagged:
        if r.get("backend") != record.get("backend") and case_key(r) == key and same_inputs(record, r) \
                and r.get("suite") in (None, "accuracy", "compile") and (e := as_evidence(r)) is not None:
            per.setdefault(str(r.get("backend")), []).append((label, other, e))
    out = {}
    for tier, found in per.items():
        chosen = ([r for _, v, r in found if _same_release(record, tier, version, v)]
                  or [r for label, _, r in found if label == tier] or [r for _, _, r in found])
        picked = worst(chosen)
        if picked is not None:
            out[tier] = picked
    return out


def version_of(env: Mapping[str, Any]) -> str | None:
    """The compiler release a results dir was built with (env.json): triton-ascend's where it is installed,
    else upstream Triton's."""
    return env.get("triton_ascend") or env.get("triton") or None


def installed_version() -> str | None:
    """This process's compiler release, as env.json will record it."""
    return version_of({"triton_ascend": package_version("triton-ascend"), "triton": package_version("triton")})


@functools.lru_cache(maxsize=64)
def _dir_version(path: str, mtime: float) -> str | None:
    try:
        env = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return version_of(env) if isinstance(env, dict) else None


def dir_version(directory: Path) -> str | None:
    path = Path(directory) / rd.ENV
    try:
        return _dir_version(str(path), path.stat().st_mtime)
    except OSError:
        return None


def versions_for(record: Record, version: str | None, directories: Iterable[Path]) -> dict[str, Record]:
    """release → the same tier's record of the same case (same inputs) built with another compiler release
    (the version matrix's reports/<tier>@triton-<v>/ beside this run's dir)."""
    out: dict[str, Record] = {}
    for directory in directories:
        other = dir_version(directory)
        if not other or other == version:
            continue
        found = [r for r in records_in(directory).get(case_key(record), [])
                 if r.get("backend") == record.get("backend") and same_inputs(record, r)]
        picked = worst(found)
        if picked is not None:
            out.setdefault(other, picked)
    return out


def versions_in(record: Record, version: str | None,
                tagged: Iterable[tuple[str | None, Record]]) -> dict[str, Record]:
    """As versions_for, over records already loaded, each tagged with its dir's release."""
    groups: dict[str, list[Record]] = {}
    key = case_key(record)
    for other, r in tagged:
        if other and other != version and r.get("backend") == record.get("backend") and case_key(r) == key \
                and same_inputs(record, r) and r.get("suite") in (None, "accuracy", "compile"):
            groups.setdefault(other, []).append(r)
    return {v: picked for v, rs in groups.items() if (picked := worst(rs)) is not None}
