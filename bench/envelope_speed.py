"""How long does `parity envelope` over every shared kernel take? Runs it cold, then warm, and prints the figures.

A benchmark script, not a test: it prints figures and never asserts.

    python bench/envelope_speed.py                       # cold (a fresh parity cache dir), then warm (the same dir)
    python bench/envelope_speed.py --cache-dir D --runs warm,warm   # two warm runs over a cache D already holds
    python bench/envelope_speed.py --kernels examples.user_kernels.l2norm --json reports/envelope_speed.json

"cold" points PARITY_CACHE_DIR at a fresh directory: Triton's compiles, bishengir's memo and the envelope's stored
answers (parity.envelope.memo) all start empty. "warm" runs again over the directory the previous run filled:
every check whose code and tools are unchanged is answered from the store. Each run is `python -m parity envelope`
as the README gives it, with its own options after `--`. The machine's load average is printed before and
after each run (the machine may be shared: the wall time alone says little without it), with the CPU time of the
command and its children, and per target the rows' own seconds and how many checks the store answered.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".nox" / "venv-upstream" / "bin" / "python"  # any python with parity; the targets pick their own


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def one_run(name: str, cache: Path, kernels: list[str], extra: list[str], out: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PARITY_CACHE_DIR"] = str(cache)
    cmd = [str(PYTHON if PYTHON.exists() else sys.executable), "-m", "parity", "envelope", *kernels,
           "--json", str(out), *extra]
    before_load, before = load(), resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = json.loads(out.read_text()) if out.exists() else []
    return {"run": name, "wall_s": round(wall, 1), "exit": proc.returncode,
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "load_before": before_load, "load_after": load(), "rows": rows,
            "stderr_tail": proc.stderr.strip().splitlines()[-3:]}


def per_target(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per target: rows, the rows' own seconds, checks answered from the store, checks made (probes + counts)."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        t = out[str(r["target"])]
        t["rows"] += 1
        t["row_seconds"] += float(r.get("seconds") or 0)
        t["stored"] += float(r.get("stored") or 0)
        t["checks"] += len(r.get("probes") or []) + (2 if r.get("storm") else 0)
        t["past_budget"] += 1 if "budget" in str(r.get("skipped") or "") else 0
    return {k: dict(v) for k, v in out.items()}


def slowest(rows: list[dict[str, Any]], n: int = 8) -> list[str]:
    ranked = sorted(rows, key=lambda r: -float(r.get("seconds") or 0))[:n]
    return [f"{r['kernel']} {r['target']} {(r.get('axis') or {}).get('name', '-')}: {r.get('seconds', 0)} s, "
            f"{len(r.get('probes') or [])} probes, {r.get('stored', 0)} stored" for r in ranked if r.get("seconds")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache-dir", type=Path, default=None, help="PARITY_CACHE_DIR for the runs (default: a "
                        "fresh temporary one, so the first run is cold)")
    parser.add_argument("--runs", default="cold,warm", help="names of the runs, in order, over one cache dir")
    parser.add_argument("--kernels", nargs="*", default=[], help="as `parity envelope`'s (default: every shared one)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("extra", nargs="*", help="after --: options for `parity envelope` (e.g. --axis-budget 90)")
    args = parser.parse_args()
    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix="parity-envelope-bench-"))
    print(f"cache dir {cache}; {os.cpu_count()} cores; load average (1, 5, 15 min) now {load()}")
    results = []
    for name in [r.strip() for r in args.runs.split(",") if r.strip()]:
        res = one_run(name, cache, args.kernels, args.extra, cache.parent / f"{cache.name}-{name}.json")
        results.append(res)
        print(f"\n{name}: {res['wall_s']} s wall, {res['cpu_s']} s CPU (command and children), exit {res['exit']}; "
              f"load average {res['load_before']} before, {res['load_after']} after")
        for target, fig in per_target(res["rows"]).items():
            print(f"  {target}: {fig['rows']:.0f} rows, rows' own {fig['row_seconds']:.0f} s, {fig['checks']:.0f} "
                  f"checks, {fig['stored']:.0f} answered from the store, {fig['past_budget']:.0f} past the budget")
        for line in slowest(res["rows"]):
            print(f"  slowest: {line}")
        for line in res["stderr_tail"]:
            print(f"  stderr: {line}")
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if k != "rows"} for r in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
