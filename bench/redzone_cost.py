"""What red zones (parity.run.redzone) cost a CPU tier: each case's run_s with and without them.

    TRITON_INTERPRET=1 python bench/redzone_cost.py --backend interpret --kernels basics
    python bench/redzone_cost.py --backend ascend-lowered --kernels basics

Each case runs three times per setting, alternating (guarded, unguarded, ...), after one warm run that
compiles; the median launch time (run_s) is printed per kernel and in total. It also prints whether the
two settings gave the same status, so a guard that changed a clean kernel's verdict shows up here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="interpret")
    parser.add_argument("--kernels", default="basics")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from parity.backends import get_backend
    from parity.spec import registry
    from parity.spec.context import set_current_backend

    backend = get_backend(args.backend)
    set_current_backend(backend.name)
    backend.prepare()
    if backend.unavailable():
        print(f"{backend.name} unavailable: {backend.unavailable()}")
        return 2
    from parity.run import redzone
    from parity.run.refcache import ReferenceCache
    from parity.run.runner import run_case

    _, specs = registry.build([k.strip() for k in args.kernels.split(",")])
    cache = ReferenceCache(enabled=True)
    rows, total, changed = [], {True: 0.0, False: 0.0}, []
    for spec in specs:
        if spec.compile_only or (spec.unavailable is not None and spec.unavailable()):
            continue
        times: dict[bool, list[float]] = {True: [], False: []}
        for case in spec.cases("quick"):
            run_case(spec, case, backend, seed=0, cache=cache)  # compile outside the figures
            seen = {}
            for _ in range(args.repeats):
                for guarded in (True, False):
                    redzone.ENABLED = guarded
                    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
                    times[guarded].append(record["timing"].get("run_s") or 0.0)
                    seen[guarded] = record["status"]
            redzone.ENABLED = True
            if seen[True] != seen[False]:
                changed.append(f"{spec.name}[{case.id}]: guarded {seen[True]}, unguarded {seen[False]}")
        if not times[True]:
            continue
        on, off = statistics.median(times[True]), statistics.median(times[False])
        total[True] += sum(times[True]) / args.repeats
        total[False] += sum(times[False]) / args.repeats
        rows.append((spec.name, len(times[True]) // args.repeats, on * 1e3, off * 1e3))
    print(f"{'kernel':32} {'cases':>5} {'guarded ms':>11} {'unguarded ms':>13} {'ratio':>6}  (median run_s per case)")
    for name, n, on, off in rows:
        print(f"{name:32} {n:5d} {on:11.2f} {off:13.2f} {on / off if off else float('nan'):6.2f}")
    print(f"total run_s per pass: guarded {total[True]:.2f} s, unguarded {total[False]:.2f} s "
          f"({total[True] / total[False] if total[False] else float('nan'):.2f}x)")
    print("status changed by the guard:", "; ".join(changed) if changed else "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
