"""Record-and-replay speed figures (issue 41), printed, never asserted.

1. Recording overhead: the wall time of a command alone and under `parity record` (default
   deduplication), best of --repeats each, and their ratio (goal: at most 1.5x).
2. Replay cost per launch against a spec case of the same size on the same tier: the l2norm spec's
   quick cases (examples.user_kernels.l2norm) run as a spec, and the same 12 launches recorded from
   a script and replayed; mean `timing.case_wall_s` per case from each results dir (goal: replay
   no dearer than the spec).

    TRITON_INTERPRET=1 .nox/interpret/bin/python bench/record_replay.py            # CPU, interpreter
    .nox/cuda/bin/python bench/record_replay.py --backend cuda                     # on a GPU node
    python bench/record_replay.py --cmd "python -m pytest tests/test_ops.py -q"    # your own command
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def overhead(cmd: list[str], repeats: int, env: dict[str, str]) -> None:
    plain, recorded = [], []
    for i in range(repeats):
        plain.append(wall(cmd, env))
        with tempfile.TemporaryDirectory() as tmp:
            recorded.append(wall([sys.executable, "-m", "parity", "record", "--out", f"{tmp}/b{i}", "--", *cmd],
                                 env))
    print(f"recording overhead: {shlex.join(cmd)}")
    print(f"  plain     best {min(plain):.2f} s  (runs: {', '.join(f'{t:.2f}' for t in plain)})")
    print(f"  recorded  best {min(recorded):.2f} s  (runs: {', '.join(f'{t:.2f}' for t in recorded)})")
    print(f"  ratio {min(recorded) / min(plain):.2f}x (goal: at most 1.5x)")


def case_walls(results: Path, kernel: str) -> list[float]:
    walls = []
    for line in (results / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["kernel"] == kernel and r.get("suite") == "accuracy":
            walls.append(r["timing"]["case_wall_s"])
    return walls


def replay_cost(backend: str, env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "bundle"
        subprocess.run([sys.executable, "-m", "parity", "record", "--out", str(bundle), "--", sys.executable, "-m",
                        "examples.workload.run", "--spec-shapes"], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        runs = {"spec": ["--kernels", "examples.user_kernels.l2norm"], "replay": ["--replay", str(bundle)]}
        means = {}
        for label, extra in runs.items():
            out = Path(tmp) / label
            subprocess.run([sys.executable, "-m", "pytest", "suites/test_accuracy.py", f"--backend={backend}",
                            "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "--no-ref-cache", "--no-perf",
                            "--results-dir", str(out), *extra], cwd=ROOT, env=env, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            kernel = "user_l2norm_rows" if label == "spec" else "l2norm_rows_kernel"
            walls = case_walls(out, kernel)
            # the first case of a run pays its compiles (or the interpreter's warm-up): shown apart
            means[label] = statistics.mean(walls[1:]) if len(walls) > 1 else float("nan")
            print(f"{label:6s} on {backend}: {len(walls)} cases, first {walls[0] * 1e3:.1f} ms, "
                  f"then mean {means[label] * 1e3:.1f} ms per case")
        print(f"replay / spec per case: {means['replay'] / means['spec']:.2f}x (goal: at most 1x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cmd", default=f"{sys.executable} -m examples.workload.run 20",
                        help="the command whose recording overhead is measured")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backend", default="interpret")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    if args.backend == "interpret":
        env["TRITON_INTERPRET"] = "1"
    overhead(shlex.split(args.cmd), args.repeats, env)
    replay_cost(args.backend, env)


if __name__ == "__main__":
    main()
