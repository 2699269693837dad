"""On a compile tier, a library launcher that raises before any compile gets its library's draft and repro.py.

Negative control: the same raise in parity's own kernels gets none (`repro_error` says why)."""

from __future__ import annotations

import pytest

from parity.backends import get_backend
from parity.driver import pipeline
from parity.results import empty_record
from parity.run.runner import build_inputs
from tests import planted_prelaunch as planted


def _attach(spec, results) -> dict:
    backend = get_backend("cuda-compile")
    case = spec.cases("quick")[0]
    record = empty_record(backend.name, "compile", spec.name, case.id, dict(case.params))
    record.update(suite="compile", status="error", reason="ForkedCaseError: TypeError: ... (in its forked child)")
    try:
        spec.launch(build_inputs(spec, case, 0), case.params)
    except TypeError as exc:  # as the tier saw it, in-process
        pipeline.judge_and_repro_prelaunch(record, spec, case, backend, build_inputs(spec, case, 0), results, 0, exc)
    return record


def test_a_library_raise_on_a_compile_tier_gets_the_library_draft(tmp_path):
    pytest.importorskip("triton.backends.nvidia")
    record = _attach(planted.in_library, tmp_path)
    assert record["finding_of"]["name"] == "planted_lib" and record.get("repro"), record
    folder = tmp_path / record["repro"]
    draft = (folder / "ISSUE.md").read_text()
    assert "planted_lib.py:" in draft and "cannot be interpreted as an integer" in draft
    assert (folder / "repro.py").is_file()


def test_the_same_raise_in_parity_s_own_kernels_gets_no_library_draft(tmp_path):
    pytest.importorskip("triton.backends.nvidia")
    record = _attach(planted.in_parity, tmp_path)
    assert "finding_of" not in record and not record.get("repro") and record["repro_error"]


def test_a_forked_child_that_crashed_is_not_re_run_in_the_worker(tmp_path):
    """Negative control: re-running a crash in-process would take the tier's worker down with it."""
    from parity.compile.fork import ForkedCaseError

    class Exploding:
        name = "cuda-compile"

        def compile_case(self, *args):
            raise AssertionError("re-ran a crashed case in-process")

    case = planted.in_library.cases("quick")[0]
    record = empty_record("cuda-compile", "compile", "x", case.id, dict(case.params))
    crashed = ForkedCaseError("x: SIGSEGV in its forked child")
    pipeline.judge_and_repro_prelaunch(record, planted.in_library, case, Exploding(), {}, tmp_path, 0, crashed)
    assert "crashed or hung" in record["repro_error"] and not record.get("repro")


def _recorded_raise(spec, results) -> dict:
    """As ascend-compile records a launcher's raise: a failing compile record that reached no stage, run
    through the compile repros (parity.repro.compile_repro.attach_all), whose re-run compiles nothing."""
    from parity.compile.tools import empty_compile
    from parity.run.compile_judge import compile_records

    backend, case = get_backend("cuda-compile"), spec.cases("quick")[0]
    comp = empty_compile("scale_kernel")
    comp.update(ok=False, message="TypeError: ...", launch_error="TypeError: ...")
    records = compile_records(backend.name, spec, case, [comp])
    pipeline.judge_and_repro_compiles(records, spec, case, backend, build_inputs(spec, case, 0), results)
    return records[0]


def test_a_recorded_raise_before_any_compile_goes_through_the_pre_launch_path(tmp_path):
    pytest.importorskip("triton.backends.nvidia")
    record = _recorded_raise(planted.in_library, tmp_path)
    assert record["finding_of"]["name"] == "planted_lib" and record.get("repro"), record
    assert "planted_lib.py:" in (tmp_path / record["repro"] / "ISSUE.md").read_text()
    assert "suites/test_compile.py::test_compile[" in (tmp_path / record["repro"] / "ISSUE.md").read_text()


def test_a_recorded_raise_in_parity_s_own_kernels_gets_no_library_draft(tmp_path):
    pytest.importorskip("triton.backends.nvidia")
    record = _recorded_raise(planted.in_parity, tmp_path)
    assert "finding_of" not in record and not record.get("repro") and "outside the library" in record["repro_error"]
