"""Calibration: parity's owners against true owners, on kernels written by others (triton-ascend's pytest_ut,
loaded at run time) and two planted negative controls, through every CPU tier this machine has.

Prints the confusion matrix (true owner x parity's owner) per tier. Passing means >= 95 % right on every
tier and no vendor draft for a failure that is the author's or the tier's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.tier_python import ROOT, tier_python

# the order matters: each tier reads the ones before it as evidence, the report step then re-reads all
TIERS = (("interpret", "tests"), ("cuda-compile", "tests"), ("ascend-compile", "ascend-compile"),
         ("ascend-lowered", "ascend-compile"))
VENDOR_DRAFTS = ("ISSUE.md", "ISSUE-triton.md", "ISSUE-triton-ascend.md")


def _python(session: str) -> Path:
    python = tier_python(session)
    return python if python.exists() else Path(sys.executable)


def _run_tiers(out: Path, source: str = "tests.calibration_kernels") -> list[str]:
    ran = []
    for tier, session in TIERS:
        env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PYTHONPATH")}
        if tier == "interpret":
            env["TRITON_INTERPRET"] = "1"
        proc = subprocess.run([str(_python(session)), "-m", "tests.calibration_run", str(out), tier, source], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=900, check=False)
        if proc.returncode != 0:
            if "No module named" in proc.stderr or "not installed" in proc.stderr:
                continue
            pytest.fail(f"{tier}: {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
        kept = json.loads(proc.stdout.strip().splitlines()[-1])
        if kept and "skip" in kept[0]:
            continue
        ran.append(tier)
    return ran


def confusion(records: list[dict], labels: dict[str, dict[str, str | None]]) -> dict[str, Counter]:
    """tier -> Counter of (true owner, parity's owner) over the cases that failed or should have."""
    matrix: dict[str, Counter] = {}
    for r in records:
        truth = labels.get(r["kernel"], {}).get(r["backend"])
        got = (r.get("owner") or {}).get("who")
        if truth is None and got is None:
            continue  # passed, and should have
        matrix.setdefault(r["backend"], Counter())[(truth or "passes", got or "none")] += 1
    return matrix


def test_owners_match_the_labels_on_every_tier(tmp_path):
    from parity.results import load_results
    from parity.triage.merged import annotate
    from tests.calibration_kernels import LABELS, upstream_file

    if upstream_file("test_cumsum.py") is None:
        pytest.skip("no triton-ascend checkout: set PARITY_TRITON_ASCEND_GIT to a git dir of "
                    "github.com/Ascend/triton-ascend (or PARITY_TRITON_ASCEND_SRC to a checkout)")
    ran = _run_tiers(tmp_path)
    assert "interpret" in ran, "the interpret tier must run here"
    records = {tier: load_results(tmp_path / tier) for tier in ran}
    annotate(records, {tier: tmp_path / tier for tier in ran})  # the report step
    every = [r for recs in records.values() for r in recs]
    matrix = confusion(every, LABELS)
    lines = []
    for tier in ran:
        cells = matrix.get(tier, Counter())
        right = sum(n for (truth, got), n in cells.items() if truth == got)
        total = sum(cells.values())
        lines.append(f"{tier}: {right}/{total} right; " + ", ".join(f"true {t} -> parity {g}: {n}"
                                                                    for (t, g), n in sorted(cells.items())))
    print("\n".join(lines))
    for tier in ran:
        cells = matrix.get(tier, Counter())
        total = sum(cells.values())
        right = sum(n for (truth, got), n in cells.items() if truth == got)
        assert total == 0 or right / total >= 0.95, "\n".join(lines)
    # no vendor draft for the author's or the tier's failures (the planted tail mask, the planted tier limit)
    for r in every:
        truth = LABELS.get(r["kernel"], {}).get(r["backend"])
        if truth in ("author", "tier") and r.get("repro"):
            drafted = [p.name for p in (tmp_path / r["backend"] / r["repro"]).glob("ISSUE*.md")]
            assert not drafted, (r["kernel"], r["backend"], drafted)
    # a vendor's own failure: its draft, and no second vendor's (owner["also"] names none here)
    for r in every:
        if LABELS.get(r["kernel"], {}).get(r["backend"]) == "triton-ascend" and r.get("repro"):
            drafted = sorted(p.name for p in (tmp_path / r["backend"] / r["repro"]).glob("ISSUE*.md"))
            assert drafted in (["ISSUE.md"], []), (r["kernel"], r["backend"], drafted)
    mask = [r for r in every if r["kernel"] == "cal_row_mean_no_mask" and r["status"] == "failed"]
    assert mask and all((tmp_path / r["backend"] / r["repro"] / "AUTHOR.md").exists() for r in mask)
