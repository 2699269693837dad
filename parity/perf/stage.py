"""The perf pass: after every accuracy case has run, time cases alone on the device.

Timing inside the accuracy pass would overlap other xdist workers' kernels on the same
device; here the controller times one case at a time, so the figures are clean whatever
`-n` the accuracy pass used.

On a device, a spec's `perf_cases` (the sizes users run) are timed as records of their own
(suite "perf"), each checked once against fp64 on the device, against the roof this run
measured (parity.perf.roofline). Specs without perf cases, and hosts that are no measure of
speed (an explicit --perf on interpret), time the chosen passing accuracy cases instead.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parity.backends.base import Backend
from parity.errors import error_text
from parity.perf import figures as perf
from parity.perf import pick_cache, roofline
from parity.perf.case import measure_case, run_perf_case
from parity.results import Record, Status
from parity.run.faults import is_sticky_device_error
from parity.spec import Case, KernelSpec

Progress = Callable[[str], None]
RoofProbe = Callable[[Backend], roofline.Roof | None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def probe_roof(backend: Backend) -> roofline.Roof | None:
    """The measured roof of a device backend; none on hosts whose speed means nothing (interpret)."""
    if not backend.times_kernels or backend.mode != "run":
        return None
    return roofline.measure_roof(backend.device, backend.device_name(), backend.time_ms)


def perf_case_plan(specs: Sequence[KernelSpec], use_perf_cases: bool) -> list[tuple[KernelSpec, Case]]:
    """(spec, perf case) to time as records of their own; empty where perf cases are not used."""
    if not use_perf_cases:
        return []
    return [(spec, case) for spec in specs if not spec.compile_only and spec.timed for case in spec.perf_cases]


def run(cases: Mapping[tuple[str, str], tuple[KernelSpec, Case]], records: list[Record], backend: Backend,
        *, seed: int, mode: str, specs: Sequence[KernelSpec] = (), use_perf_cases: bool = False,
        progress: Progress = _stderr, roof_probe: RoofProbe = probe_roof, retune: bool = False) -> int:
    """Fill `perf` of the chosen passing accuracy records in place and append the perf-case records;
    returns how many cases were timed. `cases` maps (kernel, case id) to the spec and case that ran.
    Autotuners reuse the picks earlier runs stored (parity.perf.pick_cache) unless `retune`."""
    store = pick_cache.store_for(backend, retune=retune)
    with pick_cache.reusing_picks(store):
        done = _run(cases, records, backend, seed=seed, mode=mode, specs=specs, use_perf_cases=use_perf_cases,
                    progress=progress, roof_probe=roof_probe, store=store)
    if store.reused or store.tuned:
        progress(f"parity perf: autotune picks reused {store.reused}, tuned {store.tuned}"
                 + (" (--retune)" if retune else ""))
    return done


def _run(cases: Mapping[tuple[str, str], tuple[KernelSpec, Case]], records: list[Record], backend: Backend,
         *, seed: int, mode: str, specs: Sequence[KernelSpec], use_perf_cases: bool, progress: Progress,
         roof_probe: RoofProbe, store: pick_cache.PickStore) -> int:
    plan = perf_case_plan(specs, use_perf_cases) if mode != "off" else []
    with_perf_cases = {spec.name for spec, _ in plan}
    chosen = _chosen_accuracy(cases, records, mode, skip=with_perf_cases)
    if not plan and not chosen:
        return 0
    roof = roof_probe(backend)
    if roof is not None:
        progress(f"parity perf: roof of {backend.device}: {roofline.roof_line(roof.as_dict())}")
    total, done = len(plan) + len(chosen), 0
    declined = declined_ops(records)
    untimed = sorted(s.name for s in specs if not s.timed)
    progress(f"parity perf: timing {total} case(s) alone on {backend.device} ({len(plan)} at perf sizes)"
             + (f"; not timed (KernelSpec.timed=False): {', '.join(untimed)}" if untimed else ""))
    for spec, case in plan:
        t0, before = time.perf_counter(), store.counts()
        store.picked.clear()
        record = run_perf_case(spec, case, backend, seed=seed, roof=roof, declined=declined.get(spec.name))
        record["timing"]["perf_s"] = time.perf_counter() - t0
        _note_picks(record, before, store)
        records.append(record)
        done += 1
        progress(f"parity perf [{done}/{total}] {spec.name}[{case.id}] {_line(record)}")
        if record["status"] is Status.ERROR and is_sticky_device_error(record["reason"] or ""):
            progress(f"parity perf: stopped, the device context is poisoned: {record['reason']}")
            return done
    for spec, case, record in chosen:
        t0, before = time.perf_counter(), store.counts()
        store.picked.clear()
        figures: dict[str, Any]
        try:
            figures = record["perf"] = with_roof(measure_case(spec, case, backend, seed=seed), spec, case, roof)
            figures["device"] = backend.device  # one device, one timed case at a time
        except Exception as exc:  # a broken timing must not lose the accuracy results
            reason = error_text(exc)
            figures = record["perf"] = {"ms": None, "error": reason}
            if is_sticky_device_error(reason):
                progress(f"parity perf: stopped, the device context is poisoned: {reason}")
                break
        record.setdefault("timing", {})["perf_s"] = time.perf_counter() - t0
        _note_picks(record, before, store)
        done += 1
        ms = figures.get("ms")
        progress(f"parity perf [{done}/{total}] {spec.name}[{case.id}] "
                 + (f"{ms:.4f} ms" if ms is not None else f"error: {figures['error'][:120]}"))
    return done


def _note_picks(record: Record, before: Mapping[str, int], store: pick_cache.PickStore) -> None:
    """perf.autotune: how many autotune picks this case reused from earlier runs and how many it tuned;
    perf.autotune_picks: the config each autotuned kernel of the case launched with."""
    delta = {k: v - before[k] for k, v in store.counts().items()}
    figures = record.get("perf")
    if not isinstance(figures, dict):
        return
    if any(delta.values()):
        figures["autotune"] = delta
    if store.picked:
        figures["autotune_picks"] = store.picks()


def declined_ops(records: Sequence[Record]) -> dict[str, Record]:
    """kernel -> one of its accuracy records, for ops whose library declined every accuracy case that ran."""
    by_kernel: dict[str, list[Record]] = {}
    for r in records:
        if r.get("suite") == "accuracy":
            by_kernel.setdefault(r["kernel"], []).append(r)
    return {k: rs[0] for k, rs in by_kernel.items() if all(r.get("declined") for r in rs)}


def with_roof(figures: dict[str, Any], spec: KernelSpec, case: Case, roof: roofline.Roof | None) -> dict[str, Any]:
    """An accuracy case's perf block with the measured-roof figures a perf case gets."""
    if roof is None or figures.get("ms") is None:
        return figures
    p = case.params
    figures.update(roofline.figures(spec.bytes(p) if spec.bytes else None, spec.flops(p) if spec.flops else None,
                                    figures["ms"], roof, p.get("dtype"), spec.bound), roof_measured=roof.as_dict())
    return figures


def _chosen_accuracy(cases: Mapping[tuple[str, str], tuple[KernelSpec, Case]], records: list[Record],
                     mode: str, skip: set[str]) -> list[tuple[KernelSpec, Case, Record]]:
    """The passing accuracy cases `mode` picks, for kernels that have no perf cases of their own."""
    by_name = {spec.name: spec for spec, _ in cases.values() if spec.timed}
    passed = {(r["kernel"], r["case"]): r for r in records
              if r.get("suite") == "accuracy" and r["status"] in (Status.PASSED, Status.XPASSED)
              and r["kernel"] in by_name and r["kernel"] not in skip}
    candidates = [(kernel, case_id, r["params"], perf.case_size(by_name[kernel].bytes, by_name[kernel].flops,
                                                                r["params"]))
                  for (kernel, case_id), r in passed.items()]
    return [(*cases[key], passed[key]) for key in perf.pick_cases(candidates, mode) if key in cases]


def _line(record: Record) -> str:
    p = record.get("perf") or {}
    if record["status"] in (Status.ERROR, Status.SKIPPED):
        return f"{record['status']}: {(record.get('reason') or '')[:120]}"
    parts = [f"{p['ms']:.4f} ms" if p.get("ms") is not None else "no time", f"check {record['status']}"]
    if p.get("pct_of_roofline") is not None:
        parts.append(f"{p['pct_of_roofline']:.0f}% of {p.get('roof_unit')}")
    return ", ".join(parts)


def preload_peers(specs: Sequence[KernelSpec]) -> threading.Thread | None:
    """Import the peers' libraries in a background thread of this process (the xdist controller, idle while its
    workers run the accuracy pass), so the perf pass does not wait on them: on the H200 a warm run's first fla
    peer took 7.4 s, its later ones 0.1 s. An import that fails is left for the perf pass to meet and report."""
    loads = {id(s.peer.preload): s.peer.preload for s in specs
             if s.timed and s.peer is not None and s.peer.preload is not None}
    if not loads:
        return None

    def load() -> None:
        for preload in loads.values():
            with contextlib.suppress(Exception):
                preload()

    thread = threading.Thread(target=load, name="parity-peer-preload", daemon=True)
    thread.start()
    return thread
