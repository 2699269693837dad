"""Synthetic result records for the report tests (DIVERGENCE.md, the porting verdict)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from parity.results import Record, Status, empty_record, write_results

TOL = {"rtol": 1e-3, "atol": 1e-5, "max_err_ratio": None, "reason": "test"}


def rec(backend: str, mode: str, kernel: str, case: str, status: Status, *, failing_tol_ratio: float = 500.0,
        **extra: Any) -> Record:
    """One record, typed as parity.results reads it: a compile record on a compile tier, else an accuracy record
    whose metrics pass or fail (`failing_tol_ratio`: the worst err/tol of a failing one). An owner goes in
    `extra` as an Owner (parity.triage.owner.make_owner)."""
    status = Status(status)  # a plain word from a caller not yet typed is read as results.jsonl reads it
    r = empty_record(backend, mode, kernel, case, {})
    r.update(status=status, suite="compile" if mode == "compile" else "accuracy", tolerance=TOL)
    if mode != "compile":
        r["metrics"] = {"err_ratio": 1e-4 if status == Status.PASSED else 0.5, "max_abs_err": 1e-4,
                        "max_tol_ratio": 0.1 if status == Status.PASSED else failing_tol_ratio}
    r.update(extra)
    return r


def write_dir(root: Path, name: str, env: dict[str, Any], records: list[Record]) -> Path:
    """A results dir holding these records (written as parity.results.files writes them) and this env.json."""
    d = root / name
    d.mkdir(parents=True)
    write_results(d, records)
    (d / "env.json").write_text(json.dumps(env))
    return d
