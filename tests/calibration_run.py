"""One tier of the calibration: `python -m tests.calibration_run OUT TIER [SOURCE]` runs the specs of SOURCE
(default tests.calibration_kernels) there as the tier's suite would (run tiers: run_case and the repro; compile
tiers: the compiles and their repros), into OUT/<TIER>/results.jsonl, reading the tiers already in OUT as evidence."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from parity.driver import pipeline


def run(out: Path, tier: str, source: str = "tests.calibration_kernels") -> list[dict[str, Any]]:
    from parity.backends import get_backend
    from parity.errors import error_text
    from parity.repro import run_repro
    from parity.results import empty_record, write_results
    from parity.run.compile_judge import compile_records
    from parity.run.refcache import ReferenceCache
    from parity.run.runner import build_inputs, run_case

    backend = get_backend(tier)
    if tier != "interpret":
        backend.prepare()
    if backend.unavailable():
        return [{"skip": backend.unavailable()}]
    import importlib

    calibration_kernels = importlib.import_module(source)  # the spec source: a module with specs(folder)
    results = out / tier
    results.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(run_repro.SHRINK_SECONDS, "failed", 5.0)  # the owner is what is measured, not the shrink
        for spec in calibration_kernels.specs(out / f".kernels-{tier}"):
            case = spec.cases("quick")[0]
            if backend.mode == "compile":
                inputs = build_inputs(spec, case, 0)
                try:
                    recs = compile_records(backend.name, spec, case, backend.compile_case(spec, case, inputs))
                except Exception as exc:  # the launcher raised outside any compile
                    rec = empty_record(backend.name, "compile", spec.name, case.id, dict(case.params))
                    rec.update(suite="compile", status="error", reason=error_text(exc))
                    recs = [rec]
                pipeline.judge_and_repro_compiles(recs, spec, case, backend, inputs, results)  # each triaged once
            else:
                cache = ReferenceCache(enabled=False)
                rec, _ = run_case(spec, case, backend, seed=0, cache=cache)
                pipeline.judge_and_repro(rec, spec, case, backend, seed=0, cache=cache, results_dir=results)
                recs = [rec]
            records += recs
    write_results(results, records)
    return [{k: r.get(k) for k in ("kernel", "case", "backend", "status", "reason", "owner", "repro", "repro_error")}
            for r in records]


if __name__ == "__main__":
    from parity.results.files import plain  # the results edge: typed values (an Owner) as JSON

    print(json.dumps(plain(run(Path(sys.argv[1]), sys.argv[2], *sys.argv[3:4])), default=str))
