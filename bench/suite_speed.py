"""How fast is the suite itself? Runs one tier cold, then warm, and prints where the time went.

A benchmark script, not a test: it prints figures and never asserts.

    python bench/suite_speed.py --backend cuda                 # the full cuda tier, cold then warm
    python bench/suite_speed.py --backend interpret --level quick -- -n 2
    python bench/suite_speed.py --backend cuda --json reports/suite_speed.json -- --kernels basics

"cold" starts from empty Triton and fp64-reference caches (fresh directories); "warm" re-runs
with the caches the cold run filled. Each run is the pytest command `nox -s <tier>` runs,
with the same defaults (xdist `-n auto`, autotune picks cached on disk) unless overridden
after `--`.

Harness overhead is the share of worker time that is neither compiling nor running kernels:
    busy = workers · (wall − perf pass) + perf pass
    overhead = (busy − compile − kernel − perf) / busy
where `kernel` is the accuracy pass's launch-to-sync time minus its compiles, and `perf` the
perf pass's timed runs. Idle workers at the tail of the pass count as overhead. A second
line splits the overhead that no phase covers: waits between test items, untimed work inside
cases, and idle worker time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RUN_TIERS = ("cuda", "ascend")


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cuda", help="the tier to time (default cuda)")
    p.add_argument("--level", default=None, help="case level (default: full on device tiers, quick elsewhere)")
    p.add_argument("--runs", default="cold,warm", help="comma-separated runs, in order (default cold,warm)")
    p.add_argument("--work-dir", type=Path, default=None,
                   help="where the caches and results go (default: a fresh temporary directory)")
    p.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    a = p.parse_args(argv)
    for run in a.runs.split(","):
        if run not in ("cold", "warm"):
            p.error(f"--runs takes cold and/or warm, got {run!r}")
    a.level = a.level or ("full" if a.backend in RUN_TIERS else "quick")
    return a, extra


def pytest_command(a: argparse.Namespace, extra: list[str], results: Path) -> list[str]:
    given_n = any(x == "-n" or x.startswith(("-n", "--numprocesses")) for x in extra)
    workers = [] if given_n or a.backend not in RUN_TIERS else ["-n", "auto"]
    return [sys.executable, "-m", "pytest", "suites", f"--backend={a.backend}", f"--level={a.level}",
            "--timeout=900", "-q", "-p", "no:cacheprovider", f"--results-dir={results}", *workers, *extra]


def summarize(records: list[dict[str, Any]], wall_s: float, workers: int) -> dict[str, Any]:
    """The figures of one run, from its records and its wall time (pure)."""
    from parity.report.backend_md import timing_sums

    sums = Counter(timing_sums(records))
    compile_s, perf_s = sums["compile_s"], sums["perf_s"]
    # kernel time is what a launch took beyond its compiles; records that only compiled
    # (compile tiers, the specialization sweeps) have no run_s and add none
    kernel_s = sum(max(t["run_s"] - (t.get("compile_s") or 0.0), 0.0)
                   for t in (r.get("timing") or {} for r in records) if t.get("run_s") is not None)
    w = max(workers, 1)
    busy = w * max(wall_s - perf_s, 0.0) + perf_s
    overhead = busy - compile_s - kernel_s - perf_s
    statuses = Counter(r["status"] for r in records)
    # where the overhead went: waits between test items (pytest, xdist, worker start-up), work inside
    # a case that no phase timed, and the rest of the busy time (idle workers at the tail, the
    # controller's start and finish); the first two need records stamped with case_wall_s
    stamped = [r for r in records if (r.get("timing") or {}).get("case_wall_s") is not None]
    wait_s = sum(r["timing"].get("wait_s") or 0.0 for r in stamped)
    case_wall = sum(r["timing"]["case_wall_s"] for r in stamped)
    untimed_s = case_wall - sum(phase_seconds(r["timing"]) for r in stamped)
    idle_s = busy - perf_s - case_wall - wait_s if stamped else None
    # each worker's stamped time ends at its last record, and the others wait for the slowest one;
    # a worker's longest wait is the one before its first item: start-up and collection
    span: Counter[str] = Counter()
    first_wait: dict[str, float] = {}
    for r in stamped:
        worker, wait = r.get("worker") or "?", r["timing"].get("wait_s") or 0.0
        span[worker] += r["timing"]["case_wall_s"] + wait
        first_wait[worker] = max(first_wait.get(worker, 0.0), wait)
    tail_s = sum(max(span.values()) - s for s in span.values()) if span else None
    return {
        "wall_s": wall_s, "workers": w, "cases": len(records), "statuses": dict(statuses),
        "compile_s": compile_s, "kernel_s": kernel_s, "perf_s": perf_s,
        "ref_s": sums["ref_s"], "compare_s": sums["compare_s"], "inputs_s": sums["inputs_s"],
        "repro_s": sums["repro_s"], "store_s": sums["store_s"], "busy_worker_s": busy,
        "overhead_share": overhead / busy if busy > 0 else None,
        "wait_s": wait_s if stamped else None, "untimed_s": untimed_s if stamped else None, "idle_s": idle_s,
        "tail_s": tail_s, "first_wait_s": max(first_wait.values()) if first_wait else None,
    }


def phase_seconds(timing: dict[str, Any]) -> float:
    """Seconds of one record's timed phases (run_s already includes its compiles)."""
    skip = {"case_wall_s", "wait_s", "perf_s"} | ({"compile_s"} if timing.get("run_s") is not None else set())
    return sum(v for k, v in timing.items() if k not in skip and isinstance(v, (int, float)))


def worker_count(env_json: Path) -> int:
    try:
        return int(json.loads(env_json.read_text()).get("xdist_workers") or 1)
    except (OSError, ValueError):
        return 1


def run_once(a: argparse.Namespace, extra: list[str], work: Path, name: str) -> dict[str, Any]:
    from parity.results import load_results

    results = work / f"results-{name}"
    if name == "cold":  # start from nothing: no compiled kernels, no autotune picks, no references
        for cache in ("triton-cache", "parity-cache"):
            shutil.rmtree(work / cache, ignore_errors=True)
    env = dict(os.environ, TRITON_CACHE_DIR=str(work / "triton-cache"), PARITY_CACHE_DIR=str(work / "parity-cache"),
               TRITON_CACHE_AUTOTUNING="1")
    cmd = pytest_command(a, extra, results)
    print(f"[{name}] {' '.join(cmd[1:])}", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env)
    wall = time.perf_counter() - t0
    try:
        records = load_results(results)
    except FileNotFoundError:
        records = []
    fig = summarize(records, wall, worker_count(results / "env.json"))
    fig.update(run=name, exit_code=proc.returncode)
    return fig


def render(rows: list[dict[str, Any]], a: argparse.Namespace) -> str:
    head = (f"{'run':5s} {'wall s':>8s} {'workers':>7s} {'cases':>6s} {'compile s':>9s} {'kernel s':>8s} "
            f"{'perf s':>7s} {'ref s':>7s} {'compare s':>9s} {'inputs s':>8s} {'overhead':>8s}  exit")
    lines = [f"suite speed: backend {a.backend}, level {a.level}", head, "-" * len(head)]
    for r in rows:
        share = "-" if r["overhead_share"] is None else f"{100 * r['overhead_share']:.1f}%"
        lines.append(f"{r['run']:5s} {r['wall_s']:8.1f} {r['workers']:7d} {r['cases']:6d} {r['compile_s']:9.1f} "
                     f"{r['kernel_s']:8.1f} {r['perf_s']:7.1f} {r['ref_s']:7.1f} {r['compare_s']:9.1f} "
                     f"{r['inputs_s']:8.1f} {share:>8s}  {r['exit_code']}")
    for r in rows:
        if r.get("idle_s") is not None:
            lines.append(f"{r['run']}: overhead breakdown (worker s): between test items {r['wait_s']:.1f} "
                         f"(of which up to {r['first_wait_s']:.1f} per worker before its first item), untimed "
                         f"inside cases {r['untimed_s']:.1f}, idle {r['idle_s']:.1f} (of which {r['tail_s']:.1f} "
                         f"waiting for the slowest worker; the rest is process start-up and the controller's own "
                         f"start and finish), store {r['store_s']:.1f}, repro {r['repro_s']:.1f}")
    by_run = {r["run"]: r for r in rows}
    if "cold" in by_run and "warm" in by_run and by_run["cold"]["wall_s"] > 0:
        lines.append(f"warm / cold wall: {by_run['warm']['wall_s'] / by_run['cold']['wall_s']:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    a, extra = parse_args(argv)
    work = a.work_dir or Path(tempfile.mkdtemp(prefix="parity-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = [run_once(a, extra, work, name) for name in a.runs.split(",")]
    print(render(rows, a))
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"backend": a.backend, "level": a.level, "extra": extra, "runs": rows},
                                     indent=2) + "\n")
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
