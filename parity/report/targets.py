"""Speed goals (parity.spec.perf.PerfTarget, stored in a record's perf block) judged met or missed.

Pure functions of a record: REPORT.md prints the verdict with its figure; nothing asserts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GoalVerdict:
    goal: str  # e.g. ">= 85% of measured copy bandwidth"
    figure: str  # e.g. "91.2% of 4350 GB/s copy"
    met: bool | None  # None: the figure needed is missing (no roof, no baseline, no peer)


def _num(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def judge(perf: Mapping[str, Any]) -> GoalVerdict | None:
    """The verdict of the target in one perf block, or None when it declares none."""
    target = perf.get("target") or {}
    ms = _num(perf.get("ms"))
    if (frac := _num(target.get("min_roofline_frac"))) is not None:
        pct, unit = _num(perf.get("pct_of_roofline")), perf.get("roof_unit") or "roof"
        goal = f">= {100 * frac:.0f}% of the measured roof ({unit})"
        if pct is None:
            return GoalVerdict(goal, "no measured roof", None)
        return GoalVerdict(goal, f"{pct:.1f}% of {_num(perf.get('roof')) or 0:.0f} {unit}", pct >= 100 * frac)
    if (speedup := _num(target.get("min_speedup_vs_baseline"))) is not None:
        base = _num(perf.get("baseline_ms"))
        goal = f">= {speedup:g}x the baseline's speed"
        if base is None or not ms:
            return GoalVerdict(goal, f"no baseline time ({perf.get('baseline_error') or 'no baseline'})", None)
        return GoalVerdict(goal, f"{base / ms:.3f}x ({ms:.4g} ms vs {base:.4g} ms)", base / ms >= speedup)
    if (ratio := _num(target.get("max_time_vs_peer"))) is not None:
        peer_ms, peer = _num(perf.get("peer_ms")), perf.get("peer") or "peer"
        goal = f"<= {ratio:g}x {peer}'s time"
        if peer_ms is None or ms is None:
            why = perf.get("peer_skipped") or perf.get("peer_error") or "not timed"
            return GoalVerdict(goal, f"no {peer} time: {why}", None)
        return GoalVerdict(goal, f"{ms / peer_ms:.3f}x ({ms:.4g} ms vs {peer_ms:.4g} ms)", ms / peer_ms <= ratio)
    return None


def verdict_word(v: GoalVerdict) -> str:
    return {True: "met", False: "missed", None: "not measured"}[v.met]
