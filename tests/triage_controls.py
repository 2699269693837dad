"""Planted raises at every stage after a case fails (shrink, capture, repro script, drafts, triage), run in
the tier's own Python: `python -m tests.triage_controls OUT TIER` prints one JSON list of what each record
kept. The raise is an MLIR-style compilation error, the kind that once escaped repro.attach."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from parity.driver import pipeline


class MLIRCompilationError(Exception):
    """Stands in for triton-ascend's MLIRCompilationError, which no fixed list of exception types names."""


RUN_STAGES = {"shrink": "parity.repro.run_repro.shrink_case", "capture": "parity.repro.run_repro.capture_case",
              "draft": "parity.repro.run_repro.write_drafts", "triage": "parity.triage.stage.decide"}
COMPILE_STAGES = {"describe": "parity.repro.compile_repro.describe_compiles",
                  "script": "parity.repro.compile_repro.render_script", "draft": "parity.repro.run_repro.write_drafts",
                  "triage": "parity.triage.stage.decide", "match": "parity.repro.compile_match.match"}


def _raiser(stage: str) -> Any:
    def planted(*args: Any, **kwargs: Any) -> Any:
        raise MLIRCompilationError(f"planted at {stage}: error: failed to legalize operation 'tt.load'")
    return planted


def _kept(stage: str, record: dict[str, Any]) -> dict[str, Any]:
    return {"stage": stage, **{k: record.get(k) for k in ("kernel", "case", "status", "repro_error", "owner", "repro")}}


def run_tier(out: Path, tier: str) -> list[dict[str, Any]]:
    from parity.backends import get_backend
    from parity.repro.shrink import ShrinkResult
    from parity.run.refcache import ReferenceCache
    from parity.run.runner import run_case
    from tests import planted_repro

    backend = get_backend(tier)
    if tier != "interpret":  # as tests/test_repro.py: the interpreter needs only TRITON_INTERPRET=1
        backend.prepare()
    if backend.unavailable():
        return [{"skip": backend.unavailable()}]
    spec = planted_repro.SPECS[0]
    case = next(c for c in spec.cases("quick") if c.params["dtype"] == "fp32")
    stages = dict(RUN_STAGES)
    stages["extras"] = "parity.repro.run_repro.write_extras"  # ascend-lowered's lowered/, nothing elsewhere
    kept = []
    for stage, target in stages.items():
        cache = ReferenceCache(enabled=False)
        record, _ = run_case(spec, case, backend, seed=0, cache=cache)
        with pytest.MonkeyPatch.context() as mp:
            if stage != "shrink":  # the case as it is: shrinking is its own stage
                mp.setattr("parity.repro.run_repro.shrink_case",
                           lambda spec, case, *a, **k: ShrinkResult(dict(case.params), dict(case.params), 0))
            mp.setattr(target, _raiser(stage))
            pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=out / stage)
        kept.append(_kept(stage, record))
    return kept


def compile_tier(out: Path, tier: str) -> list[dict[str, Any]]:
    from parity.backends import get_backend
    from parity.run.compile_judge import compile_records
    from parity.run.runner import build_inputs
    from tests import compile_repro_controls as controls

    backend = get_backend(tier)
    backend.prepare()
    if backend.unavailable():
        return [{"skip": backend.unavailable()}]
    spec = controls.CUDA_SPECS[0] if tier == "cuda-compile" else controls.ascend_specs()[0]
    case = spec.cases("quick")[0]
    inputs = build_inputs(spec, case, 0)
    kept = []
    for stage, target in COMPILE_STAGES.items():
        records = compile_records(backend.name, spec, case, backend.compile_case(spec, case, inputs))
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(target, _raiser(stage))
            pipeline.judge_and_repro_compiles(records, spec, case, backend, inputs, out / stage)
        kept += [_kept(stage, r) for r in records]
    return kept


def generate(out: Path, tier: str) -> list[dict[str, Any]]:
    return compile_tier(out, tier) if tier.endswith("-compile") else run_tier(out, tier)


if __name__ == "__main__":
    from parity.results.files import plain  # the results edge: typed values (an Owner) as JSON

    print(json.dumps(plain(generate(Path(sys.argv[1]), sys.argv[2])), default=str))
