"""`parity envelope NAMES [--grow T=1..1M,B=1..64]`: every target's envelope in its own venv, then the sentences.

Each target runs `python -m parity.envelope TARGET` with the python of its compile tier's venv (upstream triton
and triton-ascend never share a process), both at once; a target whose venv is missing is said so, not skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import parity.envelope.rendering as rendering
from parity.backends import backend_class, tiers_where
from parity.report import envelope_md
from parity.results import ResultsDir, atomic_write_text

REPO = Path(__file__).resolve().parents[2]


def targets() -> list[str]:
    """Every target a compile tier builds for (Backend.target), in the backends' order."""
    found = [backend_class(t).target for t in tiers_where(mode="compile")]
    return [t for i, t in enumerate(found) if t and t not in found[:i]]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kernels", nargs="*",
                        help="names, families, modules, .py paths or MODULE:NAME (default: every shared kernel)")
    parser.add_argument("--grow", default="", help="the axes and their ranges, e.g. T=1..1M,B=1..64 (K = 1,024, "
                        "M = 1,048,576); default: each spec's dynamic_args from its largest case to 1M")
    parser.add_argument("--targets", default="", help="comma-separated targets (default: every compile tier's)")
    parser.add_argument("--axis-budget", type=float, default=300.0, help="seconds one kernel's axis may search on "
                        "one target before it is said to be not checked (default 300)")
    parser.add_argument("--json", type=Path, default=None, help="also write every row, with its probes, here")
    parser.add_argument("--replay", default="", metavar="BUNDLE", help="a `parity record` bundle: grow each recorded "
                        "kernel along the dimensions that vary between its launches (KERNELS then narrows by kernel "
                        "name or module; --grow names a member, e.g. q.1=..1M or x.0+n=..1M)")
    parser.add_argument("--results-dir", type=Path, default=None, help="also write the rows to DIR/envelope.jsonl "
                        "(replacing an earlier envelope's), for `parity report DIR`'s envelope section")
    parser.add_argument("--no-cache", action="store_true", help="check every size anew rather than reuse the "
                        "answers stored for the same code and tools (parity.envelope.memo); they are stored again")


def python_of(target: str) -> tuple[str | None, str]:
    """The python of the compile tier for `target`, or None and the command that creates it."""
    tiers = tiers_where(mode="compile", target=target)
    if not tiers:
        return None, f"no compile tier targets {target!r}"
    venv = backend_class(tiers[0]).venv or tiers[0]
    python = REPO / ".nox" / venv / "bin" / "python"
    return (str(python), "") if python.exists() else (None, f"no venv {python.parent.parent}; run `nox -s {venv}`")


def start(target: str, python: str, args: argparse.Namespace) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # a compile tier never interprets
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.getcwd(), env.get("PYTHONPATH", "")) if p)
    env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"  # the venv's tools (bishengir-compile)
    cmd = [python, "-m", "parity.envelope", target, "--kernels", ",".join(args.kernels), "--grow", args.grow,
           "--axis-budget", str(args.axis_budget), *(["--replay", args.replay] if args.replay else []),
           *(["--no-cache"] if args.no_cache else [])]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def collect(target: str, proc: subprocess.Popen[str]) -> tuple[list[dict[str, Any]], str | None]:
    out, err = proc.communicate()
    rows = [json.loads(line[len("ENVELOPE "):]) for line in out.splitlines() if line.startswith("ENVELOPE ")]
    if proc.returncode != 0:
        tail = "\n".join(err.strip().splitlines()[-6:])
        return rows, f"the {target} envelope stopped (exit {proc.returncode}):\n{tail}"
    return rows, None


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    known = targets()
    chosen = [t.strip() for t in args.targets.split(",") if t.strip()] or known
    unknown = [t for t in chosen if t not in known]
    if unknown:
        print(f"parity envelope: unknown target {', '.join(unknown)}; name {' or '.join(known)}", file=sys.stderr)
        return 2
    procs, rows, problems = {}, [], []
    for target in chosen:
        python, why = python_of(target)
        if python is None:
            problems.append(f"{target}: not checked: {why}")
            continue
        procs[target] = start(target, python, args)
    for target, proc in procs.items():
        got, problem = collect(target, proc)
        rows += got
        problems += [problem] if problem else []
    rows.sort(key=lambda r: (r["kernel"], r["target"], (r.get("axis") or {}).get("name", "")))
    print(rendering.table(rows) + "\n")
    for row in rows:
        print("- " + rendering.said(row))
    for problem in problems:
        print(f"parity envelope: {problem}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    if args.results_dir:
        taken = datetime.now(timezone.utc).isoformat(timespec="seconds")
        atomic_write_text(ResultsDir(args.results_dir).envelope, envelope_md.dumps(rows, taken))
    kernels = len({r["kernel"] for r in rows})
    print(f"\n{kernels} kernel(s) on {len(procs)} target(s) in {time.monotonic() - started:.0f} s (compile-only)")
    return 1 if problems else 0
