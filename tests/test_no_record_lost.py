"""No record is lost: a raise planted at each stage after a case fails leaves the record, its verdict and a
repro_error, on every tier this machine can run (each in its own Python, as the tier's nox session would)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tier_python import ROOT, tier_python

TIERS = {"interpret": "tests", "cuda-compile": "tests", "ascend-compile": "ascend-compile",
         "ascend-lowered": "ascend-compile"}


def _python(session: str) -> Path:
    python = tier_python(session)
    return python if python.exists() else Path(sys.executable)


@pytest.mark.parametrize("tier", list(TIERS))
def test_a_raise_at_any_stage_keeps_the_record(tier, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PYTHONPATH")}
    if tier == "interpret":
        env["TRITON_INTERPRET"] = "1"
    proc = subprocess.run([str(_python(TIERS[tier])), "-m", "tests.triage_controls", str(tmp_path), tier], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0 and ("No module named 'triton" in proc.stderr or "No module named 'torch'" in proc.stderr):
        pytest.skip(f"{tier}: its python lacks triton/torch; run `nox -s {tier}`")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    kept = json.loads(proc.stdout.strip().splitlines()[-1])
    if kept and "skip" in kept[0]:
        pytest.skip(kept[0]["skip"])
    stages = {k["stage"] for k in kept}
    assert len(stages) >= 4, kept
    for k in kept:
        assert k["status"] in ("failed", "error", "xfailed"), k  # the verdict it earned, never lost or changed
        assert f"planted at {k['stage']}" in (k["repro_error"] or ""), k
        if k["stage"] != "triage":
            assert k["owner"] and k["owner"]["who"], k  # triage still ran
        else:
            assert k["owner"] is None and k["repro_error"].startswith("triage: "), k
