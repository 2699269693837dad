"""The same case on other tiers: the records in sibling results dirs, and the kernel's source text."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

RESULTS = "results.jsonl"
STAGING = ".running"  # parity.run.rundir's staging dir: the final dir is its parent


def base_case(case: str) -> str:
    """A compile record's case id carries `;kernel,variant,config` after the case's own id."""
    return str(case).split(";", 1)[0]


def case_key(record: Mapping[str, Any]) -> tuple[str, str]:
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
def _index(path: str, mtime: float) -> dict[tuple[str, str], list[dict[str, Any]]]:
    from parity.results import read_records

    index: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for record in read_records(Path(path)):
            if record.get("suite") in (None, "accuracy", "compile"):
                index.setdefault(case_key(record), []).append(record)
    return index


def records_in(directory: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    path = directory / RESULTS
    try:
        return _index(str(path), path.stat().st_mtime)
    except Exception:  # unreadable, or written by another parity's schema: evidence we cannot use, not a raise
        return {}


def worst(records: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """One record standing for a case on a tier: a failing compile of it before a passing one."""
    rank = {"crashed": 0, "error": 1, "failed": 2, "xfailed": 3, "passed": 4, "xpassed": 5}
    ordered = sorted(records, key=lambda r: rank.get(str(r.get("status")), 9))
    return ordered[0] if ordered else None


def same_inputs(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    da, db = a.get("input_digest"), b.get("input_digest")
    return da is None or db is None or da == db


def others_for(record: Mapping[str, Any], directories: Iterable[Path]) -> dict[str, Mapping[str, Any]]:
    """tier → that tier's record of the same case (same inputs), from the given results dirs."""
    out: dict[str, Mapping[str, Any]] = {}
    for directory in directories:
        found = [r for r in records_in(directory).get(case_key(record), []) if same_inputs(record, r)]
        picked = worst(found)
        if picked is not None and picked.get("backend") != record.get("backend"):
            out.setdefault(str(picked.get("backend")), picked)
    return out


def others_in(record: Mapping[str, Any], all_records: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """As others_for, over records already loaded (the report step's merged dirs)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    key = case_key(record)
    for r in all_records:
        if r.get("backend") != record.get("backend") and case_key(r) == key and same_inputs(record, r) \
                and r.get("suite") in (None, "accuracy", "compile"):
            groups.setdefault(str(r.get("backend")), []).append(r)
    return {tier: picked for tier, rs in groups.items() if (picked := worst(rs)) is not None}


def kernel_source(kernels: Iterable[Any]) -> str:
    """The source of a spec's kernels with their jit helpers ('' where it cannot be read)."""
    from parity.repro.source import extract_kernel

    parts = []
    for kernel in kernels:
        try:
            parts.append(extract_kernel(kernel).text())
        except Exception:  # a kernel without readable source still gets a verdict from the rest
            continue
    return "\n".join(parts)
