"""The envelope of every selected spec on one target, in that target's venv: `python -m parity.envelope TARGET`.

Prints one JSON object per (kernel, axis) on stdout, the lines parity.envelope.command reads.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Any

import parity.envelope.axes as axes
import parity.envelope.growth as growth
import parity.envelope.limits as limits
import parity.envelope.replay_axes as replay_axes
import parity.envelope.replayed as replayed
import parity.envelope.storm as storms
from parity.envelope.probe import Prober
from parity.envelope.start import choose as choose_start
from parity.spec import KernelSpec
from parity.spec.registry import build

AXIS_BUDGET_S = 300.0  # default for one axis of one kernel on one target (`--axis-budget`)


class OutOfTime(RuntimeError):
    """An axis search that ran past its budget: said "not checked", never a pass."""


def storm(prober: Prober, spec: KernelSpec, params: dict[str, Any], axis: axes.Axis,
          start_passed: bool = True) -> dict[str, Any]:
    """The compile count over the storm sizes, and over the first alone (a launcher may compile several per size)."""
    sizes = storms.sizes(axis.low, axis.high)
    why = storms.not_counted(axis.name, axis.low, axis.high, sizes, start_passed)
    if why:
        return {"sizes": sizes, "compiles": None, "at_one": None, "why": why}
    return {"sizes": sizes, "compiles": prober.compiles_over(spec, params, axis.name, sizes),
            "at_one": prober.compiles_over(spec, params, axis.name, sizes[:1])}


def grow_one(prober: Prober, spec: KernelSpec, params: dict[str, Any], axis: axes.Axis,
             budget_s: float = AXIS_BUDGET_S) -> dict[str, Any]:
    """One axis: the search's answer with its two proving probes, and the compile count over three sizes."""
    started, hits = time.monotonic(), prober.memo.hits
    not_checked: list[str] = []

    def check(size: int) -> tuple[bool, limits.Observation]:
        if time.monotonic() - started > budget_s:
            raise OutOfTime(f"the search passed its {budget_s:g} s budget before {axis.name} = {size:,}")
        obs = prober.observe(spec, {**params, axis.name: size})
        if obs.not_checked:
            not_checked.append(obs.not_checked)
        return bool(obs.not_checked or limits.crossings(obs)), obs

    try:
        found = growth.search(check, axis.low, axis.high, limits.guess)
    except OutOfTime as exc:
        return {"kernel": spec.name, "target": prober.target, "target_name": prober.target_name,
                "skipped": f"{axis.name}: not checked: {exc}"}
    return {"kernel": spec.name, "target": prober.target, "target_name": prober.target_name, "axis": asdict(axis),
            "params": params,
            "last_ok": found.last_ok, "first_bad": found.first_bad,
            "ok_probe": asdict(found.ok_probe) if found.ok_probe else None,
            "bad_probe": asdict(found.bad_probe) if found.bad_probe else None,
            "crossings": [asdict(c) for c in limits.crossings(found.bad_probe)] if found.bad_probe else [],
            "not_checked": not_checked[0] if not_checked else None, "probes": found.sizes,
            "storm": storm(prober, spec, params, axis, found.last_ok is not None),
            "seconds": round(time.monotonic() - started, 2),
            "stored": prober.memo.hits - hits}  # checks answered from parity.envelope.memo (same code, same tools)


def envelope(prober: Prober, specs: Sequence[KernelSpec], grow: Sequence[axes.Axis],
             budget_s: float = AXIS_BUDGET_S) -> Iterator[dict[str, Any]]:
    """The rows one by one, so a stopped run keeps what it found."""
    target = prober.target
    for spec in specs:
        names = [a.name for a in grow] if grow else list(spec.dynamic_args)
        try:
            start = choose_start(prober, spec, grow, names)
        except axes.AxisError as exc:
            yield {"kernel": spec.name, "target": target, "skipped": str(exc)}
            continue
        if not start.axes:
            yield {"kernel": spec.name, "target": target,
                   "skipped": "no axis to grow: the spec has no dynamic_args; name one with --grow"}
            continue
        for axis in start.axes:
            row = grow_one(prober, spec, start.params, axis, budget_s)
            yield {**row, "notes": start.notes} if start.notes else row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m parity.envelope")
    parser.add_argument("target", help="ascend or cuda")
    parser.add_argument("--kernels", default="", help="names, families, modules or MODULE:NAME (comma-separated)")
    parser.add_argument("--grow", default="", help="NAME=LOW..HIGH,... (default: the specs' dynamic_args to 1M)")
    parser.add_argument("--axis-budget", type=float, default=AXIS_BUDGET_S, help="seconds per kernel, axis, target")
    parser.add_argument("--replay", default="", help="a bundle of `parity record`: its kernels' varying dimensions")
    parser.add_argument("--no-cache", action="store_true", help="check every size anew (answers are still stored)")
    args = parser.parse_args(argv)
    # the tier's driver first: spec modules may ask it at import (autotuners)
    prober = Prober(args.target, read_cache=not args.no_cache)
    names = [k.strip() for k in args.kernels.split(",") if k.strip()]
    if args.replay:
        rows = replayed.envelope(prober, args.replay, names, replay_axes.parse_grow(args.grow), args.axis_budget)
    else:
        rows = envelope(prober, build(names)[1], axes.parse_grow(args.grow), args.axis_budget)
    for row in rows:
        print("ENVELOPE " + json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
