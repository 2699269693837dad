"""A failing compile record's walk through the engine's stages while its drafts are computed and written climbs back
up at most twice: the repro asks triage once for the record's Finding (parity.triage.drafts.finding_of), which asks
the fit advisor once for its words, and the drafts render the Finding. The walk is the sequence of stage floors
(tests/test_layout.py FLOORS, from fit up: the spec, the typed record, the seams, the compile tools and the markdown
every stage reads are leaves) of the parity frames that run, repeats merged; a climb is a step to a higher floor."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from parity.report import fit_md
from parity.repro import compile_repro
from tests import synthetic_records
from tests.test_layout import FLOORS, floor

LEAVES = FLOORS.index("fit")  # floors below it are leaves the walk does not count
FIT = {"searched": 4, "fitting": [{"config": {"BLOCK": 64}, "used": 1000, "of": 1572864}], "arch": "Ascend910B3",
       "unit": "bits", "smallest_need": None, "cap": "BLOCK <= 64 (it passed 256)", "search_s": 1.0,
       "proof": {"tier": "ascend-lowered", "case": "N=4", "why_not": None,
                 "kernel_change": "the kernel assumes one block covers the row: x",
                 "configs": [{"config": {"BLOCK": 64}, "computes": False, "err_ratio": 0.5}]}}


def climbs(walk: list[str]) -> list[tuple[str, str]]:
    """The steps of a walk of modules that go to a higher floor."""
    return [(a, b) for a, b in itertools.pairwise(walk) if floor(b) > floor(a)]


def walk_of(call: Callable[[], Any]) -> list[str]:
    """The parity modules whose frames run during `call`, one per change of stage floor (leaves skipped)."""
    seen: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        here: FrameType | None = frame if event == "call" else frame.f_back  # a return lands in its caller
        while here is not None and not str(here.f_globals.get("__name__", "")).startswith("parity"):
            here = here.f_back
        if here is None:
            return
        module = str(here.f_globals["__name__"])
        if floor(module) >= LEAVES and (not seen or floor(seen[-1]) != floor(module)):
            seen.append(module)

    call()  # once first: a first call imports modules and fills caches, which is not the walk
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def record(who: str, **extra: Any) -> dict[str, Any]:
    from parity.triage.owner import make_owner

    comp = {"ok": False, "error_kind": "ub_overflow", "stage_reached": "bishengir", "kernel": "k_kernel",
            "message": "error: ub overflow, requires 2000000 bits while 1572864 bits available",
            "ub_bits": 2000000, "ub_limit_bits": 1572864}
    r = synthetic_records.rec("ascend-compile", "compile", "k", "N=4;k,0,0", "failed", reason="ub overflow",
                              compile=comp, **extra)
    r["owner"] = make_owner(who, "kernel author" if who == "author" else who, "only ascend-compile fails")
    return r


def test_the_climb_counter_counts_a_planted_bouncing_walk() -> None:
    planted = ["parity.repro.run_repro", "parity.triage.drafts", "parity.repro.run_repro", "parity.report.fit_md",
               "parity.fit.words", "parity.report.fit_md", "parity.repro.author"]
    assert climbs(planted) == [("parity.triage.drafts", "parity.repro.run_repro"),
                               ("parity.fit.words", "parity.report.fit_md"),
                               ("parity.report.fit_md", "parity.repro.author")]


def test_the_tracer_sees_a_walk_that_bounces() -> None:
    # control: the report's fit section asks the fit advisor's words once per row and once per answer
    rows = [{**record("author", fit=FIT), "backend": b} for b in ("ascend-compile", "cuda-compile")]
    walk = walk_of(lambda: fit_md.fit_sections(rows, {}))
    assert len(climbs(walk)) >= 3, walk


@pytest.mark.parametrize(("who", "fit"), [("author", FIT), ("triton-ascend", None)])
def test_a_failing_compile_records_walk_climbs_back_up_at_most_twice(tmp_path: Path, who: str, fit: Any) -> None:
    failing = record(who, **({"fit": fit} if fit else {}))
    written: list[str] = []

    def write() -> None:
        compile_repro.write_repro(tmp_path, "print()\n", failing, {"target_arch": "Ascend910B3"},  # type: ignore[arg-type]
                                  "ascend-compile")
        written[:] = sorted(p.name for p in tmp_path.glob("*.md"))

    walk = walk_of(write)
    assert written == (["AUTHOR.md"] if who == "author" else ["ISSUE.md"])
    assert len(climbs(walk)) <= 2, walk
