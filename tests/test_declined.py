"""A library's own guard for an environment (KernelSpec.declines) skips the case with the library's reason.

Planted specs whose launcher raises like fla 0.6.0's Hopper guard: the matching error becomes a skip
that names the library, its reason and its link, with no repro and no perf timing; the negative
control, an error the pattern does not match, stays an error and still gets its repro attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest
import torch

from parity import DeclinedEnvironment, KernelSpec, SpecError
from parity.backends import get_backend
from parity.cases import by_level, product
from parity.driver import pipeline
from parity.perf import stage as perf_pass
from parity.report.backend_md import render_report
from parity.report.portability import cell
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests.test_perf_pass import ROOF, FakeDevice

GUARD = DeclinedEnvironment(library="somelib", pattern=r"produces incorrect results for gated \w+",
                            reason="a compiler bug on this GPU", link="https://example.org/somelib/issues/640")
GUARD_TEXT = "Triton >= 3.4.0 and < 3.7.1 on Hopper GPUs produces incorrect results for gated chunk_bwd (see #640)"


def planted(message: str, launches: list[int] | None = None, **fields: Any) -> KernelSpec:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        if launches is not None:
            launches.append(1)
        raise RuntimeError(message)

    return KernelSpec(name="guarded", family="planted", kernel=object(), launch=launch,
                      reference=lambda inputs, p: {"out": inputs["x"]},
                      cases=by_level(product(N=[64], dtype=["fp32"])),
                      make_inputs=lambda p, gen: {"x": torch.randn(p["N"], generator=gen)},
                      perf_cases=tuple(product(N=[4096], dtype=["fp32"])), declines=(GUARD,), **fields)


def run_one(spec: KernelSpec, tmp_path: Any) -> dict[str, Any]:
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    case = spec.cases("quick")[0]
    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
    pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=tmp_path)
    return record


def test_the_library_guard_is_a_skip_with_its_reason_and_link_and_no_repro(tmp_path):
    record = run_one(planted(GUARD_TEXT), tmp_path)
    assert record["status"] == "skipped"
    assert record["reason"].startswith("declined by somelib: a compiler bug on this GPU "
                                       "(https://example.org/somelib/issues/640); it raised: RuntimeError: Triton")
    assert record["declined"]["link"] == GUARD.link
    assert record["repro"] is None and "shrink" not in record and "repro_s" not in record["timing"]
    assert not (tmp_path / "repros").exists()
    assert cell([record]).startswith("declined by somelib: a compiler bug on this GPU (https://example.org")
    report = render_report([record], {"backend": "interpret"})
    assert "## Environments the libraries decline" in report and GUARD.link in report


def test_negative_control_an_error_the_pattern_does_not_match_stays_an_error(tmp_path):
    record = run_one(planted("RuntimeError: something else broke in chunk_bwd"), tmp_path)
    assert record["status"] == "error" and "declined" not in record
    assert "repro_s" in record["timing"]  # it went through the repro path, as any error does


def test_the_perf_pass_skips_a_declined_op_without_launching_it():
    launches: list[int] = []
    spec = planted(GUARD_TEXT, launches)
    accuracy = {"suite": "accuracy", "kernel": spec.name, "case": "N=64,dtype=fp32", "status": "skipped",
                "reason": "declined by somelib: ...", "declined": {"library": "somelib", "reason": GUARD.reason,
                                                                    "link": GUARD.link}}
    records = [accuracy]
    perf_pass.run({}, records, FakeDevice([]), seed=0, mode="largest", specs=[spec], use_perf_cases=True,
                  progress=lambda line: None, roof_probe=lambda b: ROOF)
    assert not launches
    perf = records[-1]
    assert perf["suite"] == "perf" and perf["status"] == "skipped" and perf["reason"] == accuracy["reason"]


def test_a_perf_case_that_hits_the_guard_itself_is_a_skip_too():
    records: list[dict[str, Any]] = []  # no accuracy record declined: the perf case runs into the guard
    perf_pass.run({}, records, FakeDevice([]), seed=0, mode="largest", specs=[planted(GUARD_TEXT)],
                  use_perf_cases=True, progress=lambda line: None, roof_probe=lambda b: ROOF)
    assert records[-1]["status"] == "skipped" and records[-1]["reason"].startswith("declined by somelib")


@pytest.mark.parametrize(("guard", "message"), [
    (DeclinedEnvironment(library="somelib", pattern="x", reason="why", link=""), "public link"),
    (DeclinedEnvironment(library="somelib", pattern="(", reason="why", link="https://x"), "regular expression"),
])
def test_a_malformed_declined_environment_is_a_spec_error(guard, message):
    with pytest.raises(SpecError, match=message):
        replace(planted(GUARD_TEXT), declines=(guard,))


def _library_guard() -> None:
    raise RuntimeError("this Triton miscompiles me on this GPU; upgrade it")


def test_raised_by_launcher_tells_a_library_guard_from_a_passed_on_compile_error():
    """cuda-compile keeps a launcher's own raise even when a config failed before it (fla's Hopper guard
    was hidden as a pass); a compile error the launcher only passed on is still the logged finding."""
    from parity.compile.keep_going import raised_by_launcher

    try:
        _library_guard()
    except RuntimeError as exc:
        assert raised_by_launcher(exc)
    import triton

    try:
        triton.cdiv("T", 64)  # raises inside Triton's own code, as a passed-on compile error does
    except TypeError as exc:
        assert not raised_by_launcher(exc)
