"""Calibration on upstream Triton's test_core.py kernels (tests/calibration_test_core.py, read at run time): parity's
owners against true owners through every CPU tier this machine has, with the confusion matrix per tier printed.

Passing means >= 95 % right owners on every tier and no vendor draft for a failure that is the author's or the
tier's; the planted author bug (tc_exp_planted) gets AUTHOR.md where it computes, its clean twin (tc_exp) nothing."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.test_calibration import _run_tiers, confusion

SOURCE = "tests.calibration_test_core"


def matrix_lines(matrix: dict[str, Counter], tiers: list[str]) -> list[str]:
    """One line per tier: right/total, then each (true owner -> parity's owner) cell."""
    lines = []
    for tier in tiers:
        cells = matrix.get(tier, Counter())
        right = sum(n for (truth, got), n in cells.items() if truth == got)
        lines.append(f"{tier}: {right}/{sum(cells.values())} right; "
                     + ", ".join(f"true {t} -> parity {g}: {n}" for (t, g), n in sorted(cells.items())))
    return lines


def test_owners_of_upstream_test_core_kernels_match_the_labels(tmp_path):
    from parity.results import load_results
    from parity.triage.merged import annotate
    from tests.calibration_test_core import LABELS, test_core_text

    if test_core_text() is None:
        pytest.skip("no upstream Triton test_core.py: set PARITY_TRITON_TEST_CORE to the file, PARITY_TRITON_SRC to a "
                    "checkout of github.com/triton-lang/triton, or PARITY_TRITON_GIT to its git dir")
    ran = _run_tiers(tmp_path, SOURCE)
    assert "interpret" in ran, "the interpret tier must run here"
    records = {tier: load_results(tmp_path / tier) for tier in ran}
    annotate(records, {tier: tmp_path / tier for tier in ran})  # the report step
    every = [r for recs in records.values() for r in recs]
    matrix = confusion(every, LABELS)
    lines = matrix_lines(matrix, ran)
    print("\n".join(lines))
    for tier in ran:
        cells = matrix.get(tier, Counter())
        total = sum(cells.values())
        right = sum(n for (truth, got), n in cells.items() if truth == got)
        assert total == 0 or right / total >= 0.95, "\n".join(lines)
    for r in every:
        truth = LABELS.get(r["kernel"], {}).get(r["backend"])
        if truth in ("author", "tier") and r.get("repro"):
            drafted = [p.name for p in (tmp_path / r["backend"] / r["repro"]).glob("ISSUE*.md")]
            assert not drafted, (r["kernel"], r["backend"], drafted)
    planted = [r for r in every if r["kernel"] == "tc_exp_planted" and r["status"] == "failed"]
    assert planted and all((tmp_path / r["backend"] / r["repro"] / "AUTHOR.md").exists() for r in planted)
    # a vendor bug already reported (triton-ascend#39): the vendor's, with TIER.md pointing at it, and no new draft
    reported = [r for r in every if r["kernel"] == "tc_noinline" and r.get("repro")
                and (r.get("owner") or {}).get("who") == "triton-ascend"]
    for r in reported:
        folder = tmp_path / r["backend"] / r["repro"]
        assert (folder / "TIER.md").exists() and not list(folder.glob("ISSUE*.md")), (r["backend"], r["repro"])
    twin = [r for r in every if r["kernel"] == "tc_exp" and r["backend"] in ("interpret", "ascend-lowered")]
    assert twin and all(r["status"] == "passed" for r in twin), [(r["backend"], r["status"]) for r in twin]
