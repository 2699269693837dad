"""The perf pass: after every accuracy case has run, time the chosen ones alone on the device.

Timing inside the accuracy pass would overlap other xdist workers' kernels on the same
device; here the controller times one case at a time, so the figures are clean whatever
`-n` the accuracy pass used.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from parity.backends.base import Backend
from parity.run import perf
from parity.run.faults import is_sticky_device_error
from parity.run.runner import error_text, measure_case
from parity.spec import Case, KernelSpec

Progress = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(cases: Mapping[tuple[str, str], tuple[KernelSpec, Case]], records: list[dict[str, Any]], backend: Backend,
        *, seed: int, mode: str, progress: Progress = _stderr) -> int:
    """Fill `perf` (and timing.perf_s) of the chosen passing records in place; returns how many were timed.

    `cases` maps (kernel, case id) to the spec and case that ran.
    """
    by_name = {spec.name: spec for spec, _ in cases.values()}
    passed = {(r["kernel"], r["case"]): r for r in records
              if r.get("suite") == "accuracy" and r["status"] in ("passed", "xpassed") and r["kernel"] in by_name}
    candidates = []
    for (kernel, case_id), r in passed.items():
        spec = by_name[kernel]
        candidates.append((kernel, case_id, r["params"], perf.case_size(spec.bytes, spec.flops, r["params"])))
    chosen = perf.pick_cases(candidates, mode)
    if not chosen:
        return 0
    progress(f"parity perf: timing {len(chosen)} case(s) alone on {backend.device} ({mode})")
    done = 0
    for i, key in enumerate(chosen, 1):
        if key not in cases:
            continue
        spec, case = cases[key]
        record = passed[key]
        t0 = time.perf_counter()
        try:
            record["perf"] = measure_case(spec, case, backend, seed=seed)
            record["perf"]["device"] = backend.device  # one device, one timed case at a time
        except Exception as exc:  # a broken timing must not lose the accuracy results
            reason = error_text(exc)
            record["perf"] = {"ms": None, "error": reason}
            if is_sticky_device_error(reason):
                progress(f"parity perf: stopped, the device context is poisoned: {reason}")
                break
        record.setdefault("timing", {})["perf_s"] = time.perf_counter() - t0
        done += 1
        ms = record["perf"].get("ms")
        progress(f"parity perf [{i}/{len(chosen)}] {spec.name}[{case.id}] "
                 + (f"{ms:.4f} ms" if ms is not None else f"error: {record['perf']['error'][:120]}"))
    return done
