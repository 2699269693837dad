"""A results dir's life: a run writes into a staging dir and replaces the last results only when it ends.

A run that ends, interrupted or not, puts its own results in place. The results it replaces go to
`previous/` when they are a complete run's, so `previous/` always holds the last complete results and
repeated interruptions never push them out; replaced results of an interrupted run go to `unfinished/`.
A run killed outright leaves the results in place untouched; its staged records go to `unfinished/`
when the next run starts. A run over a kernel selection keeps the previous records of the kernels it
did not select, so it never silently drops them.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from parity.results import Record, ResultsDir
from parity.results.dirs import PREVIOUS, RUN_FILES


def unusable(results_dir: Path) -> str | None:
    """Why a results dir cannot be made or written (a file in its place or on its path, no permission), with
    the fix; None when it can."""
    path = Path(results_dir)
    for at in (path, *path.parents):
        if not at.exists():
            continue
        if not at.is_dir():
            where = "is a file" if at == path else f"lies under {at}, which is a file"
            return (f"--results-dir {results_dir} {where}, not a directory; name a directory (it is created), "
                    "e.g. --results-dir reports/<backend>")
        if not os.access(at, os.W_OK | os.X_OK):
            return f"--results-dir {results_dir}: {at} is not writable here; name a directory you can write"
        return None
    return None


def staging_dir(results_dir: Path) -> Path:
    return ResultsDir(results_dir).staging.path


def begin(results_dir: Path) -> Path:
    """The controller's start: a fresh staging dir; a dead run's staged files go to unfinished/."""
    staging = staging_dir(results_dir)
    if staging.exists():
        aside = ResultsDir(results_dir).unfinished.path
        shutil.rmtree(aside, ignore_errors=True)
        staging.rename(aside)
        warnings.warn(f"{results_dir}: an earlier run stopped before it finished; its records are kept in "
                      f"{aside} (`python -m parity.cli report {aside}` reads them)", stacklevel=2)
    staging.mkdir(parents=True)
    return staging


def _move(src: Path, dst: Path) -> None:
    if dst.is_dir():
        shutil.rmtree(dst)
    elif dst.exists():
        dst.unlink()
    dst.parent.mkdir(parents=True, exist_ok=True)
    src.rename(dst)


def carried_records(previous: Sequence[Record], selected: Iterable[str]) -> list[Record]:
    """The previous run's records of kernels this run did not select, marked as carried over."""
    chosen = set(selected)
    carried = [Record(**r) for r in previous if r.get("kernel") not in chosen]  # copies: the previous run's stay
    for record in carried:
        record["carried_over"] = True  # a record carried before is carried again, once marked
    return carried


def carry_files(results_dir: Path, records: Sequence[Mapping[str, Any]], outputs: Iterable[Path]) -> None:
    """Move carried records' repro dirs and stored outputs from the results dir into staging."""
    staging = staging_dir(results_dir)
    for rel in {r["repro"] for r in records if r.get("repro")}:
        if (results_dir / rel).exists():
            _move(results_dir / rel, staging / rel)
    for path in outputs:
        if path.exists():
            _move(path, staging / path.relative_to(results_dir))


def run_env(results_dir: Path) -> dict[str, Any]:
    """The env.json of the results in a dir; {} when there is none or it does not parse."""
    try:
        env = json.loads(ResultsDir(results_dir).env.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return env if isinstance(env, dict) else {}


def complete(results_dir: Path) -> bool:
    """Whether a dir holds a finished run's results: its env.json says the run was not interrupted (a dir whose
    env.json is missing or unreadable is not known to be complete)."""
    env = run_env(results_dir)
    return ResultsDir(results_dir).results.exists() and env.get("interrupted") is False


def promote(results_dir: Path) -> bool:
    """The results in place aside (a complete run's into previous/, an interrupted run's into unfinished/), the
    staged run into place, staging removed. True when previous/ holds a complete run's results now."""
    staging = staging_dir(results_dir)
    old = [name for name in RUN_FILES if (results_dir / name).exists()]
    if old:
        where = ResultsDir(results_dir)
        aside = (where.previous if complete(results_dir) else where.unfinished).path
        shutil.rmtree(aside, ignore_errors=True)
        for name in old:
            _move(results_dir / name, aside / name)
    for item in staging.iterdir():
        _move(item, results_dir / item.name)
    staging.rmdir()
    return complete(ResultsDir(results_dir).previous.path)


def banner(interrupted: bool, items_done: int, items_total: int, carried: Sequence[Mapping[str, Any]],
           previous: bool = False) -> str:
    """REPORT.md's first lines when the run was cut short or carries records over; '' otherwise. `previous`:
    whether previous/ holds the last complete run's results (the banner points there only then)."""
    lines = []
    if interrupted:
        missing = max(items_total - items_done, 0)
        kept = (f"the last complete results are in `{PREVIOUS}/`" if previous else
                "no complete run's results were in this directory before")
        lines.append(f"> **This run was interrupted**: {items_done} of {items_total} test items finished, {missing} "
                     f"did not. The records below are the ones written before the stop; {kept}.")
    if carried:
        kernels = sorted({str(r.get("kernel")) for r in carried})
        lines.append(f"> {len(carried)} records of {len(kernels)} kernels this run did not select "
                     f"({', '.join(kernels[:8])}{', …' if len(kernels) > 8 else ''}) are carried over from the "
                     "previous run in this directory.")
    return "\n>\n".join(lines) + ("\n\n" if lines else "")
