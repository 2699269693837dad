"""Record-and-replay speed figures (issue 41), printed, never asserted.

1. Recording overhead: the wall time of a command alone and under `parity record` (default
   deduplication), best of --repeats each, and their ratio (goal: at most 1.5x).
2. Replay cost per launch against a spec case of the same size on the same tier: the l2norm spec's
   quick cases (examples.user_kernels.l2norm) run as a spec, and the same 12 launches recorded from
   a script (`examples.workload.run --spec-shapes`, under the interpreter) and replayed.
   - The halves run interleaved (spec, replay, spec, replay, ...: --repeats rounds), each round one
     pytest process per half with the same flags (one worker, no reference cache, no perf pass) and
     the same OMP_NUM_THREADS (--threads).
   - They are compared size for size: each launch against the spec case of the same T, D and dtype,
     per case, so start-up and collection are not in the figures. Two clocks: the item's CPU time
     (bench/case_cpu_plugin.py: what a case costs whatever the machine's load) and the records'
     `timing.case_wall_s` (what it took). The first case of each process pays the kernel's first
     launch and is shown apart.
   - Per half: best and median over the rounds of the mean per case, and the ratio of each (goal:
     replay no dearer than the spec); the median of each phase; per size; the load average.

    TRITON_INTERPRET=1 .nox/interpret/bin/python bench/record_replay.py            # CPU, interpreter
    python bench/record_replay.py --part replay --backend cuda-compile --repeats 8   # a compile tier
    .nox/venv-ascend/bin/python bench/record_replay.py --part replay --backend ascend-lowered --bundle B
                                     # B: recorded by a run of this script in an upstream-triton venv with --bundle B
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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from parity.record.bundle import load_bundle  # noqa: E402  (after the checkout is on the path)

COMPILE_TIERS = ("cuda-compile", "ascend-compile")
PHASES = ("inputs_s", "ref_s", "run_s", "compare_s", "store_s", "compile_s")  # compile_s: the compile tiers' one
SPEC, REPLAY = "spec", "replay"
KERNELS = {SPEC: "user_l2norm_rows", REPLAY: "l2norm_rows_kernel"}


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


# ---------------------------------------------------------------- replay cost


def spec_case_of(entry: Mapping[str, Any]) -> str:
    """The l2norm spec's case id for a recorded launch of its kernel: x's [T, D] and dtype."""
    x = entry["views"][entry["args"][0]["tensor"]]
    short = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}[x["dtype"]]
    return f"T={x['shape'][0]},D={x['shape'][1]},dtype={short}"


def case_times(results: Path, cpu_file: Path, kernel: str, size_of: Callable[[Mapping[str, Any]], str]
               ) -> dict[str, dict[str, float]]:
    """Size -> {case_wall_s, wait_s, each phase (from the records), cpu_s, item_s (from case_cpu_plugin)}, summed
    over the case's records (a compile tier may write more than one per case)."""
    out: dict[str, dict[str, float]] = {}
    # the plugin's lines first: they are in the order the cases ran (results.jsonl is sorted)
    lines = [json.loads(x) for x in cpu_file.read_text().splitlines()] if cpu_file.is_file() else []
    lines += [json.loads(x) for x in (results / "results.jsonl").read_text().splitlines()]
    for r in lines:
        if r["kernel"] != kernel or r.get("suite", "compile") not in ("accuracy", "compile"):
            continue
        t = out.setdefault(size_of(r), {})
        timing = {**(r.get("timing") or {}), **{k: r[k] for k in ("cpu_s", "wall_s") if k in r}}
        for k, v in timing.items():
            if isinstance(v, (int, float)) and k in (*PHASES, "case_wall_s", "wait_s", "cpu_s", "wall_s"):
                t[k] = t.get(k, 0.0) + v
    return out


def one_run(backend: str, extra: list[str], out: Path, cpu_file: Path, env: dict[str, str]) -> None:
    suite = "suites/test_compile.py" if backend in COMPILE_TIERS else "suites/test_accuracy.py"
    # the same flags for both halves: one process (no xdist), no fp64 reference cache, no perf pass
    cmd = [sys.executable, "-m", "pytest", suite, f"--backend={backend}", "-p", "no:cacheprovider", "-p", "no:xdist",
           "-p", "case_cpu_plugin", "-q", "--no-ref-cache", "--no-perf", "--results-dir", str(out), *extra]
    env = {**env, "BENCH_CASE_TIMES": str(cpu_file),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "bench"), env.get("PYTHONPATH", "")])}
    done = subprocess.run(cmd, cwd=ROOT, env=env, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if not (out / "results.jsonl").is_file():
        raise SystemExit(f"{shlex.join(cmd)} wrote no results (exit {done.returncode}):\n{done.stdout[-2000:]}")


def record_spec_shapes(bundle: Path, env: dict[str, str]) -> None:
    """The spec's quick shapes, one launch each, recorded under the interpreter (no device needed)."""
    subprocess.run([sys.executable, "-m", "parity", "record", "--out", str(bundle), "--", sys.executable, "-m",
                    "examples.workload.run", "--spec-shapes"], cwd=ROOT, env={**env, "TRITON_INTERPRET": "1"},
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ms(x: float) -> str:
    return f"{x * 1e3:8.2f}"


Runs = dict[str, list[dict[str, dict[str, float]]]]


def interleaved_runs(backend: str, repeats: int, bundle: Path | None, env: dict[str, str]
                     ) -> tuple[Path, Runs, list[float]]:
    """(the bundle, per half the case times of each round, the load average at each run's start)."""
    with tempfile.TemporaryDirectory() as tmp:
        if bundle is None or not bundle.exists():  # recorded here (and kept where --bundle names a new path)
            bundle = bundle or Path(tmp) / "bundle"
            record_spec_shapes(bundle, env)
        launches = [e for e in load_bundle(bundle).launches if e["kernel"].get("qualname") == KERNELS[REPLAY]]
        size_of = {SPEC: lambda r: r["case"], REPLAY: lambda r: spec_case_of(launches[r["params"]["launch"]])}
        extra = {SPEC: ["--kernels", "examples.user_kernels.l2norm"], REPLAY: ["--replay", str(bundle)]}
        runs: Runs = {SPEC: [], REPLAY: []}
        loads = []
        for i in range(repeats):  # interleaved, so that a change of load falls on both halves alike
            for label in (SPEC, REPLAY):
                loads.append(os.getloadavg()[0])
                out, cpu_file = Path(tmp) / f"{label}-{i}", Path(tmp) / f"{label}-{i}.cpu.jsonl"
                one_run(backend, extra[label], out, cpu_file, env)
                runs[label].append(case_times(out, cpu_file, KERNELS[label], size_of[label]))
        loads.append(os.getloadavg()[0])
    return bundle, runs, loads


def replay_cost(backend: str, repeats: int, bundle: Path | None, env: dict[str, str]) -> None:
    if backend == "interpret":
        env = {**env, "TRITON_INTERPRET": "1"}
    bundle, runs, loads = interleaved_runs(backend, repeats, bundle, env)
    # the first case each process ran pays the kernel's first launch; it is shown apart, and so is its size in the
    # other half (dicts keep the order the plugin's lines gave: the order the cases ran)
    first = {next(iter(run)) for label in runs for run in runs[label]}
    sizes = set.intersection(*(set(run) for label in runs for run in runs[label])) - first
    print(f"replay cost per launch on {backend}: l2norm's quick cases as a spec and as a replay of their recording; "
          f"{repeats} rounds of spec then replay, one pytest process each (-p no:xdist --no-ref-cache --no-perf; "
          f"OMP_NUM_THREADS={env.get('OMP_NUM_THREADS', 'unset')})")
    print(f"  load average (1 min) at each run's start: first {loads[0]:.2f}, median {statistics.median(loads):.2f}, "
          f"max {max(loads):.2f}, last {loads[-1]:.2f}; {os.cpu_count()} cores")
    print(f"  compared: {len(sizes)} sizes in both halves; apart: {', '.join(sorted(first))} (each run's first case)")
    if not sizes:
        print("  no size ran in both halves: nothing to compare")
        return
    print("  mean per case (ms), over the rounds:      best    median")
    for key, what in (("cpu_s", "CPU time (the item, all threads)"), ("case_wall_s", "wall (timing.case_wall_s)")):
        if not all(key in run[s] for label in runs for run in runs[label] for s in sizes):
            continue
        means = {label: [statistics.mean(run[s][key] for s in sizes) for run in runs[label]] for label in runs}
        print(f"    {what}")
        for label in runs:
            print(f"      {label:32s} {ms(min(means[label]))}  {ms(statistics.median(means[label]))}")
        best = min(means[REPLAY]) / min(means[SPEC])
        median = statistics.median(means[REPLAY]) / statistics.median(means[SPEC])
        print(f"      replay / spec                    {best:7.2f}x  {median:7.2f}x   (goal: at most 1x)")
    firsts = {label: statistics.median(run[s]["case_wall_s"] for run in runs[label] for s in first if s in run)
              for label in runs}
    print(f"  first case's wall, median (ms): spec {ms(firsts[SPEC]).strip()}, replay {ms(firsts[REPLAY]).strip()}")
    phases = ("compile_s",) if backend in COMPILE_TIERS else PHASES[:-1]
    print("  wall per case and phase, median (ms): " + " ".join(f"{p[:-2]:>8s}" for p in (*phases, "other")))
    for label in runs:
        cols = [statistics.median(statistics.mean(run[s].get(p, 0.0) for s in sizes) for run in runs[label])
                for p in (*phases, "case_wall_s")]
        print(f"    {label:34s} " + " ".join(ms(c) for c in (*cols[:-1], cols[-1] - sum(cols[:-1]))))
    key = "cpu_s" if all("cpu_s" in run[s] for label in runs for run in runs[label] for s in sizes) else "case_wall_s"
    print(f"  per size, median {key} over the rounds (ms):    spec   replay   ratio")
    for s in sorted(sizes, key=lambda s: (int(s.split(",")[0][2:]), s)):
        a, b = (statistics.median(run[s][key] for run in runs[label]) for label in (SPEC, REPLAY))
        print(f"    {s:38s} {ms(a)} {ms(b)} {b / a:6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cmd", default=f"{sys.executable} -m examples.workload.run 20",
                        help="the command whose recording overhead is measured")
    parser.add_argument("--repeats", type=int, default=5,
                        help="runs of each command (overhead) and rounds of spec then replay (replay cost)")
    parser.add_argument("--backend", default="interpret")
    parser.add_argument("--part", choices=("both", "overhead", "replay"), default="both")
    parser.add_argument("--threads", default="1",
                        help="OMP_NUM_THREADS for both halves of the replay cost (default 1: on a shared machine "
                             "torch's spinning intra-op threads make a case's time a function of the load; 'keep' "
                             "leaves the environment's)")
    parser.add_argument("--bundle", type=Path, default=None,
                        help="the recording of `examples.workload.run --spec-shapes` to replay: recorded there and "
                             "kept where it does not exist yet (so that a venv that cannot record under the "
                             "interpreter, or a second tier, replays the same one)")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    if args.part in ("both", "overhead"):
        overhead(shlex.split(args.cmd), args.repeats, {**env, "TRITON_INTERPRET": "1"}
                 if args.backend == "interpret" else env)
    if args.part in ("both", "replay"):
        replay_env = env if args.threads == "keep" else {**env, "OMP_NUM_THREADS": args.threads}
        replay_cost(args.backend, args.repeats, args.bundle, replay_env)


if __name__ == "__main__":
    main()
